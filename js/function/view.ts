// The function view, ShardView(f, *args): what XLA does with a layout of f's inputs. Header
// (function, mode, compile / run time, flops), the shared mesh controls, a card per input and per
// output (each with the array view's own device grid), the collectives XLA inserted, the
// sharding constraints f pins, and the memory of one device. Wire format: wire/function.ts.
import type { AnyModel } from "@anywidget/types";
import type {
  FunctionModel,
  LeafInfo,
  Stats,
  Trace,
  TraceOptions,
  TraceRequestMsg,
  TraceState,
} from "../wire";
import { BaseView, published } from "../shared/view";
import { injectFunctionStyles } from "../shared/trace_styles";
import { FunctionMeshControls } from "./controls";
import { LeafCard } from "./leaf";
import { cloneTraceState, normalizeTraceState } from "./state";
import { collectivesSummary, renderConstraints, renderMemory } from "../shared/collectives";
import { type Section, renderComm } from "./comm";
import { JaxprPanel } from "./jaxpr";
import { formatCount, formatMs, plural } from "../shared/text";
import { CopyButton } from "../shared/copy";
import { el as mk } from "../shared/dom";
import { injectCostStyles } from "../cost/styles";
import { EstimateSection } from "./estimate";
import { collectivePaint } from "../cost/groups";
import { DevicesPicture } from "./devices";
import { CARDS_UP_TO, CompactLeaves } from "./compact";
import { renderPeak } from "./memory_panel";
import { WhyPanel, highlightLeaves, isWhy } from "./why";
import { compileWithControl } from "./compile_with";
import { plannedBadge, sectionTitles } from "./titles";
import { SearchPanel } from "../search/panel";

const STATE_TRAITS = ["mesh_shape", "axis_names", "axis_types", "in_specs", "out_specs"] as const;

const MODE_NOTE = {
  jit: "jit: XLA splits the whole-array program over the devices and adds the communication it needs.",
  shard_map:
    "shard_map: the body runs once per device on its local block; devices talk only where the body says so (psum, all_gather, …).",
  pmap: "pmap: the body runs once per device on one slice of the mapped dimension; pmap fixes the mesh and the layout.",
};

/** Leaf cards drawn per side at most (the kernel sends geometry for as many: wire MAX_LEAVES). */
const MAX_CARDS = 64;

let sectionCount = 0;

/** The options once published (Python's Dict traits start as {}). */
function publishedOptions(o: TraceOptions | undefined): TraceOptions | null {
  return o && typeof o === "object" && Array.isArray(o.inputs) ? o : null;
}


export class FunctionView extends BaseView<FunctionModel, TraceState, TraceRequestMsg> {
  private titleEl: HTMLElement;
  private metricsEl: HTMLElement;
  private modeNoteEl: HTMLElement;
  private runNoteEl: HTMLElement;
  private busyEl: HTMLElement;
  private errorEl: HTMLElement;
  private copyButton: CopyButton;
  private meshControls: FunctionMeshControls;
  private inputs: Section;
  private outputs: Section;
  private comm: Section;
  private est: Section;
  private estimate: EstimateSection;
  private devices: DevicesPicture;
  private cons: Section;
  private mem: Section;
  private jaxpr: JaxprPanel;
  private why: WhyPanel;
  private found: Section;
  private search: SearchPanel;
  private whyKey = -1;
  private inCards: LeafCard[] = [];
  private outCards: LeafCard[] = [];
  /** More than CARDS_UP_TO leaves: tables and one card (the picked leaf's). */
  private picked: Section;
  private compact: CompactLeaves;
  private isCompact = false;
  /** The last trace with compiled leaves: shown while a newer one failed. */
  private good: Trace | null = null;
  private tablesOf: Trace | null = null;
  /** The control the user changed last (its data-key), and the state last asked for with it. */
  private changedKey = "";
  private asked: { state: TraceState; key: string } | null = null;
  /** A request the kernel refused (a compile error): the controls keep showing its choice,
   *  marked, until the next request or a good trace, rather than snapping back. */
  private failed: { state: TraceState; key: string; error: string } | null = null;

