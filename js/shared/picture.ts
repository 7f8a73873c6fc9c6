// The "save picture" buttons: ask the kernel for the view's picture (view.to_svg(), a
// PictureMsg back) and download it as SVG, or as PNG drawn from that SVG in the browser.
// Shown only with a kernel: a saved page has no `_history` and nothing to answer.
import type { PictureMsg, PictureRequestMsg } from "../wire";
import { el } from "./dom";

export function isPicture(msg: unknown): msg is PictureMsg {
  return typeof msg === "object" && msg !== null && (msg as { type?: unknown }).type === "picture";
}

/** How long to wait for the kernel's picture (ms). */
export const PICTURE_TIMEOUT_MS = 20_000;

export class PictureButtons {
  readonly el: HTMLElement;
  private status: HTMLElement;
  private want: "svg" | "png" | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The last file saved (tests and the e2e test read it): name and size in bytes. */
  lastSaved: { name: string; bytes: number; type: string } | null = null;

  constructor(
    private readonly doc: Document,
    private readonly send: (msg: PictureRequestMsg) => void,
  ) {
    this.el = el(doc, "span", "sw-picture");
    const label = el(doc, "span", "sw-picture-label", "save picture");
    const svg = this.button("svg", "SVG", "Download this view as an SVG (view.to_svg())");
    const png = this.button("png", "PNG", "Download this view as a PNG (drawn from view.to_svg())");
    this.status = el(doc, "span", "sw-picture-status");
    this.status.setAttribute("aria-live", "polite");
    this.el.append(label, svg, png, this.status);
  }

  /** Shown only when a kernel can answer. */
  setAvailable(yes: boolean): void {
    this.el.hidden = !yes;
  }

  private button(kind: "svg" | "png", text: string, title: string): HTMLButtonElement {
    const b = el(this.doc, "button", "sw-button sw-picture-btn", text);
    b.type = "button";
    b.dataset.key = `save-${kind}`;
    b.title = title;
    b.addEventListener("click", () => this.ask(kind));
    return b;
  }

  private ask(kind: "svg" | "png"): void {
    this.want = kind;
    this.say("drawing…");
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.want) this.say("no answer from the kernel: in Python, view.to_svg() / view.to_png(path)");
      this.want = null;
    }, PICTURE_TIMEOUT_MS);
    this.send({ type: "picture_request" });
  }

  /** The kernel's answer: save it as asked. */
  async receive(msg: PictureMsg): Promise<void> {
    const kind = this.want;
    if (!kind) return;
    this.want = null;
    clearTimeout(this.timer);
    if (!msg.ok) {
      this.say(msg.error || "no picture");
      return;
    }
    if (kind === "svg") {
      this.save(new Blob([msg.svg], { type: "image/svg+xml" }), `${msg.name}.svg`);
      return;
    }
    const png = await svgToPng(this.doc, msg.svg, 2);
    if (png) this.save(png, `${msg.name}.png`);
    else this.say("this browser could not draw the PNG: save the SVG, or view.to_png(path)");
  }

  private save(blob: Blob, name: string): void {
    const win = this.doc.defaultView;
    const url = win?.URL?.createObjectURL ? win.URL.createObjectURL(blob) : "";
    const a = el(this.doc, "a");
    a.href = url;
    a.download = name;
    a.hidden = true;
    this.doc.body.append(a);
    a.click();
    a.remove();
    if (url) setTimeout(() => win!.URL.revokeObjectURL(url), 10_000);
    this.lastSaved = { name, bytes: blob.size, type: blob.type };
    this.say(`saved ${name}`);
  }

  private say(text: string): void {
    this.status.textContent = text;
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}

/** The SVG drawn onto a canvas at `scale`, as a PNG blob (null where the browser cannot). */
export async function svgToPng(doc: Document, svg: string, scale: number): Promise<Blob | null> {
  const m = /<svg[^>]*\bwidth="([\d.]+)"[^>]*\bheight="([\d.]+)"/.exec(svg);
  const win = doc.defaultView;
  if (!m || !win || typeof win.Image === "undefined") return null;
  const [w, h] = [Number(m[1]), Number(m[2])];
  const url = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
  const img = new win.Image();
  const loaded = new Promise<boolean>((res) => {
    img.onload = () => res(true);
    img.onerror = () => res(false);
  });
  img.src = url;
  if (!(await loaded)) return null;
  const canvas = doc.createElement("canvas");
  canvas.width = Math.round(w * scale);
  canvas.height = Math.round(h * scale);
  const ctx = canvas.getContext("2d");
  if (!ctx) return null;
  ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
  return new Promise((res) => {
    try {
      canvas.toBlob((b) => res(b), "image/png");
    } catch {
      res(null); // a tainted canvas
    }
  });
}
