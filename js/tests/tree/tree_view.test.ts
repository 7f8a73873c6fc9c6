import { afterEach, describe, expect, it } from "vitest";
import { FakeModel } from "../fake_model";
import { TreeView, largeReplicated } from "../../tree/view";
import { buildRows, elide, isLargeReplicated, segments, type Row } from "../../tree/rows";
import { errorLine } from "../../tree/rules_editor";
import { overLimit } from "../../tree/memory_chart";
import type { TreeWire } from "../../wire";
import { tree8, treePlanned256 } from "../wire/fixtures.gen";

const cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.splice(0).forEach((c) => c());
  document.body.replaceChildren();
});

/** A tree of n leaves in two groups: params (leaf i holds i + 1 bytes, every third replicated
 *  on 8 devices) and opt (one leaf). */
function wireOf(n: number): TreeWire {
  const paths = Array.from({ length: n }, (_, i) => `['params']['l${i}']`);
  return {
    key: 1,
    paths: [...paths, "['opt']['count']"],
    groups: [...paths.map(() => 0), 1],
    group_names: ["['params']", "['opt']"],
    shapes: [...paths.map(() => [4]), []],
    dtypes: [...paths.map(() => "float32"), "int32"],
    specs: [...paths.map(() => "P(None)"), ""],
    names: [...paths.map(() => ""), ""],
    bytes: [...paths.map((_, i) => i + 1), 4],
    logical_bytes: [...paths.map((_, i) => i + 1), 4],
    replication: [...paths.map((_, i) => (i % 3 === 0 ? 8 : 1)), 1],
    everywhere: [...paths.map((_, i) => i % 3 === 0), false],
    sources: [...paths.map(() => ""), ""],
    notes: [],
    abstract: [...paths.map(() => false), false],
    static: [],
    memory: { ids: [0, 1], by_group: [[10, 20], [4, 0]] },
    mesh: "x=2",
    code: "",
    planned: "",
  };
}