  constructor(model: AnyModel<FunctionModel>, el: HTMLElement) {
    super(model, el, "sw-trace", {
      clone: cloneTraceState,
      build: (seq, state) => ({ type: "trace_request", seq, state }),
    });
    injectFunctionStyles(el);
    injectCostStyles(el);
    const doc = this.doc;

    const header = mk(doc, "header", "sw-header sw-tr-header");
    const top = mk(doc, "div", "sw-header-top");
    this.titleEl = mk(doc, "div", "sw-header-left sw-tr-title");
    this.busyEl = mk(doc, "span", "sw-busy");
    this.busyEl.setAttribute("role", "status");
    this.busyEl.hidden = true;
    this.busyEl.append(mk(doc, "span", "shardwidget-spinner"), doc.createTextNode("compiling…"));
    (this.busyEl.firstChild as HTMLElement).setAttribute("aria-hidden", "true");
    this.copyButton = new CopyButton(doc);
    const right = mk(doc, "div", "sw-header-right");
    right.append(this.busyEl, this.copyButton.el, this.picture.el);
    top.append(this.titleEl, right);
    this.metricsEl = mk(doc, "div", "sw-summary sw-tr-metrics");
    this.modeNoteEl = mk(doc, "div", "sw-hint sw-tr-modenote");
    this.runNoteEl = mk(doc, "div", "sw-note");
    this.runNoteEl.hidden = true;
    this.errorEl = mk(doc, "div", "sw-error sw-tr-error");
    this.errorEl.setAttribute("role", "alert");
    this.errorEl.hidden = true;
    header.append(top, this.metricsEl, this.modeNoteEl, this.runNoteEl);

    this.meshControls = new FunctionMeshControls(
      doc,
      (s) => this.request(s),
      (by) => this.model.send({ type: "history", step: by }),
    );
    this.inputs = this.section("Inputs");
    this.outputs = this.section("Outputs");
    this.picked = this.section("Device grid");
    this.picked.el.hidden = true;
    this.compact = new CompactLeaves(doc, {
      inputs: this.inputs.body,
      outputs: this.outputs.body,
      picked: this.picked.body,
    }, () => this.schedule());
    this.comm = this.section("Communication");
    this.est = this.section("Estimated time");
    this.estimate = new EstimateSection(
      doc,
      this.est,
      (name) => {
        this.model.set("hardware", name);
        this.model.save_changes();
      },
      (i) => this.lightCollective(i),
    );
    this.devices = new DevicesPicture(doc);
    this.cons = this.section("Sharding constraints in the function");
    this.mem = this.section("Memory and compute per device");
    this.jaxpr = new JaxprPanel(doc);
    this.why = new WhyPanel(
      doc,
      (msg) => this.model.send(msg),
      (ins, outs) => highlightLeaves(this.root, ins, outs),
    );
    this.on("msg:custom", (msg) => isWhy(msg) && this.why.receive(msg));
    this.found = this.section("Find a layout");
    this.search = new SearchPanel(doc, (msg) => this.model.send(msg));
    this.found.body.append(this.search.el);
    this.root.append(
      header,
      this.meshControls.el,
      // Below the controls: an error appearing must not move them under the pointer.
      this.errorEl,
      this.inputs.el,
      this.outputs.el,
      this.picked.el,
      this.comm.el,
      this.est.el,
      this.cons.el,
      this.mem.el,
      this.found.el,
      this.jaxpr.el,
    );
    el.append(this.root);

    // Which control a request comes from (capture: selects' change events do not bubble here).
    this.root.addEventListener(
      "change",
      (e) => (this.changedKey = (e.target as HTMLElement | null)?.dataset?.key ?? ""),
      true,
    );
    this.onChange(["_trace"], () => {
      if (this.trace?.status === "ok") {
        this.lastResultError = "";
        this.failed = null;
      }
      this.schedule();
    });
    this.onChange(
      ["_trace_stats", "_trace_options", "error", "busy", "_estimate", "_search", "hardware", "_hardware_presets", "_history", ...STATE_TRAITS],
      () => this.schedule(),
    );
    this.flush();
  }

