// The physical view (devices with coordinates, TPU): x across, y down, a grid per z; a chip's
// devices (cores) side by side in the chip's cell.
import { plural, textWidth } from "../../shared/text";
import { cellHtml, chipCells, physicalSizing, type PhysicalLayout, type PhysicalPlace } from "./geometry";

/** Devices by physical coords: x across, y down, one small grid per z; a chip's devices (cores)
 *  side by side inside the chip's cell. GPUs: a row per host; `domainHosts` (> 1: hosts one
 *  NVLink domain joins, GB200 NVL72) heads each domain's rows. */
export function drawPhysical(
doc: Document,
colorOf: (id: number) => string,
p: PhysicalLayout,
title: HTMLElement,
body: HTMLElement,
width: number,
domainHosts = 0,
): void {
  const n = p.places.length;
  const nChips = new Set(p.places.map((q) => q.coords.join(","))).size;
  title.textContent = p.gpu
    ? `Physical: ${plural(n, "GPU")} on ${plural(p.rows * p.panels.length, "host")}`
    : `Physical: ${plural(nChips, "chip")}${p.perChip > 1 ? ` × ${p.perChip} cores` : ""}`;
  title.title = `${plural(n, "device")} by physical coords`;
  const { perRow, chip } = physicalSizing(p, width);
  let maxId = 0;
  for (const q of p.places) maxId = Math.max(maxId, q.id);
  const sub = chipCells(chip, p.perChip, maxId);
  // Ids on every device or on none (not just on the short ones).
  const labels = sub.h >= 12 && textWidth(String(maxId), 10) <= sub.w - 2;
  const gap = chip >= 10 ? 3 : 1;
  const ticks = chip >= 12;
  const note = doc.createElement("div");
  note.className = "sw-mesh-axis";
  const span = (lo: number, k: number) => (k > 1 ? `${lo}–${lo + k - 1}` : String(lo));
  const parts = p.gpu
    ? [`GPU ${span(p.x0, p.cols)} →`, `host ${span(p.y0, p.rows)} ↓ (a row per host)`]
    : [`x ${span(p.x0, p.cols)} →`, `y ${span(p.y0, p.rows)} ↓`];
  if (p.panels.length > 1) parts.push(`a grid per ${p.panels[0].split("=")[0]}`);
  if (p.perChip > 1) parts.push(`${p.perChip} cores per chip`);
  note.textContent = parts.join(" · ");
  body.append(note);
  const focusable = n <= 64;
  // chip (panel, column, row) -> its devices, in sub-cell order
  const chips = new Map<number, PhysicalPlace[]>();
  const chipKey = (panel: number, c: number, r: number) => (panel * p.rows + r) * p.cols + c;
  for (const q of p.places) {
    const k = chipKey(q.panel, q.col, q.row);
    let l = chips.get(k);
    if (!l) chips.set(k, (l = []));
    l.push(q);
  }
  for (const l of chips.values()) l.sort((a, b) => a.sub - b.sub);
  const chipClass = chip >= 12 ? "sw-chipcell" : "sw-chipcell sw-chip-bare";
  const chipStyle = `width:${chip}px;height:${chip}px`;
  // The chip's devices wrap in a flex box after `sub.cols` of them (cheaper than a grid each).
  const html: string[] = [];
  p.panels.forEach((label, pi) => {
    html.push(`<div class="sw-phys-panel" data-panel="${label || "all"}">`);
    if (label) html.push(`<div class="sw-mesh-panel-title">${label}</div>`);
    html.push(
      `<div class="sw-phys-grid sw-mesh-grid" style="grid-template-columns:${ticks ? "auto " : ""}` +
        `repeat(${p.cols}, ${chip}px);gap:${gap}px">`,
    );
    if (ticks) {
      html.push("<span></span>");
      for (let c = 0; c < p.cols; c++) html.push(`<span class="sw-phys-tick">${p.x0 + c}</span>`);
    }
    for (let r = 0; r < p.rows; r++) {
      const head = p.gpu ? domainHead(pi * p.rows + r, domainHosts, p.rows * p.panels.length) : "";
      if (head) html.push(head);
      if (ticks) html.push(`<span class="sw-phys-tick sw-phys-tick-row">${p.y0 + r}</span>`);
      for (let c = 0; c < p.cols; c++) {
        const members = chips.get(chipKey(pi, c, r));
        if (!members) {
          const where = `x=${p.x0 + c}, y=${p.y0 + r}${label ? `, ${label}` : ""}`;
          html.push(`<div class="${chipClass} sw-chip-empty" style="${chipStyle}" title="no device of this array at ${where}"></div>`);
          continue;
        }
        html.push(`<div class="${chipClass}" style="${chipStyle}" data-coords="${members[0].coords.join(",")}">`);
        for (const q of members)
          html.push(cellHtml(q.id, colorOf(q.id), sub.w, sub.h, focusable, labels, ` data-sub="${q.sub}"`));
        html.push("</div>");
      }
    }
    html.push("</div></div>");
  });
  const multiples = doc.createElement("div");
  multiples.className = "sw-phys";
  multiples.style.gridTemplateColumns = `repeat(${Math.min(perRow, p.panels.length)}, max-content)`;
  multiples.innerHTML = html.join("");
  body.append(multiples);
}

/** The heading row of an NVLink domain that spans hosts, before its first host's row (host:
 *  the host's number over all slices); "" for any other row or where no domain spans hosts. */
function domainHead(host: number, domainHosts: number, hosts: number): string {
  if (domainHosts <= 1 || host % domainHosts !== 0) return "";
  const last = Math.min(host + domainHosts, hosts) - 1;
  const d = host / domainHosts;
  return (
    `<div class="sw-phys-domain" style="grid-column:1/-1" data-domain="${d}">` +
    `NVLink domain ${d}: hosts ${host}–${last}</div>`
  );
}
