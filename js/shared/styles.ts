// All CSS, scoped under .shardwidget. Injected once per document (or shadow root).
export const ROOT_CLASS = "shardwidget";
const STYLE_ID = "shardwidget-styles";

export const CSS = `
.shardwidget {
  --sw-fg: var(--jp-ui-font-color1, #1f2328);
  --sw-fg2: var(--jp-ui-font-color2, #57606a);
  --sw-fg3: var(--jp-ui-font-color3, #8b949e);
  --sw-bg: var(--jp-layout-color1, #ffffff);
  --sw-bg2: var(--jp-layout-color2, #f3f4f6);
  --sw-border: var(--jp-border-color2, #d0d7de);
  --sw-border1: var(--jp-border-color1, #afb8c1);
  --sw-accent: var(--jp-brand-color1, #1976d2);
  --sw-error-bg: var(--jp-error-color3, #fde7e9);
  --sw-error-fg: var(--jp-error-color0, #a4000f);
  --sw-warn-fg: var(--jp-warn-color0, #8a5300);
  --sw-mono: var(--jp-code-font-family, ui-monospace, SFMono-Regular, Menlo, Consolas, monospace);
  --sw-font: var(--jp-ui-font-family, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif);
  font-family: var(--sw-font);
  font-size: 13px;
  line-height: 1.4;
  color: var(--sw-fg);
  background: var(--sw-bg);
  box-sizing: border-box;
  max-width: 100%;
  padding: 8px 4px;
  position: relative;
}
.shardwidget *, .shardwidget *::before, .shardwidget *::after { box-sizing: border-box; }
.shardwidget [hidden] { display: none !important; }
.shardwidget .sw-visually-hidden {
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap;
}
.shardwidget :focus-visible { outline: 2px solid var(--sw-accent); outline-offset: 1px; }
.shardwidget .sw-muted { color: var(--sw-fg2); margin: 4px 0; }

/* header */
.shardwidget .sw-header { margin-bottom: 8px; }
.shardwidget .sw-header-top { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 6px 16px; }
.shardwidget .sw-header-left { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; min-width: 0; }
.shardwidget .sw-header-right { display: flex; align-items: center; gap: 8px; }
.shardwidget .sw-typeof { font-family: var(--sw-mono); font-size: 14px; font-weight: 600; color: var(--sw-fg); overflow-wrap: anywhere; }
.shardwidget .sw-badges { display: inline-flex; flex-wrap: wrap; gap: 4px; }
.shardwidget .sw-planned-badge { font-size: 11.5px; font-weight: 600; padding: 1px 8px; border-radius: 10px;
  color: #8250df; border: 1px solid color-mix(in srgb, #8250df 55%, transparent); background: color-mix(in srgb, #8250df 10%, transparent); }
.shardwidget .sw-tag {
  display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 11.5px; line-height: 18px;
  border: 1px solid var(--sw-border); color: var(--sw-fg2); background: var(--sw-bg2); white-space: nowrap;
}
.shardwidget .sw-tag-code { font-family: var(--sw-mono); color: var(--sw-fg); }
.shardwidget .sw-tag-accent { border-color: var(--sw-accent); color: var(--sw-accent); background: transparent; }
.shardwidget .sw-summary { color: var(--sw-fg2); margin-top: 3px; font-size: 12.5px; }
.shardwidget .sw-note { color: var(--sw-fg2); font-style: italic; font-size: 12.5px; margin-top: 2px; }
.shardwidget .sw-error {
  margin-top: 6px; padding: 6px 10px; border-radius: 4px; border-left: 4px solid var(--sw-error-fg);
  background: var(--sw-error-bg); color: var(--sw-error-fg); white-space: pre-wrap; font-size: 12.5px;
}
.shardwidget .sw-hint { margin-top: 4px; color: var(--sw-fg3); font-size: 12px; }
.shardwidget .sw-busy { color: var(--sw-fg2); font-size: 12px; display: inline-flex; align-items: center; gap: 5px; }
.shardwidget .shardwidget-spinner {
  width: 12px; height: 12px; border-radius: 50%; border: 2px solid var(--sw-border);
  border-top-color: var(--sw-accent); animation: shardwidget-spin 0.8s linear infinite; display: inline-block;
}
@keyframes shardwidget-spin { to { transform: rotate(360deg); } }
.shardwidget .sw-find input {
  font: inherit; font-size: 12px; padding: 2px 6px; width: 12.5em; border-radius: 4px;
  border: 1px solid var(--sw-border); background: var(--sw-bg); color: var(--sw-fg);
}
.shardwidget .sw-find input[aria-invalid="true"] { border-color: var(--sw-error-fg); }
.shardwidget .sw-find-msg { font-size: 11.5px; color: var(--sw-fg2); }
.shardwidget .sw-find { display: inline-flex; align-items: center; gap: 5px; }
.shardwidget .sw-find-label { font-size: 11.5px; color: var(--sw-fg2); white-space: nowrap; }
.shardwidget .sw-find-msg.sw-invalid { color: var(--sw-error-fg); }

/* controls */
.shardwidget .sw-controls { margin: 0 0 10px; }
.shardwidget .sw-controls-all { border: 0; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 8px; min-width: 0; }
.shardwidget .sw-controls-all:disabled { opacity: 0.55; }
.shardwidget .sw-fs {
  border: 1px solid var(--sw-border); border-radius: 6px; margin: 0; padding: 4px 10px 8px;
  display: flex; flex-direction: column; gap: 5px; min-width: 0;
}
.shardwidget .sw-fs legend { font-size: 11px; text-transform: uppercase; letter-spacing: 0.05em; color: var(--sw-fg2); padding: 0 4px; }
.shardwidget .sw-row { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 10px; }
.shardwidget .sw-axes { display: flex; flex-direction: column; gap: 4px; }
.shardwidget .sw-spec { display: flex; flex-wrap: wrap; gap: 5px 10px; }
.shardwidget .sw-spec select { max-width: 13em; }
.shardwidget .sw-fs .sw-button { align-self: flex-start; }
.shardwidget .sw-field { display: inline-flex; align-items: center; gap: 5px; font-size: 12px; color: var(--sw-fg2); }
.shardwidget .sw-field > span { white-space: nowrap; }
.shardwidget select, .shardwidget input[type="text"], .shardwidget .sw-button {
  font: inherit; font-size: 12.5px; color: var(--sw-fg); background: var(--sw-bg);
  border: 1px solid var(--sw-border1); border-radius: 4px; padding: 2px 4px; min-height: 24px;
}
.shardwidget input[type="text"] { font-family: var(--sw-mono); width: 6em; }
.shardwidget input[aria-invalid="true"] { border-color: var(--sw-error-fg); }
.shardwidget select:disabled, .shardwidget input:disabled, .shardwidget .sw-button:disabled { cursor: not-allowed; opacity: 0.7; }
.shardwidget .sw-button { padding: 2px 12px; cursor: pointer; }
.shardwidget .sw-button:hover:not(:disabled) { border-color: var(--sw-accent); color: var(--sw-accent); }
.shardwidget .sw-picture { display: inline-flex; gap: 3px; align-items: center; font-size: 11.5px; color: var(--sw-fg2); }
.shardwidget .sw-picture .sw-picture-btn { padding: 1px 6px; font-size: 11px; }
.shardwidget .sw-picture-status:not(:empty) { margin-left: 4px; }
.shardwidget .sw-history-row { display: flex; gap: 4px; flex-wrap: wrap; align-items: center; }
.shardwidget .sw-ctl-actions { align-self: flex-end; padding: 0 0 8px 2px; }
.shardwidget .sw-history { padding: 2px 8px; }
.shardwidget .sw-spec-preview { font-family: var(--sw-mono); font-size: 12px; color: var(--sw-fg); }
.shardwidget .sw-ctl-status { font-size: 11.5px; color: var(--sw-accent); min-height: 1em; }
/* A field's message floats under its row, over what follows, as a browser's own validation
   bubble does: it appearing or going must not move the controls. */
.shardwidget .sw-axis-row, .shardwidget .sw-tr-axis { position: relative; }
.shardwidget .sw-field-msg {
  position: absolute; left: 0; top: 100%; z-index: 5; margin-top: 1px; padding: 2px 6px; border-radius: 3px;
  font-size: 11.5px; color: var(--sw-error-fg); background: var(--sw-error-bg); border: 1px solid var(--sw-error-fg);
  white-space: nowrap; pointer-events: none;
}
.shardwidget .sw-field-msg:empty { display: none; }
.shardwidget .sw-pending select, .shardwidget .sw-pending input { border-style: dashed; }
.shardwidget .sw-disabled-note { font-size: 12px; color: var(--sw-warn-fg); margin-bottom: 6px; }

/* panes */
.shardwidget .sw-main { display: flex; flex-wrap: wrap; gap: 16px 24px; align-items: flex-start; }
.shardwidget .sw-array { flex: 1 1 420px; min-width: 0; max-width: 800px; }
.shardwidget .sw-side { flex: 1 1 240px; min-width: 220px; max-width: 460px; display: flex; flex-direction: column; gap: 12px; }
.shardwidget .sw-pane-title { font-size: 12px; font-weight: 600; color: var(--sw-fg2); margin-bottom: 4px; }
.shardwidget .sw-viewbar { display: flex; flex-wrap: wrap; gap: 6px 18px; align-items: center; margin-bottom: 8px; font-size: 12px; }
.shardwidget .sw-viewdims { display: flex; gap: 10px; }
.shardwidget .sw-slider { display: inline-flex; align-items: center; gap: 6px; color: var(--sw-fg2); }
.shardwidget .sw-slider input[type="range"] { width: 150px; accent-color: var(--sw-accent); }
.shardwidget .sw-slider-value { font-family: var(--sw-mono); font-size: 11.5px; color: var(--sw-fg); white-space: pre; }

/* array grid */
.shardwidget .sw-grid-host { max-width: 100%; overflow-x: auto; padding: 4px; }
.shardwidget .sw-grid-wrap { position: relative; }
.shardwidget .sw-grid { position: absolute; background: var(--sw-bg); }
/* The grid is one tab stop; the keyboard cursor (a block) shows while it has keyboard focus. */
.shardwidget .sw-grid:focus { outline: none; }
.shardwidget .sw-grid.sw-kbd { outline: 2px solid var(--sw-accent); outline-offset: 3px; }
.shardwidget .sw-grid.sw-kbd .sw-block.sw-cursor {
  outline: 2px solid var(--sw-accent); outline-offset: 1px; box-shadow: 0 0 0 1px var(--sw-bg); z-index: 3;
}
.shardwidget .sw-axis-title { position: absolute; font-size: 11px; color: var(--sw-fg2); white-space: nowrap; overflow: hidden; }
.shardwidget .sw-axis-title-col { top: 0; height: 16px; text-align: left; }
.shardwidget .sw-axis-title-row {
  left: 0; width: 16px; writing-mode: vertical-rl; text-align: left;
}
.shardwidget .sw-tick {
  position: absolute; font-family: var(--sw-mono); font-size: 11px; color: var(--sw-fg2);
  white-space: nowrap; line-height: 14px;
}
.shardwidget .sw-tick-col { top: 17px; height: 14px; text-align: center; }
.shardwidget .sw-tick-col.sw-tick-start { text-align: left; border-left: 1px solid var(--sw-border1); padding-left: 2px; }
.shardwidget .sw-tick-row { display: flex; align-items: center; justify-content: flex-end; }
.shardwidget .sw-tick-row.sw-tick-start { align-items: flex-start; border-top: 1px solid var(--sw-border1); }
/* DOM blocks sit in CSS grid tracks (set on .sw-grid); a 1 px gap right and below each. */
.shardwidget .sw-grid.sw-grid-dom { display: grid; }
.shardwidget .sw-grid-dom.sw-gap > .sw-block, .shardwidget .sw-grid-dom.sw-gap > .sw-hole { margin: 0 1px 1px 0; }
.shardwidget .sw-block {
  position: relative; overflow: hidden; cursor: pointer; display: flex; align-items: center; justify-content: center;
  border-radius: 2px; min-width: 0; min-height: 0; z-index: 0; /* z-index: see .sw-dev */
}
/* A block with a thumbnail: a border of the device colour around its part of the atlas image. */
.shardwidget .sw-block.sw-t {
  /* the device colour is the block's (inline) colour; the label chip and badge set their own */
  border-color: currentColor; background-color: currentColor;
  border-style: solid; background-image: var(--sw-atlas); background-repeat: no-repeat; image-rendering: pixelated;
  /* a white ring between the device colour and the heatmap: the ramp's greens and yellows must
     not run into green and yellow device borders */
  box-shadow: inset 0 0 0 1px #ffffff;
}
.shardwidget .sw-block:hover, .shardwidget .sw-block.sw-hl { outline: 2px solid var(--sw-fg); outline-offset: -2px; }
.shardwidget .sw-block.sw-pinned { outline: 3px solid var(--sw-fg); outline-offset: -3px; }
.shardwidget .sw-block.sw-found { outline: 3px solid #e4002b; outline-offset: -3px; }
.shardwidget .sw-block.sw-hl, .shardwidget .sw-block.sw-pinned, .shardwidget .sw-block.sw-found { z-index: 2; }
/* Dimming: one veil over the grid, under the marked blocks, rather than a style change on
   every block. */
.shardwidget .sw-grid::after {
  content: ""; position: absolute; inset: 0; background: var(--sw-bg); opacity: 0; z-index: 1;
  pointer-events: none;
}
/* The veil is always there (adding a box would re-lay-out the grid): dimming changes its opacity. */
.shardwidget .sw-grid.sw-dimming::after { opacity: 0.7; }
.shardwidget .sw-thumb {
  position: absolute; image-rendering: pixelated; image-rendering: crisp-edges; border-radius: 1px;
  background-repeat: no-repeat; box-shadow: 0 0 0 1px #ffffff;
}
.shardwidget .sw-spec-note { font-size: 11.5px; color: var(--sw-warn-fg); margin: 2px 0 4px; width: 0; min-width: 100%; }
.shardwidget .sw-heat-legend {
  display: flex; align-items: center; flex-wrap: wrap; gap: 2px 6px; margin: 6px 0 0 4px;
  font-size: 11px; color: var(--sw-fg2);
}
.shardwidget .sw-heat-legend .sw-rampbar { width: 96px; }
.shardwidget .sw-heat-legend .sw-num { font-family: var(--sw-mono); }
.shardwidget .sw-heat-note { margin: 2px 0 0; font-size: 11px; color: var(--sw-warn-fg); max-width: 260px; }
.shardwidget .sw-label {
  position: relative; font-family: var(--sw-mono); font-size: 12px; line-height: 14px; white-space: nowrap;
  pointer-events: none; font-weight: 600;
}
.shardwidget .sw-label.sw-small { font-size: 10px; line-height: 12px; }
.shardwidget .sw-label.sw-ink-dark { color: #000000; }
.shardwidget .sw-label.sw-ink-light { color: #ffffff; }
.shardwidget .sw-chip {
  padding: 0 3px; border-radius: 3px; color: #111; background: rgba(255, 255, 255, 0.86);
}
.shardwidget .sw-badge {
  position: absolute; right: 2px; bottom: 2px; font-family: var(--sw-mono); font-size: 10px; line-height: 12px;
  padding: 0 3px; border-radius: 3px; background: rgba(0, 0, 0, 0.72); color: #fff; pointer-events: none;
}
.shardwidget .sw-canvas { display: block; cursor: crosshair; }
.shardwidget .sw-grid .sw-thumb { background-image: var(--sw-atlas); }
.shardwidget .sw-thumb-canvas { position: absolute; inset: 0; width: 100%; height: 100%; image-rendering: pixelated; }

/* mesh */
.shardwidget .sw-mesh-body { display: flex; flex-direction: column; gap: 4px; }
.shardwidget .sw-mesh-axis { font-size: 11px; color: var(--sw-fg2); font-family: var(--sw-mono); }
.shardwidget .sw-mesh-inner { display: flex; align-items: flex-start; gap: 2px; }
.shardwidget .sw-mesh-axis-row { writing-mode: vertical-rl; width: 16px; text-align: left; }
.shardwidget .sw-mesh-grid { display: grid; }
.shardwidget .sw-mesh-list { display: flex; flex-wrap: wrap; gap: 4px; }
.shardwidget .sw-mesh-multiples { display: flex; flex-wrap: wrap; gap: 8px 10px; }
.shardwidget .sw-mesh-multiples-grid { display: grid; }
.shardwidget .sw-mesh-panel-title { font-family: var(--sw-mono); font-size: 10.5px; color: var(--sw-fg2); }
.shardwidget .sw-dev {
  display: flex; align-items: center; justify-content: center; font-family: var(--sw-mono); font-weight: 600;
  border-radius: 2px; cursor: pointer; overflow: hidden; white-space: nowrap;
  /* positioned and stacked from the start: a highlight's z-index then changes paint only, never
     the layout of a grid of 4096 cells */
  position: relative; z-index: 0;
}
.shardwidget .sw-dev-sq { flex: none; display: inline-block; line-height: 1; }
.shardwidget .sw-dev.sw-ink-dark { color: #000000; }
.shardwidget .sw-dev.sw-ink-light { color: #ffffff; }
.shardwidget .sw-dev.sw-f12 { font-size: 12px; }
.shardwidget .sw-dev.sw-f10 { font-size: 10px; }
.shardwidget .sw-dev.sw-f9 { font-size: 9px; }
.shardwidget .sw-mesh-folds { display: flex; align-items: flex-start; }
.shardwidget .sw-mesh-bands { display: flex; flex-direction: column; }
.shardwidget .sw-mesh-strip { flex: none; }
.shardwidget .sw-mesh-fold-title { font-family: var(--sw-mono); font-size: 9px; line-height: 11px; height: 11px; color: var(--sw-fg2); white-space: nowrap; overflow: visible; }
.shardwidget .sw-dev:hover, .shardwidget .sw-dev.sw-hl { box-shadow: 0 0 0 2px var(--sw-fg); position: relative; z-index: 2; }
.shardwidget .sw-dev.sw-pinned { box-shadow: 0 0 0 3px var(--sw-fg); position: relative; z-index: 2; }
.shardwidget .sw-dev.sw-found { box-shadow: 0 0 0 3px #e4002b; position: relative; z-index: 3; }
.shardwidget .sw-dev.sw-holder { box-shadow: 0 0 0 2px var(--sw-accent); }
/* Dimming: one veil over each mesh grid, under the marked cells (z-index 2+), instead of a
   style change on every cell: hovering costs the same with 8 devices as with 4096. */
.shardwidget .sw-mesh-grid, .shardwidget .sw-mesh-list { position: relative; }
.shardwidget .sw-mesh .sw-mesh-grid::after, .shardwidget .sw-mesh .sw-mesh-list::after {
  content: ""; position: absolute; inset: -1px; background: var(--sw-bg); opacity: 0; z-index: 1;
  pointer-events: none;
}
/* Always there, shown by opacity: creating the veil on hover re-laid-out a 4096-cell grid. */
.shardwidget .sw-mesh.sw-dimming .sw-mesh-grid::after, .shardwidget .sw-mesh.sw-dimming .sw-mesh-list::after { opacity: 0.7; }
.shardwidget .sw-mesh-head { display: flex; flex-wrap: wrap; align-items: baseline; justify-content: space-between; gap: 4px 10px; margin-bottom: 4px; }
.shardwidget .sw-mesh-head .sw-pane-title { margin-bottom: 0; }
/* mesh axes | physical */
.shardwidget .sw-seg { display: inline-flex; border: 1px solid var(--sw-border1); border-radius: 4px; overflow: hidden; }
.shardwidget .sw-seg-btn {
  font: inherit; font-size: 11.5px; line-height: 18px; padding: 0 8px; border: 0; margin: 0; cursor: pointer;
  background: var(--sw-bg); color: var(--sw-fg2);
}
.shardwidget .sw-seg-btn + .sw-seg-btn { border-left: 1px solid var(--sw-border1); }
.shardwidget .sw-seg-btn[aria-pressed="true"] { background: var(--sw-accent); color: var(--sw-bg); }
.shardwidget .sw-seg-btn:hover:not([aria-pressed="true"]) { color: var(--sw-accent); }
.shardwidget .sw-seg-btn:focus-visible { outline-offset: -2px; }
/* physical view: one grid of chips per z; a chip's devices (cores) inside its cell */
.shardwidget .sw-phys { display: grid; gap: 8px 12px; align-items: start; }
.shardwidget .sw-phys-grid { display: grid; align-items: center; justify-items: center; }
.shardwidget .sw-phys-tick { font-family: var(--sw-mono); font-size: 9.5px; line-height: 11px; color: var(--sw-fg3); }
.shardwidget .sw-phys-tick-row { justify-self: end; padding-right: 2px; }
.shardwidget .sw-phys-domain { font-size: 10.5px; color: var(--sw-fg2); border-top: 1px dashed var(--sw-fg3); margin-top: 2px; }
.shardwidget .sw-mesh-links { margin-top: 6px; font-size: 11px; color: var(--sw-fg2); font-family: var(--sw-mono); }
.shardwidget .sw-mesh-links .sw-link-network { color: var(--sw-fg); font-weight: 600; }
.shardwidget .sw-chipcell {
  display: flex; flex-wrap: wrap; gap: 1px; padding: 1px; align-content: center; justify-content: center;
  border-radius: 3px; background: var(--sw-bg2); border: 1px solid var(--sw-border);
}
.shardwidget .sw-chipcell > .sw-dev { flex: none; }
.shardwidget .sw-chip-empty { border-style: dashed; background: transparent; }
.shardwidget .sw-chip-bare { border: 0; padding: 0; gap: 0; border-radius: 0; background: transparent; }
.shardwidget .sw-chip-bare.sw-chip-empty { background: var(--sw-bg2); }
.shardwidget .sw-chipcell > .sw-dev { border-radius: 1px; }
/* colour key (more than 16 devices) */
.shardwidget .sw-key { margin-top: 6px; font-size: 11.5px; color: var(--sw-fg2); }
.shardwidget .sw-key > summary { cursor: pointer; font-weight: 600; font-size: 12px; width: max-content; }
.shardwidget .sw-key-body { display: flex; flex-wrap: wrap; gap: 4px 24px; margin-top: 3px; }
.shardwidget .sw-key-rep { margin: 0; padding-left: 16px; min-width: 16em; }
.shardwidget .sw-key-marks { display: grid; grid-template-columns: max-content 1fr; gap: 1px 8px; margin: 0; max-width: 52em; }
.shardwidget .sw-key-marks dt { font-weight: 600; }
.shardwidget .sw-key-marks dd { margin: 0; }
.shardwidget .sw-key-bar { color: var(--sw-fg3); }
.shardwidget .sw-legend { margin-top: 8px; font-size: 11.5px; color: var(--sw-fg2); }
.shardwidget .sw-legend > summary { cursor: pointer; font-weight: 600; font-size: 12px; width: max-content; }
.shardwidget .sw-legend-text { margin: 3px 0 5px; max-width: 44em; }
.shardwidget .sw-legend-chart { display: grid; gap: 1px; align-items: center; width: max-content; }
.shardwidget .sw-legend-head { font-family: var(--sw-mono); font-size: 9.5px; color: var(--sw-fg3); padding-right: 6px; }
.shardwidget .sw-legend-step { text-align: center; padding: 0; }
.shardwidget .sw-legend-band { font-family: var(--sw-mono); font-size: 10.5px; color: var(--sw-fg2); padding-right: 6px; text-align: right; }
.shardwidget .sw-legend-swatch { display: block; width: 14px; height: 12px; border-radius: 1px; }
.shardwidget .sw-legend-swatch.sw-found { box-shadow: 0 0 0 2px #e4002b; position: relative; z-index: 1; }

/* detail */
.shardwidget .sw-detail {
  border: 1px solid var(--sw-border); border-radius: 6px; padding: 6px 10px 10px; background: var(--sw-bg);
  font-size: 12.5px; outline: none;
}
/* A card floated beside its pinned block (view.ts placeDetail), over the side column. */
.shardwidget .sw-side { position: relative; }
.shardwidget .sw-detail.sw-detail-float {
  position: absolute; left: 0; right: 0; z-index: 6; box-shadow: 0 4px 16px rgba(0, 0, 0, 0.18);
}
.shardwidget .sw-detail-head { display: flex; align-items: center; justify-content: space-between; }
.shardwidget .sw-detail-title { font-size: 13px; margin: 0; font-weight: 600; }
.shardwidget .sw-detail h4 { font-size: 11px; text-transform: uppercase; letter-spacing: 0.05em; color: var(--sw-fg2); margin: 8px 0 3px; font-weight: 600; }
.shardwidget .sw-close {
  font: inherit; font-size: 16px; line-height: 1; border: 0; background: transparent; color: var(--sw-fg2);
  cursor: pointer; padding: 2px 6px; border-radius: 4px;
}
.shardwidget .sw-close:hover { background: var(--sw-bg2); color: var(--sw-fg); }
.shardwidget .sw-kv { display: grid; grid-template-columns: max-content 1fr; gap: 1px 10px; margin: 4px 0 0; }
.shardwidget .sw-kv dt { color: var(--sw-fg2); white-space: nowrap; }
.shardwidget .sw-kv dd { margin: 0; font-family: var(--sw-mono); font-size: 12px; overflow-wrap: anywhere; }
.shardwidget .sw-stats { grid-template-columns: repeat(2, max-content 1fr); }
.shardwidget .sw-scroll { max-width: 100%; max-height: 220px; overflow: auto; }
.shardwidget .sw-devtable, .shardwidget .sw-values { border-collapse: collapse; font-size: 12px; }
.shardwidget .sw-devtable th { text-align: left; font-weight: 500; color: var(--sw-fg2); padding: 1px 8px 1px 0; font-size: 11px; }
.shardwidget .sw-devtable td { padding: 1px 8px 1px 0; font-family: var(--sw-mono); }
.shardwidget .sw-devtable tr.sw-current td { font-weight: 700; }
.shardwidget .sw-devtable tbody tr:hover td { background: rgba(127, 127, 127, 0.12); }
.shardwidget .sw-holders { max-height: 300px; }
.shardwidget .sw-holders thead th { position: sticky; top: 0; background: var(--sw-bg); z-index: 1; }
.shardwidget .sw-holder-ids { margin: 0 0 3px; font-family: var(--sw-mono); font-size: 11.5px; color: var(--sw-fg2); overflow-wrap: anywhere; }
.shardwidget .sw-remote { color: var(--sw-warn-fg); font-family: var(--sw-font) !important; }
.shardwidget .sw-swatch { display: inline-block; min-width: 22px; text-align: center; border-radius: 3px; padding: 0 3px; font-weight: 600; }
.shardwidget .sw-values td {
  font-family: var(--sw-mono); text-align: right; padding: 1px 6px; border: 1px solid var(--sw-border);
  white-space: nowrap;
}
.shardwidget .sw-fig { margin: 8px 0 0; display: flex; flex-direction: column; align-items: flex-start; gap: 3px; }
.shardwidget .sw-thumb-big { position: static; border: 1px solid var(--sw-border); }
.shardwidget .sw-rampbar {
  display: block; width: 120px; height: 6px; border-radius: 3px;
  background: linear-gradient(90deg, #440154, #472c7a, #3b518b, #2c718e, #21908d, #27ad81, #5cc863, #aadc32, #fde725);
}
.shardwidget .sw-empty { color: var(--sw-fg2); padding: 20px 0; }
`;

/** Insert a stylesheet once (by id) into the document (or shadow root) that holds `el`. */
export function injectCss(el: HTMLElement, id: string, css: string): void {
  const root = el.getRootNode() as Document | ShadowRoot;
  const doc = el.ownerDocument;
  const isShadow = typeof ShadowRoot !== "undefined" && root instanceof ShadowRoot;
  const container: ParentNode = isShadow ? root : doc.head ?? doc.documentElement;
  if (container.querySelector?.(`style#${id}`)) return;
  const s = doc.createElement("style");
  s.id = id;
  s.textContent = css;
  container.append(s);
}

/** The stylesheet both views build on (theme variables --sw-*, header, grid, mesh, detail). */
export function injectStyles(el: HTMLElement): void {
  injectCss(el, STYLE_ID, CSS);
}