  private section(title: string): Section {
    const doc = this.doc;
    const el = mk(doc, "section", "sw-tr-section");
    const h = mk(doc, "h3", "sw-tr-h");
    h.id = `sw-tr-h-${++sectionCount}`;
    const t = mk(doc, "span", "", title);
    const note = mk(doc, "span", "sw-tr-h-note");
    h.append(t, note);
    el.setAttribute("aria-labelledby", h.id);
    const body = mk(doc, "div", "sw-tr-body");
    el.append(h, body);
    return { el, title: t, note, body };
  }

  // ---- model access --------------------------------------------------------------------------

  get options(): TraceOptions | null {
    return publishedOptions(this.model.get("_trace_options"));
  }

  /** The trace received last (may be an error with no leaves). */
  get trace(): Trace | null {
    return published(this.model.get("_trace"));
  }

  /** The trace whose leaves are drawn: the newest with compiled leaves. */
  get shown(): Trace | null {
    return this.good ?? this.trace;
  }

  traitState(): TraceState {
    const m = this.model;
    return normalizeTraceState(
      {
        mesh_shape: m.get("mesh_shape") ?? [],
        axis_names: m.get("axis_names") ?? [],
        axis_types: m.get("axis_types") ?? [],
        in_specs: m.get("in_specs") ?? [],
        out_specs: m.get("out_specs") ?? [],
      },
      this.options,
    );
  }

  /** What the controls show: the newest state asked for, else the one that just failed, else
   *  the traits. */
  controlState(): TraceState {
    return this.queue.optimistic ?? this.failed?.state ?? this.traitState();
  }

  /** The error banner's text ("" when none). */
  errorText(): string {
    const t = this.trace;
    const parts = [
      this.model.get("error") || "",
      this.lastResultError,
      t && t.status === "error" ? t.message : "",
    ].filter(Boolean);
    return [...new Set(parts)].join("\n");
  }

  // ---- rendering -----------------------------------------------------------------------------

  protected requestsChanged(result: boolean): void {
    // A refused request with nothing newer asked: keep its choice on show, marked.
    if (result && this.lastResultError && this.asked && this.queue.optimistic === null)
      this.failed = { ...this.asked, error: this.lastResultError };
    this.schedule();
  }

  protected render(): void {
    const t = this.trace;
    if (t && (t.inputs.length > 0 || t.outputs.length > 0)) this.good = t;
    const options = this.options;
    this.renderHeader(options);
    if (!options) {
      for (const c of [...this.inCards, ...this.outCards]) c.dispose();
      this.inCards = [];
      this.outCards = [];
      this.meshControls.el.hidden = true;
      this.inputs.body.replaceChildren(mk(this.doc, "div", "sw-empty", "waiting for the function…"));
      return;
    }
    this.meshControls.el.hidden = false;
    const pending = this.queue.optimistic !== null;
    const state = this.controlState();
    this.meshControls.update({ state, options, pending, history: this.model.get("_history") });
    this.renderLeaves(options, state);
    this.markFailed();
    const shown = this.shown;
    if (shown !== this.tablesOf) {
      this.tablesOf = shown;
      this.renderTables(shown);
    } else if (shown) this.devices.setOnCard(this.cardShowsMesh(shown)); // another leaf picked
    this.estimate.update({
      shown,
      estimate: this.model.get("_estimate"),
      hardware: this.model.get("hardware") ?? "",
      presets: this.model.get("_hardware_presets") ?? [],
      disabled: options.static ? "a saved page: the estimate is for the hardware it was saved with" : "",
    });
    this.found.el.hidden = !this.search.update(this.model.get("_search"), this.root, !!options.static);
  }

