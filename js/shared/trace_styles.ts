// CSS of the function view, its collectives table and the embedded leaf cards (the array and tree
// views show both), scoped under .shardwidget like shared/styles.ts, whose --sw-* theme it uses.
import { injectCss } from "./styles";

const STYLE_ID = "shardwidget-trace-styles";

const FUNCTION_CSS = `
.shardwidget .shardwidget.sw-embedded { padding: 0; background: transparent; }
.shardwidget.sw-trace .sw-tr-title { gap: 6px 8px; }
.shardwidget .sw-tr-fn { font-size: 15px; }
.shardwidget select.sw-failed { outline: 2px solid var(--sw-error-fg); outline-offset: 1px; background: var(--sw-error-bg); }
.shardwidget .sw-failed-note { font-size: 11px; color: var(--sw-error-fg); white-space: nowrap; margin-left: 4px; }
.shardwidget .sw-tr-metrics { font-variant-numeric: tabular-nums; }
.shardwidget .sw-tr-modenote { margin-top: 2px; }
.shardwidget .sw-compile-with { display: inline-flex; flex-wrap: wrap; align-items: center; gap: 4px 8px; font-size: 12px; color: var(--sw-fg2); }
.shardwidget .sw-compile-with-why { font-size: 11.5px; color: var(--sw-fg2); }
.shardwidget .sw-tr-error { margin-bottom: 4px; }
.shardwidget .sw-tr-mesh { margin: 8px 0 4px; }
.shardwidget .sw-tr-meshfs { flex-direction: row; }
.shardwidget .sw-tr-axis { display: inline-flex; flex-wrap: wrap; align-items: center; gap: 4px; }
.shardwidget .sw-tr-section { margin-top: 14px; min-width: 0; }
.shardwidget .sw-tr-h {
  display: flex; flex-wrap: wrap; align-items: baseline; gap: 2px 12px; margin: 0 0 8px; padding: 0 0 3px;
  border-bottom: 1px solid var(--sw-border); font-size: 13.5px; font-weight: 600; line-height: 1.4;
  color: var(--sw-fg); font-family: var(--sw-font);
}
.shardwidget .sw-tr-h-note { font-weight: 400; font-size: 12px; color: var(--sw-fg2); }
.shardwidget .sw-tr-body { display: flex; flex-direction: column; gap: 10px; min-width: 0; }
/* one input / output */
.shardwidget .sw-tr-leaf {
  border: 1px solid var(--sw-border); border-radius: 6px; padding: 8px 10px 10px; min-width: 0;
  background: var(--sw-bg);
}
.shardwidget .sw-tr-leaf[data-side="out"] { border-left: 3px solid var(--sw-accent); }
.shardwidget .sw-tr-leaf-head { display: flex; flex-direction: column; gap: 3px; margin-bottom: 6px; }
.shardwidget .sw-tr-leaf-top { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 14px; }
.shardwidget .sw-tr-path { font-family: var(--sw-mono); font-weight: 700; font-size: 14px; color: var(--sw-fg); }
.shardwidget .sw-tr-typeof { font-family: var(--sw-mono); font-size: 13px; color: var(--sw-fg); overflow-wrap: anywhere; }
.shardwidget .sw-tr-secondary { color: var(--sw-fg2); font-size: 12px; }
.shardwidget .sw-tr-local { font-family: var(--sw-mono); font-size: 12px; color: var(--sw-fg); }
.shardwidget .sw-tr-local.sw-tr-headline { font-size: 14px; font-weight: 700; }
.shardwidget .sw-tr-facts { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 12px; font-size: 12px; color: var(--sw-fg2); }
.shardwidget .sw-tr-note { color: var(--sw-fg); font-style: italic; }
/* the jaxpr panel: a <details> whose summary is a section heading */
.shardwidget details.sw-tr-jaxpr > summary { cursor: pointer; list-style-position: inside; display: list-item; }
.shardwidget details.sw-tr-jaxpr > summary .sw-tr-h-note { margin-left: 12px; }
.shardwidget details.sw-tr-jaxpr:not([open]) > summary { border-bottom-style: dashed; }
.shardwidget .sw-tr-jaxpr-text {
  font-family: var(--sw-mono); font-size: 12px; line-height: 1.35; color: var(--sw-fg); background: var(--sw-bg2);
  border: 1px solid var(--sw-border); border-radius: 4px; padding: 6px 8px; margin: 0;
  max-height: 420px; overflow: auto; white-space: pre;
}
.shardwidget .sw-tr-leaf-ctl { display: flex; flex-wrap: wrap; align-items: center; gap: 5px 10px; margin-bottom: 4px; }
.shardwidget .sw-tr-ctl-label { font-family: var(--sw-mono); font-size: 11.5px; color: var(--sw-fg2); }
.shardwidget .sw-tr-chose { font-family: var(--sw-mono); font-size: 12px; color: var(--sw-fg2); }
.shardwidget .sw-tr-leaf .sw-hint { margin: 0 0 4px; }
.shardwidget .sw-tr-leaf-grid { min-width: 0; }
/* Several grids on one page: each smaller than a lone array view's. */
.shardwidget .sw-tr-leaf .sw-array { flex: 1 1 340px; max-width: 560px; }
.shardwidget .sw-tr-leaf .sw-side { flex: 1 1 200px; max-width: 380px; }
/* tables */
.shardwidget .sw-tr-scroll { max-width: 100%; overflow-x: auto; }
.shardwidget .sw-tr-table { border-collapse: collapse; font-size: 12.5px; }
.shardwidget .sw-tr-table th {
  text-align: left; font-weight: 500; font-size: 11.5px; color: var(--sw-fg2); padding: 2px 14px 3px 6px;
  border-bottom: 1px solid var(--sw-border1); white-space: nowrap;
}
.shardwidget .sw-tr-table td { padding: 3px 14px 3px 6px; border-bottom: 1px solid var(--sw-border); vertical-align: middle; }
.shardwidget .sw-tr-mono { font-family: var(--sw-mono); font-size: 12px; }
.shardwidget .sw-tr-num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.shardwidget .sw-tr-table th:nth-child(4) { text-align: right; }
.shardwidget .sw-tr-cons-table th:nth-child(4) { text-align: left; }
/* "anywhere", not "break-word": a long op name (jit(f)/shard_map/psum) must not widen the table past
   its scroll box (break-word leaves the min-content width whole, and the name was cut off). */
.shardwidget .sw-tr-cause { color: var(--sw-fg2); min-width: 12em; overflow-wrap: anywhere; }
.shardwidget .sw-tr-table td:not(.sw-tr-cause) { white-space: nowrap; }
.shardwidget .sw-tr-clamp { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2; overflow: hidden; }
.shardwidget .sw-tr-coll-row { cursor: default; }
/* the leaves as a table (more than a few leaves): the path wraps, the rest stays on one line */
.shardwidget .sw-tr-leaves { width: 100%; }
.shardwidget .sw-tr-leaves td { font-family: var(--sw-mono); font-size: 12px; padding-top: 2px; padding-bottom: 2px; }
.shardwidget .sw-tr-leaves td.sw-tr-leafpath { white-space: normal; overflow-wrap: break-word; min-width: 8em; }
.shardwidget .sw-tr-leaves td.sw-tr-leafbytes { text-align: right; font-variant-numeric: tabular-nums; }
.shardwidget .sw-tr-leaves td.sw-tr-leafcoll { font-family: var(--sw-font); color: var(--sw-fg2); white-space: normal; }
.shardwidget .sw-tr-leafrow { cursor: pointer; }
.shardwidget .sw-tr-leafrow:hover { background: var(--sw-bg2); }
.shardwidget .sw-tr-leafrow-selected, .shardwidget .sw-tr-leafrow-selected:hover {
  background: color-mix(in srgb, var(--sw-accent) 16%, transparent); }
.shardwidget .sw-tr-leaves[data-side="out"] td.sw-tr-leafpath { box-shadow: inset 3px 0 0 var(--sw-accent); }
/* A training step inserts dozens of collectives: their table and the estimate's bars are
   bounded boxes (the header row stays in sight), so the view stays about two screens tall. */
.shardwidget.sw-trace .sw-tr-collectives { max-height: 22em; overflow-y: auto; }
.shardwidget.sw-trace .sw-tr-collectives th { position: sticky; top: 0; background: var(--sw-bg); z-index: 1; }
.shardwidget.sw-trace .sw-est-chart { max-height: 18em; overflow-y: auto; }
.shardwidget .sw-tr-coll-row:hover td, .shardwidget .sw-tr-coll-row:focus td { background: var(--sw-bg2); }
.shardwidget .sw-tr-coll-row:focus-visible { outline: 2px solid var(--sw-accent); outline-offset: -2px; }
.shardwidget .sw-tr-kind {
  --k: #2f6fd0; display: inline-block; padding: 0 8px; border-radius: 10px; font-family: var(--sw-mono);
  font-size: 11.5px; line-height: 18px; white-space: nowrap; font-weight: 600; color: var(--k);
  border: 1px solid var(--k); background: transparent; background: color-mix(in srgb, var(--k) 12%, transparent);
}
.shardwidget .sw-tr-kind-all-gather { --k: #1a8a4a; }
.shardwidget .sw-tr-kind-reduce-scatter { --k: #8250df; }
.shardwidget .sw-tr-kind-all-to-all { --k: #c2570c; }
.shardwidget .sw-tr-kind-collective-permute { --k: #0e8a8a; }
.shardwidget .sw-tr-empty-coll {
  margin: 0; padding: 6px 10px; border-radius: 4px; border-left: 4px solid #1a8a4a; background: var(--sw-bg2);
  color: var(--sw-fg); font-size: 12.5px;
}
/* memory */
.shardwidget .sw-tr-membars {
  display: grid; grid-template-columns: max-content minmax(60px, 280px) max-content; gap: 3px 10px;
  align-items: center; max-width: 100%;
}
.shardwidget .sw-tr-memrow { display: contents; }
.shardwidget .sw-tr-memname { font-size: 12px; color: var(--sw-fg2); }
.shardwidget .sw-tr-membar { display: block; height: 10px; border-radius: 2px; background: var(--sw-bg2); overflow: hidden; }
.shardwidget .sw-tr-memfill { display: block; height: 100%; background: var(--sw-accent); opacity: 0.7; }
.shardwidget .sw-tr-mem-peak { opacity: 1; }
.shardwidget .sw-tr-mem-alias { background: var(--sw-fg3); }
.shardwidget .sw-tr-memval { font-family: var(--sw-mono); font-size: 12px; text-align: right; color: var(--sw-fg); }
.shardwidget .sw-tr-peak .sw-tr-memname, .shardwidget .sw-tr-peak .sw-tr-memval { font-weight: 700; color: var(--sw-fg); }
.shardwidget .sw-tr-flops { margin: 8px 0 0; font-size: 12.5px; color: var(--sw-fg); }
`;

/** Insert the function view's stylesheet once into the document (or shadow root) holding `el`. */
export function injectFunctionStyles(el: HTMLElement): void {
  injectCss(el, STYLE_ID, FUNCTION_CSS);
}
