// CSS of the tree view, scoped under .shardwidget like shared/styles.ts (whose theme variables
// --sw-* it uses, so light and dark themes follow JupyterLab's). Injected once per document.
import { injectCss } from "../shared/styles";

const STYLE_ID = "shardwidget-tree-styles";

const TREE_CSS = `
/* The view is the container its columns answer to (a notebook beside Lab's file browser is
   ~600 px): under 780 px the chart and the editor go above the table, which keeps its width. */
.shardwidget.sw-tree { container-type: inline-size; }
.shardwidget.sw-tree .sw-tree-top { display: grid; grid-template-columns: minmax(260px, 0.8fr) minmax(480px, 1.6fr); gap: 12px; margin-top: 8px; }
@container (max-width: 780px) { .shardwidget.sw-tree .sw-tree-top { grid-template-columns: minmax(0, 1fr); } }
.shardwidget .sw-tree-table { min-width: 0; }
.shardwidget .sw-tree-side { display: flex; flex-direction: column; gap: 12px; min-width: 0; }
.shardwidget .sw-tree-mem-top { display: flex; justify-content: space-between; align-items: center; gap: 8px; flex-wrap: wrap; }
.shardwidget .sw-tree-mem-head, .shardwidget .sw-tree-rules-title { font-weight: 600; font-size: 13px; }
.shardwidget .sw-tree-mem-plot { min-width: 0; overflow: hidden; }
.shardwidget .sw-tree-mem-plot svg { display: block; }
.shardwidget .sw-tree-axis { stroke: var(--sw-border1); }
.shardwidget .sw-tree-gridline { stroke: var(--sw-border); stroke-dasharray: 2 3; }
.shardwidget .sw-tree-slot { fill: var(--sw-bg2); stroke: var(--sw-border); stroke-width: 0.5; }
.shardwidget .sw-tree-slot-thin { stroke: none; }
.shardwidget .sw-tree-range { stroke: var(--sw-fg); stroke-width: 1; opacity: 0.7; }
.shardwidget .sw-tree-tick { font-size: 10px; fill: var(--sw-fg2); font-family: var(--sw-font); font-variant-numeric: tabular-nums; }
.shardwidget .sw-tree-hbm { stroke: var(--sw-error-fg); stroke-dasharray: 4 3; stroke-width: 1.5; }
.shardwidget .sw-tree-hbm-label { fill: var(--sw-error-fg); }
.shardwidget .sw-tree-over rect { stroke: var(--sw-error-fg); stroke-width: 1.5; }
.shardwidget .sw-tree-mem-legend { display: flex; flex-wrap: wrap; gap: 4px 12px; font-size: 11.5px; color: var(--sw-fg2); margin-top: 2px; }
.shardwidget .sw-tree-mem-key { display: inline-flex; align-items: center; gap: 4px; font-family: var(--sw-mono); }
.shardwidget .sw-tree-swatch { width: 10px; height: 10px; border-radius: 2px; display: inline-block; }
.shardwidget .sw-tree-mem-note { font-size: 12px; color: var(--sw-fg2); margin-top: 2px; }
.shardwidget .sw-tree-mem-note.sw-tree-mem-bad { color: var(--sw-error-fg); font-weight: 600; }
.shardwidget .sw-tree-rules-box { display: flex; border: 1px solid var(--sw-border); border-radius: 4px; margin-top: 4px; background: var(--sw-bg); }
.shardwidget .sw-tree-gutter { font: 12px/18px var(--sw-mono); color: var(--sw-fg3); text-align: right; padding: 4px 4px; min-width: 22px;
  background: var(--sw-bg2); overflow: hidden; max-height: 126px; user-select: none; }
.shardwidget .sw-tree-gutter-bad { color: var(--sw-error-fg); background: var(--sw-error-bg); font-weight: 700; }
.shardwidget textarea.sw-tree-rules-text { flex: 1; font: 12px/18px var(--sw-mono); border: 0; padding: 4px 6px; resize: vertical;
  min-height: 94px; max-height: 126px; background: transparent; color: var(--sw-fg); white-space: pre; overflow: auto; }
.shardwidget textarea.sw-tree-rules-text.sw-failed { outline: none; background: transparent; }
.shardwidget .sw-tree-bar { display: flex; align-items: center; gap: 8px; margin-bottom: 4px; flex-wrap: wrap; }
.shardwidget .sw-tree-filter { font-size: 12px; padding: 2px 6px; border: 1px solid var(--sw-border); border-radius: 4px; background: var(--sw-bg); color: var(--sw-fg); min-width: 140px; }
.shardwidget .sw-tree-count { font-size: 12px; color: var(--sw-fg2); }
.shardwidget .sw-tree-scroll { overflow-y: auto; border: 1px solid var(--sw-border); border-radius: 4px; position: relative; }
.shardwidget .sw-tree-spacer { position: relative; }
.shardwidget .sw-tree-body { position: absolute; left: 0; right: 0; top: 0; will-change: transform; }
/* Type and spec as wide as their longest text (--sw-type-w / --sw-spec-w, set from the tree) when
   there is room; the path takes the rest: a spec is never cut while the path has room. */
.shardwidget .sw-tree-row { display: grid;
  grid-template-columns: minmax(100px, 1fr) minmax(80px, var(--sw-type-w, 160px)) minmax(90px, var(--sw-spec-w, 150px)) 84px;
  gap: 8px; height: 22px; line-height: 22px; padding: 0 6px 0 0; font-size: 12px; white-space: nowrap; cursor: pointer; }
.shardwidget .sw-tree-row > span { overflow: hidden; text-overflow: ellipsis; }
.shardwidget .sw-tree-headrow { cursor: default; color: var(--sw-fg2); font-weight: 600; font-size: 11.5px; border-bottom: 1px solid var(--sw-border); }
.shardwidget .sw-tree-row:not(.sw-tree-headrow):hover { background: var(--sw-bg2); }
.shardwidget .sw-tree-group { font-weight: 600; background: var(--sw-bg2); }
.shardwidget .sw-tree-row > .sw-tree-path { padding-left: 6px; margin-left: -6px; }
.shardwidget .sw-tree-path, .shardwidget .sw-tree-spec, .shardwidget .sw-tree-type { font-family: var(--sw-mono); }
.shardwidget .sw-tree-bytes { text-align: right; font-variant-numeric: tabular-nums; }
.shardwidget .sw-tree-rep, .shardwidget .sw-tree-names { color: var(--sw-fg3); }
.shardwidget .sw-tree-ruled { color: var(--sw-accent); }
.shardwidget .sw-tree-selected { background: color-mix(in srgb, var(--sw-accent) 16%, transparent) !important; }
.shardwidget .sw-tree-large { box-shadow: inset 3px 0 0 var(--sw-warn-fg); }
.shardwidget .sw-tree-large .sw-tree-bytes, .shardwidget .sw-tree-large .sw-tree-rep { color: var(--sw-warn-fg); font-weight: 600; }
.shardwidget .sw-tree-leafhead { margin: 14px 0 4px; font-weight: 600; font-size: 13px; display: flex; gap: 10px; align-items: baseline; flex-wrap: wrap; }
.shardwidget .sw-tree-leafhead code { font-family: var(--sw-mono); font-weight: 400; }
.shardwidget .sw-tree-meshbar { margin-top: 4px; font-size: 12px; }
.shardwidget .sw-tree-notes { margin: 2px 0 0; padding-left: 1.2em; }
.shardwidget .sw-tree-title { display: flex; align-items: baseline; gap: 8px; flex-wrap: wrap; }
.shardwidget .sw-tree-static { font-size: 12px; color: var(--sw-fg2); margin-top: 8px; }
.shardwidget .sw-tree-static code { font-family: var(--sw-mono); }
`;

export function injectTreeStyles(el: HTMLElement): void {
  injectCss(el, STYLE_ID, TREE_CSS);
}