  /** Whether a leaf card shows the mesh (then lit there, not drawn again in Communication). */
  private cardShowsMesh(shown: Trace): boolean {
    if (this.isCompact) {
      const p = this.compact.pickedLeaf;
      return !!(p.side === "in" ? shown.inputs : shown.outputs)[p.index]?.layout.mesh;
    }
    return [...shown.inputs.slice(0, MAX_CARDS), ...shown.outputs.slice(0, MAX_CARDS)].some((l) => !!l.layout.mesh);
  }

  /** Light collective `i`'s device groups on the device picture and on every card's mesh, or
   *  stop (null). */
  lightCollective(i: number | null): void {
    const shown = this.shown;
    const c = i === null ? undefined : shown?.collectives[i];
    const p = c ? collectivePaint(c, shown?.group_sets) : null;
    this.devices.light(p, c);
    for (const card of [...this.inCards, ...this.outCards]) card.lightGroups(p);
    this.compact.lightGroups(p);
  }

  private renderHeader(options: TraceOptions | null): void {
    const doc = this.doc;
    const shown = this.shown;
    this.picture.setAvailable(!!shown && this.model.get("_history") !== undefined);
    const mode = options?.mode ?? shown?.mode ?? (this.model.get("mode") || "jit");
    const fn = mk(doc, "code", "sw-typeof sw-tr-fn", options?.fn_name || "function");
    fn.title = "the function";
    const modeTag = mk(doc, "span", "sw-tag sw-tag-accent sw-tr-mode", mode);
    modeTag.title =
      mode === "shard_map"
        ? "jax.shard_map over the mesh"
        : mode === "pmap"
          ? "jax.pmap: jit of shard_map over pmap's own mesh"
          : "jax.jit with shardings";
    const kids: HTMLElement[] = [fn, modeTag];
    for (const s of options?.static_args ?? []) {
      const tag = mk(doc, "span", "sw-tag sw-tag-code", s);
      tag.title = "static argument";
      kids.push(tag);
    }
    if (options?.planned) kids.push(plannedBadge(doc, options.planned, this.model.get("hardware") ?? ""));
    if (options?.compile_with) {
      const send = (c: string) => this.model.send({ type: "compile_with", compiler: c });
      kids.push(compileWithControl(doc, options.compile_with, send, options.static ?? ""));
    }
    this.titleEl.replaceChildren(...kids);
    this.modeNoteEl.textContent = MODE_NOTE[mode as keyof typeof MODE_NOTE] ?? "";

    const metrics: string[] = [];
    if (shown && (shown.inputs.length || shown.outputs.length)) {
      metrics.push(shown.cached ? "compile: cached" : `compiled in ${formatMs(shown.compile_ms)}`);
      metrics.push(shown.ran ? `ran in ${formatMs(shown.run_ms)}` : "not run");
      if (shown.flops !== null) metrics.push(`${formatCount(shown.flops, "FLOP")} per device`);
      metrics.push(collectivesSummary(shown.collectives));
    }
    if (options) {
      const st = this.traitState();
      const axes = st.axis_names.map((n, i) => `${n}=${st.mesh_shape[i]}`).join(" × ");
      const used = st.mesh_shape.reduce((a, b) => a * b, 1);
      const devices =
        used < options.n_devices
          ? `${used} of ${plural(options.n_devices, "device")}`
          : plural(options.n_devices, "device");
      metrics.push(`mesh ${axes} · ${devices} (${options.platform})`);
    }
    this.metricsEl.textContent = metrics.join(" · ");
    this.runNoteEl.textContent = options?.run_disabled ?? "";
    this.runNoteEl.hidden = !options?.run_disabled;

    this.copyButton.set(shown?.code ?? "");
    this.busyEl.hidden = !this.model.get("busy");
    const err = this.errorText();
    // A refused request (or a failed compile) leaves the last good layout on show; a run that
    // failed after compiling shows its own layout.
    const stale =
      !!this.good &&
      (this.good !== this.trace || !!this.model.get("error") || !!this.lastResultError);
    this.errorEl.textContent = err
      ? stale
        ? `${err}\n(The last layout that compiled is shown below.)`
        : err
      : "";
    this.errorEl.hidden = !err;
  }