describe("rows", () => {
  const show = (rows: Row[]) => rows.map((r) => (r.kind === "group" ? `${r.id}${r.open ? "" : "+"}` : r.leaf));

  it("groups in tree order, sorts by bytes, folds, filters", () => {
    const t = wireOf(5);
    const tree = buildRows(t, { sort: "tree", closed: new Set(), filter: "" });
    expect(show(tree)).toEqual(["['params']", 0, 1, 2, 3, 4, "['opt']", 5]);
    expect(tree[1]).toMatchObject({ kind: "leaf", name: "['l0']", depth: 1 });
    const bytes = buildRows(t, { sort: "bytes", closed: new Set(), filter: "" });
    expect(show(bytes)).toEqual(["['params']", 4, 3, 2, 1, 0, "['opt']", 5]);
    const folded = buildRows(t, { sort: "tree", closed: new Set(["['params']"]), filter: "" });
    expect(show(folded)).toEqual(["['params']+", "['opt']", 5]);
    const found = buildRows(t, { sort: "tree", closed: new Set(), filter: "L3" });
    expect(found).toEqual([
      { kind: "group", id: "['params']", name: "['params']", depth: 0, count: 1, bytes: 4, open: true },
      { kind: "leaf", leaf: 3, name: "['l3']", depth: 1 },
    ]);
  });

  it("nests by path, merges single-child chains, names NNX leaves with .value", () => {
    const t = wireOf(0);
    t.paths = [
      "['opt_state'][0]['mu']['w'].value",
      "['opt_state'][0]['nu']['w'].value",
      "['opt_state'][0]['count'].value",
      ".step",
    ];
    t.groups = [0, 0, 0, 1];
    t.group_names = ["['opt_state']", ".step"];
    t.bytes = [8, 8, 4, 4];
    const rows = buildRows(t, { sort: "tree", closed: new Set(), filter: "" });
    expect(rows.map((r) => `${r.depth}:${r.kind === "group" ? r.name : r.name}`)).toEqual([
      "0:['opt_state'][0]",
      "1:['mu']",
      "2:['w'].value",
      "1:['nu']",
      "2:['w'].value",
      "1:['count'].value",
      "0:.step",
    ]);
    expect(segments("['a'][0].b['c]d']")).toEqual(["['a']", "[0]", ".b", "['c]d']"]);
  });

  it("cuts long paths in the middle", () => {
    const p = "['opt_state'][0]['mu']['blocks'][1]['qkv']['kernel'].value";
    const e = elide(p, 40);
    expect(e.length).toBe(40);
    expect(e.startsWith("['opt_state']")).toBe(true);
    expect(e.endsWith("['kernel'].value")).toBe(true);
    expect(elide("['w']", 40)).toBe("['w']");
  });

  it("flags replicated leaves from the threshold on", () => {
    const t = wireOf(7);
    expect([0, 3, 6].map((i) => isLargeReplicated(t, i, 4))).toEqual([false, true, true]);
    expect(largeReplicated(t, 4)).toEqual([6, 3]);
    // copies are not replication on every device: P('model', None) on 4 × 2 is split in two
    t.replication[4] = 4;
    expect(isLargeReplicated(t, 4, 4)).toBe(false);
  });

  it("builds 16,000 rows reading the payload a bounded number of times per leaf", () => {
    // Counted, not timed: every read of an element of the payload's per-leaf arrays goes
    // through a Proxy. A build that rescans the leaves per group or per row (the quadratic
    // build this guards against) reads 16x the rows 256x as often; a linear one 16x. Timing
    // ratios were not dependable here: 5x the rows read 6x quiet, 19.6x (fastest of 5) and
    // 100x (median of 3) on a fresh clone at load 12, and 32x the rows 74-91x at load 3.
    const opts = { sort: "bytes" as const, closed: new Set<string>(), filter: "" };
    const counted = (n: number): { wire: TreeWire; reads: () => number } => {
      const w = wireOf(n) as unknown as Record<string, unknown>;
      let reads = 0;
      for (const [k, v] of Object.entries(w)) {
        if (!Array.isArray(v)) continue;
        w[k] = new Proxy(v, {
          get(target, prop, receiver) {
            if (typeof prop === "string" && /^\d+$/.test(prop)) reads++;
            return Reflect.get(target, prop, receiver);
          },
        });
      }
      return { wire: w as unknown as TreeWire, reads: () => reads };
    };
    const small = counted(1_000);
    const big = counted(16_000);
    expect(buildRows(small.wire, opts).length).toBe(1_003);
    expect(buildRows(big.wire, opts).length).toBe(16_003);
    expect(small.reads()).toBeGreaterThan(1_000); // every leaf is read: the count is real
    expect(big.reads() / small.reads()).toBeLessThan(16 * 1.25);
  });
});

describe("editor and chart helpers", () => {
  it("finds the line an error names", () => {
    expect(errorLine("rule 2 (line 3) (b  P('x')) does not fit leaf ['b']")).toBe(3);
    expect(errorLine("line 4: cannot read the spec P(x)")).toBe(4);
    expect(errorLine("mesh sizes must be integers")).toBe(0);
  });

  it("marks devices over the line", () => {
    expect(overLimit({ ids: [0, 1, 2], by_group: [[5, 1, 2], [1, 1, 5]] }, 5)).toEqual([0, 2]);
  });
});

