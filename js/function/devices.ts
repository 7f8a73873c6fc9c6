// The function view's device picture beside its collectives: the mesh the function is laid out
// on, where hovering a collective (a table row or its estimate bar) lights that collective's
// device groups, one colour per group: which devices talk to which.
import type { Collective, Layout } from "../wire";
import { colorScheme } from "../shared/colors";
import { el } from "../shared/dom";
import { plural } from "../shared/text";
import { MeshAxesDrawing } from "../array/mesh/mesh_axes";
import { CellPaint } from "../array/mesh/heat";
import type { GroupPaint } from "../cost/groups";
import { groupsLabel } from "../shared/collectives";

const HINT = "hover a collective: its device groups light up, one colour per group";

export class DevicesPicture {
  readonly el: HTMLElement;
  private title: HTMLElement;
  private body: HTMLElement;
  private caption: HTMLElement;
  private cells = new Map<number, HTMLElement>();
  private paint = new CellPaint();
  private lit = new Set<number>();
  private key = "";

  constructor(private readonly doc: Document) {
    // sw-mesh: the mesh pane's cell and dimming styles.
    this.el = el(doc, "div", "sw-mesh sw-tr-devices");
    this.el.setAttribute("aria-label", "devices of the mesh, by the groups of a collective");
    this.title = el(doc, "div", "sw-pane-title");
    this.body = el(doc, "div", "sw-mesh-body");
    this.caption = el(doc, "div", "sw-hint sw-tr-devices-caption", HINT);
    this.caption.setAttribute("aria-live", "polite");
    this.el.append(this.title, this.body, this.caption);
  }

  /** Draw the devices of `layout`'s mesh (a leaf of the function: they share one mesh); hidden
   *  when there is none. */
  update(layout: Layout | null, nDevices: number, width = 260): void {
    if (!layout || !layout.mesh) {
      this.el.hidden = true;
      this.key = "";
      return;
    }
    this.el.hidden = false;
    const key = JSON.stringify([layout.mesh, nDevices, width]);
    if (key === this.key) return;
    this.key = key;
    const scheme = colorScheme(nDevices, [...layout.mesh.device_ids, ...layout.devices.ids]);
    const body = el(this.doc, "div", "sw-mesh-body");
    new MeshAxesDrawing(this.doc, (id) => scheme.color(id)).draw(layout, this.title, body, width);
    this.body.replaceWith(body);
    this.body = body;
    this.cells.clear();
    for (const c of body.querySelectorAll<HTMLElement>(".sw-dev")) {
      c.removeAttribute("tabindex"); // a picture, not a control: the table rows are focusable
      c.removeAttribute("role");
      this.cells.set(Number(c.dataset.device), c);
    }
    this.lit.clear();
    this.paint.apply(this.cells, true);
    this.light(null);
  }

  /** Light `c`'s groups (`p` from collectivePaint), or go back to the device colours (null). */
  light(p: GroupPaint | null, c?: Collective): void {
    this.paint.set("groups", p ? p.colors : null);
    this.paint.apply(this.cells, false);
    for (const id of this.lit) {
      const cell = this.cells.get(id);
      if (cell) {
        cell.classList.remove("sw-hl");
        cell.title = `device ${id}`;
      }
    }
    this.lit.clear();
    // Every device in a group: the colours say it all (no outlines, nothing to fade).
    const some = !!p && p.colors.size < this.cells.size;
    if (p) {
      for (const [id] of p.colors) {
        const cell = this.cells.get(id);
        if (!cell) continue;
        if (some) cell.classList.add("sw-hl");
        cell.title = `device ${id}\n${p.titles.get(id) ?? ""}`;
        this.lit.add(id);
      }
    }
    this.el.classList.toggle("sw-dimming", some);
    if (!p && c) this.caption.textContent = `${c.kind}: its device groups were not sent (a bounded payload); the row's tooltip has them as XLA wrote them`;
    else if (!p) this.caption.textContent = HINT;
    else if (c) this.caption.textContent = `${c.kind}${c.axes.length ? ` over ${c.axes.join(", ")}` : ""}: ${groupsLabel(c)}`;
    else this.caption.textContent = plural(p.colors.size, "device");
  }

  /** The colour a device shows now (tests). */
  colorOf(id: number): string {
    return this.cells.get(id)?.style.background ?? "";
  }
}
