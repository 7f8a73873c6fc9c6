// The function view's controls: the mesh shared by every input (number of axes, shape, axis
// names and types, reset) and the per-leaf spec selectors. Same validity rules as the array
// view's controls: only valid choices are offered, and a refused choice says why in its option
// text.
import type { AxisType, HistoryWire, SpecEntry, TraceOptions, TraceState } from "../wire";
import { historyButtons } from "../shared/history";
import { decodeEntry, encodeEntry } from "../shared/spec";
import {
  axisCountChoices,
  axisNameField,
  axisTypeChoices,
  fieldset,
  meshShapeChoices,
  rebuildKeepingFocus,
  resetAndStatus,
  selectField,
} from "../shared/fields";
import {
  leafSpecOptions,
  traceSpecRewrites,
  withTraceAxisName,
  withTraceAxisType,
  withTraceMeshShape,
  withTraceNumAxes,
} from "./state";

export interface SpecSelectorsInput {
  /** Prefix of the data-keys ("in-0", "out-1"). */
  key: string;
  /** Sizes shown per dimension (and checked, unless `free`). */
  shape: number[];
  state: TraceState;
  spec: SpecEntry[];
  /** shard_map outputs: no divisibility rule. */
  free: boolean;
  /** What the dimension label says: "dim 0 (8)" or, for local sizes, "dim 0 (local 4)". */
  sizeWord?: string;
  leafName: string;
  onEntry: (dim: number, e: SpecEntry) => void;
}

/** One selector per dimension: None, each axis, each combination of axes in mesh order. */
export function specSelectors(doc: Document, inp: SpecSelectorsInput): HTMLElement {
  const box = doc.createElement("div");
  box.className = "sw-spec";
  inp.shape.forEach((size, d) => {
    const opts = leafSpecOptions(d, size, inp.state, inp.spec, inp.free);
    const word = inp.sizeWord ? `${inp.sizeWord} ${size}` : String(size);
    box.append(
      selectField(
        doc,
        `${inp.key}-dim-${d}`,
        `dim ${d} (${word})`,
        opts.map((o) => ({ value: o.value, label: o.label, disabled: o.disabled, title: o.reason })),
        encodeEntry(inp.spec[d]),
        (v) => inp.onEntry(d, decodeEntry(v)),
        `spec of ${inp.leafName}, dimension ${d}`,
      ),
    );
  });
  if (inp.shape.length === 0) {
    const p = doc.createElement("span");
    p.className = "sw-muted";
    p.textContent = "a scalar has no dimensions to shard";
    box.append(p);
  }
  return box;
}

export interface MeshControlsInput {
  state: TraceState;
  options: TraceOptions;
  pending: boolean;
  /** Undo / redo; absent on a saved page. */
  history?: HistoryWire | null;
}

/** A state's canonical text (field order fixed), to tell whether the controls show it. */
function stateKeyOf(s: TraceState): string {
  return JSON.stringify([s.mesh_shape, s.axis_names, s.axis_types, s.in_specs, s.out_specs]);
}

/** Mesh shape, axis names and types, reset; shared by every input of the function. */
export class FunctionMeshControls {
  readonly el: HTMLElement;
  /** What the last mesh change did to the leaves' specs, shown under the mesh while the
   *  controls show the state it was for (the next change or a refusal hides it). */
  private rewrite: { key: string; lines: string[] } | null = null;

  constructor(
    private readonly doc: Document,
    private readonly request: (s: TraceState) => void,
    private readonly step: (by: -1 | 1) => void = () => {},
  ) {
    this.el = doc.createElement("form");
    this.el.className = "sw-controls sw-tr-mesh";
    this.el.setAttribute("aria-label", "mesh controls");
    this.el.addEventListener("submit", (e) => e.preventDefault());
  }

  /** Ask for a new mesh, noting first what it does to the specs (shown once the controls show
   *  the new state). */
  private meshChange(before: TraceState, after: TraceState, options: TraceOptions): void {
    const lines = traceSpecRewrites(before, after, options);
    this.rewrite = lines.length ? { key: stateKeyOf(after), lines } : null;
    this.request(after);
  }

  update(inp: MeshControlsInput): void {
    rebuildKeepingFocus(this.el, () => this.build(inp));
    this.el.classList.toggle("sw-pending", inp.pending);
  }

  private build(inp: MeshControlsInput): Node[] {
    const { state, options } = inp;
    const doc = this.doc;
    const fs = fieldset(doc, "Mesh (shared by every input)", "sw-fs sw-tr-meshfs");
    const row = doc.createElement("div");
    row.className = "sw-row";
    const k = state.mesh_shape.length;
    row.append(
      selectField(
        doc,
        "naxes",
        "axes",
        axisCountChoices(options, k),
        String(k),
        (v) => this.meshChange(state, withTraceNumAxes(state, Number(v), options), options),
      ),
    );
    row.append(
      selectField(
        doc,
        "shape",
        "shape",
        meshShapeChoices(options, state.mesh_shape),
        state.mesh_shape.join(","),
        (v) => this.meshChange(state, withTraceMeshShape(state, v.split(",").map(Number), options), options),
      ),
    );
    state.axis_names.forEach((_n, i) => row.append(this.axisField(state, i)));
    row.append(
      ...resetAndStatus(doc, options.original, "", (s) => this.request(s), inp.pending, "span"),
      ...historyButtons(doc, inp.history, this.step),
    );
    fs.append(row);
    if (this.rewrite && this.rewrite.key === stateKeyOf(state)) {
      const note = doc.createElement("div");
      note.className = "sw-spec-note";
      note.setAttribute("role", "status");
      note.textContent = `The mesh change rewrote specs: ${this.rewrite.lines.join("; ")}`;
      row.append(note); // a line of its own under the controls (min-width 100% in a wrapping row)
    }
    // A saved page has no kernel: the controls show the layout but cannot change it.
    const why = options.static ?? "";
    fs.disabled = !!why;
    if (!why) return [fs];
    const note = doc.createElement("div");
    note.className = "sw-disabled-note";
    note.textContent = why;
    return [note, fs];
  }

  /** Name (text field, refused names explained beside it) and Auto / Explicit of axis i. */
  private axisField(state: TraceState, i: number): HTMLElement {
    const doc = this.doc;
    const wrap = doc.createElement("span");
    wrap.className = "sw-tr-axis";
    const [lab, msg] = axisNameField(doc, state, i, 5, (v) => this.request(withTraceAxisName(state, i, v)));
    const typeSel = selectField(
      doc,
      `type-${i}`,
      "",
      axisTypeChoices(),
      state.axis_types[i] ?? "auto",
      (v) => this.request(withTraceAxisType(state, i, v as AxisType)),
      `type of mesh axis ${i}`,
    );
    wrap.append(lab, typeSel, msg);
    return wrap;
  }
}
