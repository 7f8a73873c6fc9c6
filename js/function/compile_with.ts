// A plan view's "compile with": XLA's CPU compiler (simulated devices) or the TPU's own
// compiler (libtpu, in a helper), and in one line why the TPU is not offered where it is not.

import type { CompileWith } from "../wire";
import { el as mk } from "../shared/dom";

/** The control: a select of the two compilers, and the reason line when the TPU is not there;
 *  ``frozen`` (a saved page: no kernel) shows the choice without offering it. */
export function compileWithControl(
  doc: Document,
  cw: CompileWith,
  choose: (compiler: "cpu" | "tpu") => void,
  frozen = "",
): HTMLElement {
  const box = mk(doc, "span", "sw-compile-with");
  const label = mk(doc, "label", "sw-compile-with-label", "compile with ");
  const select = mk(doc, "select", "sw-compile-with-select");
  select.dataset.key = "compile-with";
  const cpu = mk(doc, "option", "", "CPU (simulated)");
  cpu.value = "cpu";
  const tpu = mk(doc, "option", "", cw.tpu || "this TPU");
  tpu.value = "tpu";
  tpu.disabled = !cw.tpu;
  if (cw.why) tpu.title = cw.why;
  select.append(cpu, tpu);
  select.value = cw.current === "tpu" ? "tpu" : "cpu";
  select.disabled = !!frozen;
  select.title = "which compiler plans this layout: XLA's CPU compiler for simulated devices, or the TPU's own";
  select.addEventListener("change", () => choose(select.value === "tpu" ? "tpu" : "cpu"));
  label.append(select);
  box.append(label);
  if (cw.why) box.append(mk(doc, "span", "sw-compile-with-why", cw.why));
  return box;
}