  /** Cards per input and output: rebuilt when the number of leaves changes, else updated. */
  private renderLeaves(options: TraceOptions, state: TraceState): void {
    const shown = this.shown;
    const mode = options.mode;
    const statsRaw = published(this.model.get("_trace_stats"));
    const current = statsRaw && shown && statsRaw.key === shown.key ? statsRaw : null;
    const stats = current?.outputs ?? [];
    const inStats = current?.inputs ?? [];
    const request = (s: TraceState) => this.request(s);

    const allIn: LeafInfo[] = options.inputs.length ? options.inputs : shown?.inputs ?? [];
    const inInfos = allIn.slice(0, MAX_CARDS);
    const allOut = Math.max(
      options.outputs.length,
      (shown?.outputs.length ?? 0) + (shown?.left_out?.outputs ?? 0),
    );
    const nOut = Math.min(allOut, MAX_CARDS);
    const outInfos: LeafInfo[] = Array.from(
      { length: nOut },
      (_, i) => shown?.outputs[i] ?? options.outputs[i],
    );
    this.setCompact(inInfos.length + nOut > CARDS_UP_TO);
    if (this.isCompact) {
      this.compact.update({
        mode,
        inInfos,
        outInfos,
        inLeaves: shown?.inputs ?? [],
        outLeaves: shown?.outputs ?? [],
        inStats,
        outStats: stats as (Stats | null)[],
        collectives: shown?.collectives ?? [],
        state,
        options,
        request,
      });
      const p = this.compact.pickedLeaf;
      const info = (p.side === "in" ? inInfos : outInfos)[p.index];
      this.picked.title.textContent = info ? `Device grid of ${p.side === "in" ? "input" : "output"} ${info.path}` : "Device grid";
      this.picked.note.textContent = "click a row above for another leaf's";
    } else this.renderCards(mode, inInfos, outInfos, inStats, stats, state, options, request);
    sectionTitles(this.inputs, this.outputs, mode, [allIn.length, inInfos.length], [allOut, nOut]);
  }

  /** Cards, or tables with one card: the other form's DOM is dropped. */
  private setCompact(on: boolean): void {
    if (on === this.isCompact) return;
    this.isCompact = on;
    this.picked.el.hidden = !on;
    if (on) {
      for (const c of [...this.inCards, ...this.outCards]) c.dispose();
      this.inCards = [];
      this.outCards = [];
    } else {
      this.compact.dispose();
      this.inputs.body.replaceChildren();
      this.outputs.body.replaceChildren();
    }
  }

  private renderCards(
    mode: TraceOptions["mode"],
    inInfos: LeafInfo[],
    outInfos: LeafInfo[],
    inStats: Stats[],
    stats: Stats[],
    state: TraceState,
    options: TraceOptions,
    request: (s: TraceState) => void,
  ): void {
    const shown = this.shown;
    this.inCards = this.syncCards(this.inCards, inInfos.length, this.inputs.body, "no array inputs");
    inInfos.forEach((info, i) =>
      this.inCards[i].update({
        side: "in",
        index: i,
        mode,
        info,
        leaf: shown?.inputs[i] ?? null,
        stats: inStats[i] ?? null,
        state,
        options,
        request,
      }),
    );
    const nOut = outInfos.length;
    this.outCards = this.syncCards(
      this.outCards,
      nOut,
      this.outputs.body,
      this.good ? "no array outputs" : "the outputs appear once a layout compiles",
    );
    outInfos.forEach((info, i) =>
      this.outCards[i].update({
        side: "out",
        index: i,
        mode,
        info,
        leaf: shown?.outputs[i] ?? null,
        stats: (stats[i] as Stats | undefined) ?? null,
        state,
        options,
        request,
      }),
    );
  }

