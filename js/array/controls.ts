// The layout form: mesh shape, axis names / types, spec per dimension, memory kind, reset.
import type { AxisType, LayoutState, Options } from "../wire";
import { decodeEntry, encodeEntry, specOptions, specString } from "../shared/spec";
import {
  axisNameProblem,
  stateKey,
  withAxisName,
  withAxisType,
  withMemoryKind,
  withMeshShape,
  withNumAxes,
  withSpecEntry,
} from "./state";

export interface ControlsCallbacks {
  /** The user asked for a new layout. */
  request(state: LayoutState): void;
}

export interface ControlsInput {
  /** What the controls show: the pending / in-flight state when there is one, else the traits. */
  state: LayoutState;
  options: Options;
  /** True while a request is pending or in flight. */
  pending: boolean;
}

function shapeLabel(s: number[]): string {
  return s.join(" × ");
}

export class Controls {
  readonly el: HTMLFormElement;
  private inp: ControlsInput | null = null;

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
    // Keep focus (and a text input being edited) across the rebuild.
    const active = this.doc.activeElement as HTMLElement | null;
    const focusKey = active && this.el.contains(active) ? active.dataset.key : undefined;
    let editing: { key: string; value: string; start: number | null; end: number | null } | null =
      null;
    if (active instanceof HTMLInputElement && active.type === "text" && focusKey) {
      editing = {
        key: focusKey,
        value: active.value,
        start: active.selectionStart,
        end: active.selectionEnd,
      };
    }
    this.build(inp);
    if (focusKey) {
      const e = this.el.querySelector<HTMLElement>(`[data-key="${focusKey}"]`);
      if (e) {
        if (editing && e instanceof HTMLInputElement) {
          e.value = editing.value;
          try {
            e.setSelectionRange(editing.start, editing.end);
          } catch {
            /* ignore */
          }
        }
        e.focus();
      }
    }
  }

  private build(inp: ControlsInput): void {
    const { state, options } = inp;
    const doc = this.doc;
    const disabledWhy = options.reshard_disabled;
    const fsMesh = this.fieldset("Mesh");
    const k = state.mesh_shape.length;
    // Number of axes.
    const nAx = this.select(
      "naxes",
      "axes",
      axisCountChoices(options, k),
      String(k),
      (v) => withNumAxes(state, Number(v), options),
    );
    // Shape.
    const shapeSel = this.select(
      "shape",
      "shape",
      meshShapeChoices(options, state.mesh_shape),
      state.mesh_shape.join(","),
      (v) => withMeshShape(state, v.split(",").map(Number), options),
    );
    const row0 = doc.createElement("div");
    row0.className = "sw-row";
    row0.append(nAx, shapeSel);
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
        (["auto", "explicit"] as AxisType[]).map((a) => ({ value: a, label: a, disabled: false, title: "" })),
        state.axis_types[i] ?? "auto",
        (v) => withAxisType(state, i, v as AxisType),
        `type of mesh axis ${i}`,
      );
      row.append(lab, typeSel, msg);
      axes.append(row);
    });
    fsMesh.append(axes);

    // Spec.
    const fsSpec = this.fieldset("PartitionSpec");
    const specPreview = doc.createElement("code");
    specPreview.className = "sw-spec-preview";
    specPreview.textContent = specString(state.spec);
    fsSpec.append(specPreview);
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
    const fsMem = this.fieldset("Memory");
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
    const reset = doc.createElement("button");
    reset.type = "button";
    reset.className = "sw-button";
    reset.textContent = "Reset";
    reset.dataset.key = "reset";
    reset.title = options.original
      ? "back to the layout the view was created with"
      : "the original layout cannot be expressed with these controls";
    reset.disabled = !options.original;
    reset.addEventListener("click", () => {
      if (options.original) this.emit(options.original);
    });
    fsMem.append(reset);
    const status = doc.createElement("div");
    status.className = "sw-ctl-status";
    status.setAttribute("aria-live", "polite");
    status.textContent = inp.pending ? "applying…" : "";
    fsMem.append(status);

    const all = doc.createElement("fieldset");
    all.className = "sw-controls-all";
    all.disabled = !!disabledWhy;
    all.append(fsMesh, fsSpec, fsMem);
    const nodes: HTMLElement[] = [all];
    if (disabledWhy) {
      const note = doc.createElement("div");
      note.className = "sw-disabled-note";
      note.textContent = `Re-sharding is disabled: ${disabledWhy}`;
      nodes.unshift(note);
    }
    this.el.classList.toggle("sw-pending", inp.pending);
    this.el.replaceChildren(...nodes);
  }

  private emit(state: LayoutState): void {
    if (this.inp?.options.reshard_disabled) return;
    this.cb.request(state);
  }

  private fieldset(legend: string): HTMLFieldSetElement {
    const fs = this.doc.createElement("fieldset");
    fs.className = "sw-fs";
    const lg = this.doc.createElement("legend");
    lg.textContent = legend;
    fs.append(lg);
    return fs;
  }

  private select(
    key: string,
    label: string,
    options: { value: string; label: string; disabled: boolean; title: string }[],
    value: string,
    next: (v: string) => LayoutState,
    ariaLabel = "",
  ): HTMLElement {
    const doc = this.doc;
    const s = doc.createElement("select");
    s.dataset.key = key;
    const avail = this.inp?.options.static_states;
    const known = avail ? new Set(avail) : null;
    for (const o of options) {
      const opt = doc.createElement("option");
      opt.value = o.value;
      opt.textContent = o.label;
      opt.disabled = o.disabled && o.value !== value;
      if (o.title) opt.title = o.title;
      // A static page answers only the layouts it carries: others are unavailable, not broken.
      if (known && !opt.disabled && o.value !== value && !known.has(stateKey(next(o.value)))) {
        opt.disabled = true;
        opt.textContent = `${o.label} — not in this page`;
        opt.title = "this layout was not precomputed when the page was saved";
      }
      s.append(opt);
    }
    s.value = value;
    s.addEventListener("change", () => this.emit(next(s.value)));
    if (!label) {
      if (ariaLabel) s.setAttribute("aria-label", ariaLabel);
      return s;
    }
    const lab = doc.createElement("label");
    lab.className = "sw-field";
    const span = doc.createElement("span");
    span.textContent = label;
    lab.append(span, s);
    return lab;
  }
}

