// The function view's leaves once there are more than a few: the input and output tables
// (leaf_table.ts) and ONE card, the picked leaf's controls and device grid with the mesh, instead
// of a card and a mesh per leaf (a training step's 10 parameters on 256 positions drew ten 256-cell
// meshes). The card is made again when another leaf is picked, and updated in place otherwise.
import type { Collective, LeafInfo, Stats, TraceLeaf, TraceMode, TraceOptions, TraceState } from "../wire";
import type { GroupPaint } from "../cost/groups";
import { el as mk } from "../shared/dom";
import { LeafCard } from "./leaf";
import { renderLeafTable, type LeafRef } from "./leaf_table";

/** A function with at most this many leaves (inputs and outputs together) keeps a card per leaf. */
export const CARDS_UP_TO = 4;

export interface CompactInput {
  mode: TraceMode;
  inInfos: LeafInfo[];
  outInfos: LeafInfo[];
  inLeaves: TraceLeaf[];
  outLeaves: TraceLeaf[];
  inStats: (Stats | null)[];
  outStats: (Stats | null)[];
  collectives: Collective[];
  state: TraceState;
  options: TraceOptions;
  request: (s: TraceState) => void;
}

export class CompactLeaves {
  private picked: LeafRef = { side: "in", index: 0 };
  private card: LeafCard | null = null;
  private cardOf = "";
  private tablesOf: unknown[] = [];
  private last: CompactInput | null = null;

  constructor(
    private readonly doc: Document,
    private readonly hosts: { inputs: HTMLElement; outputs: HTMLElement; picked: HTMLElement },
    private readonly onPicked: () => void,
  ) {}

  /** The picked leaf (tests). */
  get pickedLeaf(): LeafRef {
    return this.picked;
  }

  /** The one card (tests). */
  get pickedCard(): LeafCard | null {
    return this.card;
  }

  /** Pick a leaf: its row is marked and its card drawn. */
  pick(r: LeafRef): void {
    this.picked = r;
    if (this.last) this.update(this.last); // at once: the click's grid is drawn in this task
    this.onPicked();
  }

  update(inp: CompactInput): void {
    this.last = inp;
    const n = this.picked.side === "in" ? inp.inInfos.length : inp.outInfos.length;
    if (this.picked.index >= n) this.picked = { side: inp.inInfos.length ? "in" : "out", index: 0 };
    this.renderTables(inp);
    this.renderCard(inp);
  }

  /** The tables, drawn again only when what they show changed. */
  private renderTables(inp: CompactInput): void {
    const sig = [inp.inInfos, inp.outInfos, inp.inLeaves, inp.outLeaves, inp.collectives, JSON.stringify(inp.state.in_specs), this.picked];
    if (sig.length === this.tablesOf.length && sig.every((v, i) => v === this.tablesOf[i])) return;
    this.tablesOf = sig;
    const onPick = (r: LeafRef) => this.pick(r);
    const side = (s: "in" | "out", infos: LeafInfo[], leaves: TraceLeaf[], host: HTMLElement, empty: string) => {
      if (!infos.length) host.replaceChildren(mk(this.doc, "div", "sw-muted", empty));
      else host.replaceChildren(renderLeafTable(this.doc, { side: s, infos, leaves, collectives: inp.collectives, state: inp.state, selected: this.picked }, onPick));
    };
    side("in", inp.inInfos, inp.inLeaves, this.hosts.inputs, "no array inputs");
    side("out", inp.outInfos, inp.outLeaves, this.hosts.outputs, "the outputs appear once a layout compiles");
  }

  private renderCard(inp: CompactInput): void {
    const { side, index } = this.picked;
    const infos = side === "in" ? inp.inInfos : inp.outInfos;
    const info = infos[index];
    if (!info) {
      this.dispose();
      this.hosts.picked.replaceChildren();
      return;
    }
    const key = `${side}:${index}`;
    if (!this.card || key !== this.cardOf) {
      this.card?.dispose();
      this.card = new LeafCard(this.doc);
      this.cardOf = key;
      this.hosts.picked.replaceChildren(this.card.el);
    }
    const leaves = side === "in" ? inp.inLeaves : inp.outLeaves;
    const stats = side === "in" ? inp.inStats : inp.outStats;
    this.card.update({
      side,
      index,
      mode: inp.mode,
      info,
      leaf: leaves[index] ?? null,
      stats: stats[index] ?? null,
      state: inp.state,
      options: inp.options,
      request: inp.request,
    });
  }

  lightGroups(p: GroupPaint | null): void {
    this.card?.lightGroups(p);
  }

  dispose(): void {
    this.card?.dispose();
    this.card = null;
    this.cardOf = "";
  }
}