  /** The cards for n leaves: the same ones while n is unchanged (updated in place), else new
   *  ones (the old ones and their array views disposed). */
  private syncCards(cards: LeafCard[], n: number, host: HTMLElement, empty: string): LeafCard[] {
    if (cards.length === n && n > 0) return cards;
    for (const c of cards) c.dispose();
    const out = Array.from({ length: n }, () => new LeafCard(this.doc));
    if (n === 0) host.replaceChildren(mk(this.doc, "div", "sw-muted", empty));
    else host.replaceChildren(...out.map((c) => c.el));
    return out;
  }

  private renderTables(shown: Trace | null): void {
    const doc = this.doc;
    const compiled = !!shown && (shown.inputs.length > 0 || shown.outputs.length > 0);
    for (const s of [this.comm, this.cons, this.mem]) s.el.hidden = !compiled;
    this.jaxpr.update(compiled ? shown : null);
    if (!shown || !compiled) return;
    if (shown.key !== this.whyKey) this.why.reset(); // a new layout: the old answer no longer holds
    this.whyKey = shown.key;
    renderComm(doc, this.comm, shown, {
      why: this.why,
      devices: this.devices,
      light: (i) => this.lightCollective(i),
      nDevices: this.options?.n_devices,
      meshOnCard: this.cardShowsMesh(shown),
      ask: this.options?.static ? undefined : (i) => this.why.ask(i), // (a saved page: no kernel)
    });
    this.cons.el.hidden = shown.constraints.length === 0;
    const consCut = shown.left_out?.constraints ?? 0;
    this.cons.note.textContent =
      "with_sharding_constraint / reshard" + (consCut > 0 ? ` (${consCut} more not listed)` : "");
    this.cons.body.replaceChildren(renderConstraints(doc, shown.constraints));
    this.mem.note.textContent = "from XLA's analysis of the compiled program";
    this.mem.body.replaceChildren(renderMemory(doc, shown.memory, shown.flops), renderPeak(doc, shown, this.root));
  }

  /** Mark the control whose choice failed to compile: red, with the error as its tooltip and a
   *  short note beside it (the banner above has the whole message). */
  private markFailed(): void {
    for (const e of this.root.querySelectorAll<HTMLElement>(".sw-failed")) {
      e.classList.remove("sw-failed");
      e.removeAttribute("aria-invalid");
      e.title = e.dataset.titleBefore ?? "";
      delete e.dataset.titleBefore;
    }
    for (const e of this.root.querySelectorAll(".sw-failed-note")) e.remove();
    const f = this.failed;
    if (!f || !f.key || this.queue.optimistic !== null) return;
    const c = this.root.querySelector<HTMLElement>(`[data-key="${CSS.escape(f.key)}"]`);
    if (!c) return;
    c.dataset.titleBefore = c.title;
    c.classList.add("sw-failed");
    c.setAttribute("aria-invalid", "true");
    c.title = `this choice did not compile: ${f.error}`;
    const note = mk(this.doc, "span", "sw-failed-note", "✗ did not compile");
    note.title = f.error;
    c.after(note);
  }

  // ---- requests ------------------------------------------------------------------------------

  override request(state: TraceState): void {
    if (this.options?.static) return; // a saved page, or several processes: no re-compile here
    this.failed = null;
    this.asked = { state: cloneTraceState(state), key: this.changedKey };
    super.request(state);
  }

  /** The jaxpr panel (tests). */
  get jaxprPanel(): JaxprPanel {
    return this.jaxpr;
  }

  get cards(): { inputs: LeafCard[]; outputs: LeafCard[] } {
    return { inputs: this.inCards, outputs: this.outCards };
  }

  /** The tables and the picked leaf's card, when there are more than CARDS_UP_TO leaves (tests). */
  get compactLeaves(): CompactLeaves | null {
    return this.isCompact ? this.compact : null;
  }

  override dispose(): void {
    super.dispose();
    this.compact.dispose();
    for (const c of [...this.inCards, ...this.outCards]) c.dispose();
    this.inCards = [];
    this.outCards = [];
  }
}