/**
 * The name field of mesh axis i: a text input whose refused names are explained in words
 * beside it (and in its tooltip); a valid new name goes to `commit`. Returns the label (with the
 * input) and the message element, for the caller to place.
 */
export function axisNameField(
  doc: Document,
  state: { axis_names: string[]; mesh_shape: number[] },
  i: number,
  size: number,
  commit: (name: string) => void,
): [HTMLLabelElement, HTMLSpanElement] {
  const name = state.axis_names[i] ?? "";
  const lab = doc.createElement("label");
  lab.className = "sw-field";
  const span = doc.createElement("span");
  span.textContent = `axis ${i} (${state.mesh_shape[i]})`;
  const t = doc.createElement("input");
  t.type = "text";
  t.value = name;
  t.size = size;
  t.spellcheck = false;
  t.autocomplete = "off";
  t.dataset.key = `name-${i}`;
  t.setAttribute("aria-label", `name of mesh axis ${i}`);
  const msg = doc.createElement("span");
  msg.className = "sw-field-msg";
  msg.setAttribute("role", "alert");
  const show = (problem: string) => {
    if (problem) t.setAttribute("aria-invalid", "true");
    else t.removeAttribute("aria-invalid");
    t.title = problem;
    msg.textContent = problem;
  };
  const problemOf = (v: string) => (v === name ? "" : axisNameProblem(state.axis_names, i, v));
  const tryCommit = () => {
    const v = t.value.trim();
    const problem = problemOf(v);
    show(problem);
    if (!problem && v !== name) commit(v);
  };
  t.addEventListener("change", tryCommit);
  t.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      tryCommit();
    }
  });
  t.addEventListener("input", () => show(problemOf(t.value.trim())));
  lab.append(span, t);
  return [lab, msg];
}

/** One option of a select: what it sends, what it says, and why it cannot be chosen. */
export interface Choice {
  value: string;
  label: string;
  disabled: boolean;
  title: string;
}

type MeshChoiceOptions = { factorizations: Record<string, number[][]>; n_devices: number };

/** The number-of-axes select (1–4): a count with no factorization of the devices is refused,
 *  unless it is the current one. */
export function axisCountChoices(options: MeshChoiceOptions, current: number): Choice[] {
  return [1, 2, 3, 4].map((n) => {
    const facts = options.factorizations[String(n)] ?? [];
    return {
      value: String(n),
      label: String(n),
      disabled: facts.length === 0 && n !== current,
      title: facts.length === 0 ? `no ${n}-axis mesh of ${options.n_devices} devices` : "",
    };
  });
}

/** The mesh-shape select: every factorization with as many axes as `shape` (and `shape`). */
export function meshShapeChoices(options: MeshChoiceOptions, shape: number[]): Choice[] {
  const facts = [...(options.factorizations[String(shape.length)] ?? [])];
  if (!facts.some((f) => f.join() === shape.join())) facts.unshift(shape);
  return facts.map((f) => ({ value: f.join(","), label: shapeLabel(f), disabled: false, title: "" }));
}
