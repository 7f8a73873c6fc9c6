// The function view's device picture beside its collectives: the mesh the function is laid out
// on, where hovering a collective (a table row or its estimate bar) lights that collective's
// device groups, one colour per group: which devices talk to which. When a leaf card shows the
// mesh already (the usual case), the mesh is drawn once: there, and this is only the caption
// that names the lit groups (the view lights the cards' meshes).
import type { Collective, Layout } from "../wire";
import { colorScheme } from "../shared/colors";
import { el } from "../shared/dom";
import { plural } from "../shared/text";
import { MeshAxesDrawing } from "../array/mesh/mesh_axes";
import { CellPaint } from "../array/mesh/heat";
import type { GroupPaint } from "../cost/groups";
import { groupsLabel } from "../shared/collectives";

const HINT = "hover a collective: its device groups light up, one colour per group";
const HINT_ON_CARD = "hover a collective: its device groups light up on the leaf's mesh, one colour per group";

export class DevicesPicture {
  readonly el: HTMLElement;
  private title: HTMLElement;
  private body: HTMLElement;
  private caption: HTMLElement;
  private cells = new Map<number, HTMLElement>();
  private paint = new CellPaint();
  private lit = new Set<number>();
  private key = "";
  private meshSize = 0;
  private onCard = false;
  private last: [Layout | null, number, number] = [null, 1, 260];

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
   *  when there is none. `onCard`: a leaf card shows that mesh already, so only the caption is
   *  drawn here (the mesh drawn once). */
  update(layout: Layout | null, nDevices: number, width = 260, onCard = this.onCard): void {
    this.last = [layout, nDevices, width];
    this.onCard = onCard;
    if (!layout || !layout.mesh) {
      this.el.hidden = true;
      this.key = "";
      return;
    }
    this.el.hidden = false;
    this.meshSize = layout.mesh.device_ids.length;
    const key = JSON.stringify([layout.mesh, nDevices, width, onCard]);
    if (key === this.key) return;
    this.key = key;
    this.el.classList.toggle("sw-tr-devices-on-card", onCard);
    const body = el(this.doc, "div", "sw-mesh-body");
    if (onCard) {
      this.title.replaceChildren();
      this.title.hidden = true;
    } else {
      this.title.hidden = false;
      const scheme = colorScheme(nDevices, [...layout.mesh.device_ids, ...layout.devices.ids]);
      new MeshAxesDrawing(this.doc).draw(layout, this.title, body, width, (id) => scheme.color(id));
    }
    body.hidden = onCard;
    this.body.replaceWith(body);
    this.body = body;
    this.cells.clear();
    for (const c of body.querySelectorAll<HTMLElement>(".sw-dev")) {
      c.removeAttribute("tabindex"); // a picture, not a control: the table rows are focusable
      c.removeAttribute("role");
      this.cells.set(Number(c.dataset.device), c);
    }
    this.lit.clear();
    this.paint.apply(() => this.cells, true);
    this.light(null);
  }

  /** Whether a leaf card shows the mesh now (the picked leaf changed): drawn again if that
   *  changes what this shows. */
  setOnCard(onCard: boolean): void {
    if (onCard !== this.onCard) this.update(...this.last, onCard);
  }

  /** Whether this draws the mesh itself (no leaf card shows it). */
  get drawsMesh(): boolean {
    return !this.el.hidden && !this.onCard;
  }

  /** Light `c`'s groups (`p` from collectivePaint), or go back to the device colours (null). */
  light(p: GroupPaint | null, c?: Collective): void {
    this.paint.set("groups", p ? p.colors : null);
    this.paint.apply(() => this.cells, false);
    for (const id of this.lit) {
      const cell = this.cells.get(id);
      if (cell) {
        cell.classList.remove("sw-hl");
        cell.title = `device ${id}`;
      }
    }
    this.lit.clear();
    // Every device in a group: the colours say it all (no outlines, nothing to fade).
    const some = !!p && p.colors.size < this.meshSize;
    if (p) {
      for (const [id] of p.colors) {
        const cell = this.cells.get(id);
        if (!cell) continue;
        if (some) cell.classList.add("sw-hl");
        cell.title = `device ${id}\n${p.titles.get(id) ?? ""}`;
        this.lit.add(id);
      }
    }
    this.el.classList.toggle("sw-dimming", some && !this.onCard);
    if (!p && c) this.caption.textContent = `${c.kind}: its device groups were not sent (a bounded payload); the row's tooltip has them as XLA wrote them`;
    else if (!p) this.caption.textContent = this.onCard ? HINT_ON_CARD : HINT;
    else if (c) this.caption.textContent = `${c.kind}${c.axes.length ? ` over ${c.axes.join(", ")}` : ""}: ${groupsLabel(c)}`;
    else this.caption.textContent = plural(p.colors.size, "device");
  }

  /** The colour a device shows now (tests). */
  colorOf(id: number): string {
    return this.cells.get(id)?.style.background ?? "";
  }
}
