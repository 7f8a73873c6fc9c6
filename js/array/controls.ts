// The layout form: mesh shape, axis names / types, spec per dimension, memory kind, reset.
import type { AxisType, DeviceSet, HistoryWire, LayoutState, Options } from "../wire";
import { compressIds } from "./labels";
import { historyButtons } from "../shared/history";
import { decodeEntry, encodeEntry, specOptions, specString } from "../shared/spec";
import {
  axisCountChoices,
  axisNameField,
  axisTypeChoices,
  meshShapeChoices,
  fieldset,
  rebuildKeepingFocus,
  resetAndStatus,
  selectField,
  type Choice,
} from "../shared/fields";
import {
  meshChoices,
  stateKey,
  withAxisName,
  withDevices,
  withAxisType,
  withMemoryKind,
  withMeshShape,
  withNumAxes,
  withSpecEntry,
  specRewrite,
} from "./state";

export interface ControlsCallbacks {
  /** The user asked for a new layout. */
  request(state: LayoutState): void;
  /** Undo (-1) or redo (1): the kernel steps through the layouts shown. */
  step(by: -1 | 1): void;
}

export interface ControlsInput {
  /** What the controls show: the pending / in-flight state when there is one, else the traits. */
  state: LayoutState;
  options: Options;
  /** True while a request is pending or in flight. */
  pending: boolean;
  /** Undo / redo; absent on a saved page. */
  history?: HistoryWire | null;
}

export class Controls {
  readonly el: HTMLFormElement;
  private inp: ControlsInput | null = null;
  /** What the last mesh change did to the spec, shown beside the spec while the controls show
   *  the layout it was for (the next change, or an error that restores the old one, hides it). */
  private rewrite: { key: string; text: string } | null = null;

  constructor(
    private readonly doc: Document,
    private readonly cb: ControlsCallbacks,
  ) {
    this.el = doc.createElement("form");
    this.el.className = "sw-controls";
    this.el.setAttribute("aria-label", "layout controls");
    this.el.addEventListener("submit", (e) => e.preventDefault());
  }

  update(inp: ControlsInput): void {
    this.inp = inp;
    this.el.classList.toggle("sw-pending", inp.pending);
    // Keep focus (and a text input being edited) across the rebuild.
    rebuildKeepingFocus(this.el, () => this.build(inp));
  }

  private build(inp: ControlsInput): HTMLElement[] {
    const { state, options } = inp;
    const doc = this.doc;
    const disabledWhy = options.reshard_disabled;
    // Every choice here is a target to re-lay the array out onto; the header (and the grid)
    // show the array's own layout.
    const fsMesh = fieldset(doc, "Re-lay out onto: mesh");
    fsMesh.title = "a layout to re-lay the array out onto (the header shows its own layout)";
    const k = state.mesh_shape.length;
    const choices = meshChoices(options, state.devices);
    // Devices: the array's own (a sub-mesh stays on them) or all of the kernel's.
    const devSel = this.select(
      "devices",
      "devices",
      deviceChoices(options),
      state.devices,
      (v) => withDevices(state, v as DeviceSet, options),
    );
    // Number of axes.
    const nAx = this.select(
      "naxes",
      "axes",
      axisCountChoices(choices, k),
      String(k),
      (v) => withNumAxes(state, Number(v), options),
      "",
      true,
    );
    // Shape.
    const shapeSel = this.select(
      "shape",
      "shape",
      meshShapeChoices(choices, state.mesh_shape),
      state.mesh_shape.join(","),
      (v) => withMeshShape(state, v.split(",").map(Number), options),
      "",
      true,
    );
    const row0 = doc.createElement("div");
    row0.className = "sw-row";
    row0.append(devSel, nAx, shapeSel);
    fsMesh.append(row0);
    // Axes: name + type.
    const axes = doc.createElement("div");
    axes.className = "sw-axes";
    state.axis_names.forEach((_name, i) => {
      const row = doc.createElement("div");
      row.className = "sw-row sw-axis-row";
      const [lab, msg] = axisNameField(doc, state, i, 6, (v) => this.emit(withAxisName(state, i, v)));
      if (options.static_states) {
        const t = lab.querySelector("input") as HTMLInputElement;
        t.readOnly = true;
        t.title = "names are fixed in a saved page";
      }
      const typeSel = this.select(
        `type-${i}`,
        "",
        axisTypeChoices(),
        state.axis_types[i] ?? "auto",
        (v) => withAxisType(state, i, v as AxisType),
        `type of mesh axis ${i}`,
      );
      row.append(lab, typeSel, msg);
      axes.append(row);
    });
    fsMesh.append(axes);

    // Spec.
    const fsSpec = fieldset(doc, "with PartitionSpec");
    const specPreview = doc.createElement("code");
    specPreview.className = "sw-spec-preview";
    specPreview.textContent = specString(state.spec);
    fsSpec.append(specPreview);
    if (this.rewrite && this.rewrite.key === stateKey(state)) {
      const note = doc.createElement("div");
      note.className = "sw-spec-note";
      note.setAttribute("role", "status");
      note.textContent = `The mesh change rewrote the spec: ${this.rewrite.text}`;
      fsSpec.append(note);
    }
    const specBox = doc.createElement("div");
    specBox.className = "sw-spec";
    for (let d = 0; d < options.ndim; d++) {
      const opts = specOptions(d, options.shape[d], state.axis_names, state.mesh_shape, state.spec);
      specBox.append(
        this.select(
          `spec-${d}`,
          `dim ${d} (${options.shape[d]})`,
          opts.map((o) => ({ value: o.value, label: o.label, disabled: o.disabled, title: o.reason })),
          encodeEntry(state.spec[d]),
          (v) => withSpecEntry(state, d, decodeEntry(v)),
        ),
      );
    }
    if (options.ndim === 0) {
      const p = doc.createElement("span");
      p.className = "sw-muted";
      p.textContent = "a scalar has no dimensions to shard";
      specBox.append(p);
    }
    fsSpec.append(specBox);

    // Memory + reset.
    const fsMem = fieldset(doc, "in memory");
    const kinds = [...options.memory_kinds];
    if (state.memory_kind && !kinds.includes(state.memory_kind)) kinds.unshift(state.memory_kind);
    fsMem.append(
      this.select(
        "mem",
        "memory kind",
        kinds.map((m) => ({ value: m, label: m, disabled: false, title: "" })),
        state.memory_kind,
        (v) => withMemoryKind(state, v),
      ),
    );
    const [reset, status] = resetAndStatus(
      doc,
      options.original,
      "the original layout cannot be expressed with these controls",
      (s) => this.emit(s),
      inp.pending,
      "div",
    );
    // Reset / Undo / Redo act on the whole layout: beside the boxes, not inside "in memory".
    const undo = historyButtons(doc, inp.history, (by) => this.cb.step(by));
    const actions = doc.createElement("div");
    actions.className = "sw-ctl-actions";
    const row = doc.createElement("div");
    row.className = "sw-history-row";
    row.append(reset, ...undo, status);
    actions.append(row);

    const all = doc.createElement("fieldset");
    all.className = "sw-controls-all";
    all.disabled = !!disabledWhy;
    all.append(fsMesh, fsSpec, fsMem, actions);
    const nodes: HTMLElement[] = [all];
    if (disabledWhy) {
      const note = doc.createElement("div");
      note.className = "sw-disabled-note";
      note.textContent = `Re-sharding is disabled: ${disabledWhy}`;
      nodes.unshift(note);
    }
    return nodes;
  }

