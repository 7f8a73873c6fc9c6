// Dev preview: the widget against a fake model with fixture payloads and a simulated kernel.
// Run: `npm run preview` (or `./dev preview`): builds it into build/preview/ and serves it.
import widget from "../widget";
import { FakeModel } from "../tests/fake_model";
import * as fx from "../tests/fixtures";
import * as tfx from "../tests/function_fixtures";
import type { RequestMsg, TraceRequestMsg } from "../wire";

const params = new URLSearchParams(location.search || location.hash.replace(/^#/, "?"));
const name = params.get("fx") ?? "fx8";
// ?py=NAME: traits dumped from a real Python widget (widget.get_state(), binary fields as byte
// lists) into `window.PY_STATES` by a script loaded before this one; shown without a kernel.
const pyName = params.get("py");
const pyStates = (window as unknown as { PY_STATES?: Record<string, Record<string, unknown>> })
  .PY_STATES;
if (pyName && pyStates?.[pyName]) {
  const model = new FakeModel(pyStates[pyName]);
  widget.render({ model: model, el: document.getElementById("app")! });
} else if (name in tfx.TRACE_FIXTURES) previewTrace(tfx.TRACE_FIXTURES[name]());
else previewArray();

/** A fake model of `traits`, with ?error=… and ?busy=1 applied. */
function previewModel(traits: Record<string, unknown>): FakeModel {
  if (params.get("error")) traits.error = params.get("error")!;
  if (params.get("busy")) traits.busy = true;
  return new FakeModel(traits);
}

/** Render `model` into #app; with ?pin=…, click the block `target` finds for it. */
function show(
  model: FakeModel,
  target: (el: HTMLElement, pin: string) => HTMLElement | null | undefined,
): HTMLElement {
  const el = document.getElementById("app")!;
  widget.render({ model, el });
  const pin = params.get("pin");
  if (pin !== null) setTimeout(() => target(el, pin)?.click(), 50);
  return el;
}

/** A function view (?fx=trace_sum, trace_layer, …) against a simulated kernel that rebuilds the
 *  fixture's trace for each requested state (collectives and memory as in the fixture). */
function previewTrace(f: tfx.TraceFixture): void {
  const model = previewModel(tfx.traceTraitsOf(f));
  let key = f.trace.key;
  model.onSend = (msg: TraceRequestMsg) => {
    model.set("busy", true);
    setTimeout(() => {
      const s = msg.state;
      const bad =
        f.def.fn_name === "layer" && f.def.mode === "jit" && s.axis_types.includes("explicit")
          ? "ShardingTypeError: Contracting dimensions are sharded and it is ambiguous how the " +
            "output should be sharded. Please specify the output sharding via the `out_sharding` parameter."
          : "";
      if (bad) {
        model.set("error", bad);
        model.emitCustom({ type: "result", seq: msg.seq, ok: false, error: bad });
      } else {
        const { trace, stats } = tfx.buildTrace(f.def, s, ++key);
        for (const k of ["mesh_shape", "axis_names", "axis_types", "in_specs", "out_specs"] as const)
          model.set(k, s[k]);
        model.set("error", "");
        model.set("_trace", trace);
        model.set("_trace_stats", { key, outputs: stats.outputs.map(() => null) });
        model.emitCustom({ type: "result", seq: msg.seq, ok: true, error: "" });
        setTimeout(() => model.set("_trace_stats", stats), 200);
      }
      model.set("busy", false);
    }, 250);
  };
  show(model, (el, pin) =>
    el.querySelectorAll<HTMLElement>(".sw-tr-leaf[data-side=out] [data-block]")[Number(pin)],
  );
}

function previewArray(): void {
  const makers: Record<string, () => fx.Fixture> = {
    fx8: fx.fx8,
    fxSingle: fx.fxSingle,
    fxReplicated: () => fx.fxReplicated(8),
    fxReplicated16: () => fx.fxReplicated(16),
    fxPartial: fx.fxPartial,
    fx3d: fx.fx3d,
    fx256: fx.fx256,
    fx4096: fx.fx4096,
    fx3axis: fx.fx3axis,
  };
  const f = (makers[name] ?? fx.fx8)();
  const model = previewModel(fx.traitsOf(f));
  let key = f.layout.key;
  model.onSend = (msg: RequestMsg) => {
    model.set("busy", true);
    setTimeout(() => {
      try {
        const s = msg.state;
        const nf = fx.namedFixture({
          shape: f.layout.shape,
          dtype: f.layout.dtype,
          meshShape: s.mesh_shape,
          axisNames: s.axis_names,
          axisTypes: s.axis_types,
          spec: s.spec,
          key: ++key,
          viewDims: model.get("view_dims"),
          source: "resharded",
        });
        model.set("_layout", nf.layout);
        for (const k of ["mesh_shape", "axis_names", "axis_types", "spec", "memory_kind"] as const)
          model.set(k, s[k]);
        model.set("error", "");
        model.emitCustom({ type: "result", seq: msg.seq, ok: true, error: "" });
        setTimeout(() => model.set("_stats", nf.stats), 200);
      } catch (e) {
        model.set("error", String(e));
        model.emitCustom({ type: "result", seq: msg.seq, ok: false, error: String(e) });
      }
      model.set("busy", false);
    }, 250);
  };
  const el = show(model, (el, pin) => el.querySelector<HTMLElement>(`[data-block="${pin}"]`));
  const hover = params.get("hoverdev");
  if (hover !== null) {
    setTimeout(() => {
      el.querySelector(`[data-device="${hover}"]`)?.dispatchEvent(new MouseEvent("mouseenter"));
    }, 60);
  }
}
