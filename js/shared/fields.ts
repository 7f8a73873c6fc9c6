// Form fields both views' controls are made of: a <select> of choices, the name field of a mesh
// axis, the choices of mesh axis count and shape, and a rebuild that keeps the focus.
import { axisNameProblem } from "./spec";

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
  // 1–4, and more where the device set's own mesh has more axes (an array's 5-axis mesh).
  const most = Math.max(4, current, ...Object.keys(options.factorizations).map(Number));
  return Array.from({ length: most }, (_, i) => i + 1).map((n) => {
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

/** The type select of a mesh axis, worded as JAX's AxisType (the same in both views). */
export function axisTypeChoices(): Choice[] {
  return [
    {
      value: "auto",
      label: "Auto",
      disabled: false,
      title: "Auto: the compiler decides the sharding of intermediates",
    },
    {
      value: "explicit",
      label: "Explicit",
      disabled: false,
      title: "Explicit: shardings are part of the types; ambiguous ops ask for out_sharding",
    },
  ];
}

function shapeLabel(s: number[]): string {
  return s.join(" × ");
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

/** A <select> (wrapped in a label when `label` is given). `key` is its data-key (focus is kept
 *  across rebuilds by it). A disabled choice stays selectable when it is the current value. */
export function selectField(
  doc: Document,
  key: string,
  label: string,
  choices: Choice[],
  value: string,
  onChange: (v: string) => void,
  ariaLabel = "",
): HTMLElement {
  const s = doc.createElement("select");
  s.dataset.key = key;
  for (const c of choices) {
    const o = doc.createElement("option");
    o.value = c.value;
    o.textContent = c.label;
    o.disabled = c.disabled && c.value !== value;
    if (c.title) o.title = c.title;
    s.append(o);
  }
  s.value = value;
  s.addEventListener("change", () => onChange(s.value));
  if (ariaLabel) s.setAttribute("aria-label", ariaLabel);
  if (!label) return s;
  const lab = doc.createElement("label");
  lab.className = "sw-field";
  const span = doc.createElement("span");
  span.textContent = label;
  lab.append(span, s);
  return lab;
}

/** Rebuild `host`'s children with `build`, keeping the focused control (by data-key) focused and
 *  the text being typed in a focused text field. */
export function rebuildKeepingFocus(host: HTMLElement, build: () => Node[]): void {
  const doc = host.ownerDocument;
  const active = doc.activeElement as HTMLElement | null;
  const key = active && host.contains(active) ? active.dataset.key : undefined;
  let editing: { value: string; start: number | null; end: number | null } | null = null;
  if (key && active instanceof HTMLInputElement && active.type === "text") {
    editing = { value: active.value, start: active.selectionStart, end: active.selectionEnd };
  }
  host.replaceChildren(...build());
  if (!key) return;
  const e = host.querySelector<HTMLElement>(`[data-key="${key}"]`);
  if (!e) return;
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

/** A fieldset with its legend. */
export function fieldset(doc: Document, legend: string, cls = "sw-fs"): HTMLFieldSetElement {
  const fs = doc.createElement("fieldset");
  fs.className = cls;
  const lg = doc.createElement("legend");
  lg.textContent = legend;
  fs.append(lg);
  return fs;
}

/** The Reset button (back to `original`; disabled with `why` when there is none) and the status
 *  line that says a request is being applied. */
export function resetAndStatus<S>(
  doc: Document,
  original: S | null,
  why: string,
  reset: (s: S) => void,
  pending: boolean,
  statusTag: "div" | "span",
): [HTMLButtonElement, HTMLElement] {
  const b = doc.createElement("button");
  b.type = "button";
  b.className = "sw-button";
  b.textContent = "Reset";
  b.dataset.key = "reset";
  b.title = original ? "back to the layout the view was created with" : why;
  b.disabled = !original;
  b.addEventListener("click", () => {
    if (original) reset(original);
  });
  const status = doc.createElement(statusTag);
  status.className = "sw-ctl-status";
  status.setAttribute("aria-live", "polite");
  status.textContent = pending ? "applying…" : "";
  return [b, status];
}