  private emit(state: LayoutState): void {
    if (this.inp?.options.reshard_disabled) return;
    this.cb.request(state);
  }

  /** A select whose choice asks for `next(value)`. A saved page answers only the layouts it
   *  carries: the others are shown as unavailable, not broken. */
  private select(
    key: string,
    label: string,
    choices: Choice[],
    value: string,
    next: (v: string) => LayoutState,
    ariaLabel = "",
    rewritesSpec = false,
  ): HTMLElement {
    const saved = this.inp?.options.static_states;
    const known = saved ? new Set(saved) : null;
    const offered = choices.map((c) =>
      known && !c.disabled && c.value !== value && !known.has(stateKey(next(c.value)))
        ? {
            value: c.value,
            label: `${c.label} — not in this page`,
            disabled: true,
            title: "this layout was not precomputed when the page was saved",
          }
        : c,
    );
    const choose = (v: string) => {
      const n = next(v);
      const state = this.inp?.state;
      const text = rewritesSpec && state && this.inp ? specRewrite(state, n, this.inp.options.shape) : "";
      // Set before the request: the controls re-render with the requested state, note included.
      this.rewrite = text ? { key: stateKey(n), text } : null;
      this.emit(n);
    };
    const field = selectField(this.doc, key, label, offered, value, choose, ariaLabel);
    // A select is as wide as its longest option: "2 × 4 — not in this page" would make it jump
    // wider than the live widget's. Size it to its choice (field-sizing), or, in browsers
    // without field-sizing, at most to the choices it can show closed.
    if (offered.some((c, i) => c !== choices[i])) {
      const longest = Math.max(...offered.filter((c, i) => c === choices[i]).map((c) => c.label.length));
      const sel = field.querySelector("select") ?? (field as HTMLSelectElement);
      sel.style.setProperty("field-sizing", "content");
      sel.style.maxWidth = `calc(${(longest * 0.62).toFixed(2)}em + 2.8em)`;
    }
    return field;
  }

}

/** The device sets a layout can be made of: the array's own devices (their ids) and all. */
export function deviceChoices(options: Options): Choice[] {
  const own = options.own_devices;
  const ids = compressIds(own);
  return [
    {
      value: "array",
      label: `the array's ${own.length === 1 ? "device" : `${own.length} devices`} (${ids})`,
      disabled: false,
      title: "a mesh of the array's own devices, in its own order",
    },
    {
      value: "all",
      label: `all ${options.n_devices} devices`,
      disabled: false,
      title: "a mesh of every device of the kernel, in jax.make_mesh order",
    },
  ];
}