describe("TreeView", () => {
  function mountTree(extra: Record<string, unknown> = {}) {
    const model = new FakeModel({ ...tree8, ...extra });
    const el = document.createElement("div");
    document.body.append(el);
    const view = new TreeView(model as never, el);
    cleanups.push(() => view.dispose());
    return { model, el, view };
  }

  it("draws Python's payload: leaves, chart bars, the selected leaf's grid", () => {
    const { el } = mountTree();
    const t = tree8._tree;
    expect(el.querySelectorAll(".sw-tree-row[data-leaf]").length).toBe(t.paths.length);
    expect(el.querySelectorAll(".sw-tree-mem-plot g[data-device]").length).toBe(8);
    expect(el.querySelector(".sw-tree-leafhead")!.textContent).toContain(t.paths[tree8.selected]);
    expect(el.querySelector(".sw-tree-static")!.textContent).toContain("['n']");
    expect(el.querySelector("textarea")!.value).toBe(tree8.rules_text);
  });

  it("a plan shows its badge with the preset, every position in the chart and the grid", async () => {
    const { el, model, view } = mountTree({ ...treePlanned256 });
    const badge = el.querySelector<HTMLElement>(".sw-planned-badge")!;
    expect(badge.hidden).toBe(false);
    expect(badge.textContent).toContain("planned on AbstractMesh (32, 8) · no devices");
    expect(badge.textContent).toContain(`estimates for ${treePlanned256.hardware}`);
    expect(el.querySelectorAll(".sw-tree-mem-plot g[data-device]").length).toBe(256);
    expect(el.querySelectorAll(".sw-tree-leafgrid .sw-mesh .sw-dev[data-device]").length).toBe(256);
    expect(treePlanned256._options.factorizations["2"]).toContainEqual([32, 8]);
    const shapes = [...el.querySelectorAll<HTMLOptionElement>("select[data-key='tree-mesh-shape'] option")];
    expect(shapes.map((o) => o.value)).toContain("16,16");
    expect(shapes.length).toBe(9); // every 2-axis factorization of 256
    const pick = el.querySelector<HTMLSelectElement>("select[data-key='tree-mesh-shape']")!;
    pick.value = "16,16";
    pick.dispatchEvent(new Event("change"));
    await new Promise((r) => setTimeout(r, 5));
    const req = model.sent.find((m) => m.type === "tree_request");
    expect(req.state.mesh_shape).toEqual([16, 16]);
    model.set("hardware", "tpu-v5p");
    view.flush();
    expect(badge.textContent).toContain("estimates for tpu-v5p");
    expect(mountTree().el.querySelector<HTMLElement>(".sw-planned-badge")!.hidden).toBe(true);
  });

  it("says the rules' notes (a rule that lays out nothing) and flags only leaves on every device", () => {
    const t = { ...tree8._tree, notes: ["rule 2 (zzz  P('data')) matches no leaf's path"] };
    const { el } = mountTree({ _tree: t });
    const notes = el.querySelector<HTMLElement>(".sw-tree-notes")!;
    expect(notes.hidden).toBe(false);
    expect([...notes.querySelectorAll("li")].map((li) => li.textContent)).toEqual(t.notes);
    const quiet = mountTree().el.querySelector<HTMLElement>(".sw-tree-notes")!;
    expect(quiet.hidden).toBe(true);
    const split = { ...tree8._tree, everywhere: tree8._tree.paths.map(() => false) };
    const warn = mountTree({ _tree: split, large_bytes: 0 }).el.querySelector<HTMLElement>(".sw-tree-warn")!;
    expect(warn.hidden).toBe(true); // copies (replication > 1) are not replication on every device
    const n = tree8._tree.paths.length;
    const whole = { ...split, everywhere: Array(n).fill(true), replication: Array(n).fill(8) };
    const flagged = mountTree({ _tree: whole, large_bytes: 0 }).el.querySelector<HTMLElement>(".sw-tree-warn")!;
    expect(flagged.hidden).toBe(false);
    const copies = { ...whole, everywhere: Array(n).fill(false) };
    const unflagged = mountTree({ _tree: copies, large_bytes: 0 }).el.querySelector<HTMLElement>(".sw-tree-warn")!;
    expect(unflagged.hidden).toBe(true);
  });

  it("a leaf click selects it and tells the kernel", () => {
    const { el, model } = mountTree();
    const other = tree8.selected === 0 ? 1 : 0;
    (el.querySelector(`.sw-tree-row[data-leaf='${other}']`) as HTMLElement).click();
    expect(model.get("selected")).toBe(other);
    expect(model.sent).toContainEqual({ type: "tree_select", leaf: other });
  });

  it("an edit sends a tree_request; the kernel's error marks its line", async () => {
    const { el, model, view } = mountTree();
    const area = el.querySelector("textarea")!;
    area.value = "b  P('y')\nw  P('x', 'y', 'z')";
    view.rulesEditor.flush();
    await new Promise((r) => setTimeout(r, 5));
    const req = model.sent.find((m) => m.type === "tree_request");
    expect(req.state.rules_text).toBe(area.value);
    expect(req.state.mesh_shape).toEqual(tree8.mesh_shape);
    model.set("error", "rule 2 (line 2) (w  P('x', 'y', 'z')) does not fit leaf ['w']");
    view.flush();
    expect(el.querySelector(".sw-tree-gutter-bad")!.textContent).toBe("2");
    expect(el.querySelector(".sw-tree-rules-error")!.textContent).toContain("['w']");
  });
});
