// CSS of the cost parts (estimate bars, hardware dropdown, the array view's "moved" line, heat
// key and device partners), scoped under .shardwidget like shared/styles.ts, whose theme
// variables (--sw-*) it uses. Injected once per document or shadow root.
import { injectCss } from "../shared/styles";

const STYLE_ID = "shardwidget-cost-styles";

const COST_CSS = `
/* estimate: one bar per part on a common time axis */
.shardwidget .sw-est { display: flex; flex-direction: column; gap: 4px; min-width: 0; max-width: 760px; }
.shardwidget .sw-est-chart { display: grid; grid-template-columns: minmax(90px, max-content) minmax(120px, 1fr) minmax(5.5em, max-content); gap: 3px 10px; align-items: center; }
.shardwidget .sw-est-row { display: contents; }
.shardwidget .sw-est-name { font-size: 12px; color: var(--sw-fg); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 22em; }
.shardwidget .sw-est-track { position: relative; height: 14px; background: var(--sw-bg2); border-radius: 2px; }
.shardwidget .sw-est-fill { position: absolute; top: 0; bottom: 0; border-radius: 2px; background: var(--k, #6e7781); }
.shardwidget .sw-est-some { min-width: 2px; }
.shardwidget .sw-est-compute { --k: #6f42c1; }
.shardwidget .sw-est-memory { --k: #0969da; }
.shardwidget .sw-est-collective, .shardwidget .sw-est-transfer { --k: #d4661b; }
.shardwidget .sw-est-row[data-collective] { cursor: default; }
.shardwidget .sw-est-row[data-collective]:hover .sw-est-name,
.shardwidget .sw-est-row[data-collective]:focus .sw-est-name { text-decoration: underline; }
.shardwidget .sw-est-row:focus-visible .sw-est-track { outline: 2px solid var(--sw-accent); }
.shardwidget .sw-est-val { font-size: 12px; font-variant-numeric: tabular-nums; text-align: right; color: var(--sw-fg2); white-space: nowrap; }
.shardwidget .sw-est-val[data-terms]::after { content: attr(data-terms); display: block; font-size: 10px; color: var(--sw-fg3); }
/* a collective's latency share: hatched, at the start of its bar */
.shardwidget .sw-est-lat { position: absolute; left: 0; top: 0; bottom: 0; border-radius: 2px 0 0 2px;
  background: repeating-linear-gradient(135deg, rgba(255,255,255,0.55) 0 2px, transparent 2px 5px); }
.shardwidget .sw-est-axis { position: relative; height: 14px; border-top: 1px solid var(--sw-border1); }
.shardwidget .sw-est-tick { position: absolute; top: 1px; transform: translateX(-50%); font-size: 10px; color: var(--sw-fg3); white-space: nowrap; font-variant-numeric: tabular-nums; }
.shardwidget .sw-est-tick:first-child { transform: none; }
.shardwidget .sw-est-tick::before { content: ""; position: absolute; top: -4px; left: 50%; height: 3px; border-left: 1px solid var(--sw-border1); }
.shardwidget .sw-est-tick:first-child::before { left: 0; }
.shardwidget .sw-est-total { font-size: 12.5px; }
.shardwidget .sw-est-fits { font-size: 12.5px; color: var(--jp-success-color1, #1a7f37); }
.shardwidget .sw-est-fits.sw-est-nofit { color: var(--sw-error-fg); font-weight: 600; }
.shardwidget .sw-est-overlap { margin-top: 0; }
.shardwidget .sw-est-compact .sw-est-chart { grid-template-columns: minmax(80px, max-content) minmax(100px, 1fr) 5em; }
.shardwidget .sw-est-head { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 12px; }
.shardwidget .sw-hw select { max-width: 16em; }
.shardwidget .sw-tr-h .sw-hw { font-weight: 400; margin-left: auto; }
/* the function view: collectives beside the device picture their hover lights */
.shardwidget .sw-tr-comm { display: flex; flex-wrap: wrap; gap: 10px 24px; align-items: flex-start; }
.shardwidget .sw-tr-comm > .sw-tr-collectives { flex: 1 1 420px; min-width: 0; }
.shardwidget .sw-tr-devices { flex: 0 0 auto; width: 280px; }
.shardwidget .sw-tr-devices-caption { font-size: 11.5px; margin-top: 4px; }
.shardwidget .sw-tr-devices.sw-tr-devices-on-card { flex: 1 1 100%; width: auto; } /* the caption alone: under the table */
/* the array view: what the re-layout moves */
.shardwidget .sw-moved { display: flex; gap: 8px; align-items: baseline; font-size: 12.5px; margin: -2px 0 8px; }
.shardwidget .sw-moved-label {
  font-size: 10.5px; text-transform: uppercase; letter-spacing: 0.05em; color: var(--sw-fg2);
  border: 1px solid var(--sw-border); border-radius: 3px; padding: 0 4px;
}
.shardwidget .sw-moved-text { font-family: var(--sw-mono); font-size: 12px; overflow-wrap: anywhere; }
.shardwidget .sw-moved[data-status="unavailable"] .sw-moved-text { color: var(--sw-warn-fg); font-family: var(--sw-font); }
.shardwidget .sw-moved[data-status="none"] .sw-moved-text { color: var(--sw-fg2); font-family: var(--sw-font); }
.shardwidget .sw-xfer-side { margin-top: 10px; display: flex; flex-direction: column; gap: 5px; }
.shardwidget .sw-xfer-head { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 8px; }
.shardwidget .sw-xfer-head .sw-pane-title { margin-bottom: 0; }
.shardwidget .sw-xfer-pairs { margin-top: 0; font-size: 11.5px; min-height: 2.6em; }
.shardwidget .sw-mesh.sw-heat-on .sw-legend { display: none; }
.shardwidget .sw-heat-key { display: flex; align-items: center; gap: 4px; font-size: 11px; color: var(--sw-fg2); }
.shardwidget .sw-heat-what { margin-right: 4px; }
.shardwidget .sw-heat-zero { width: 12px; height: 10px; border-radius: 1px; display: inline-block; }
.shardwidget .sw-heat-bar { width: 110px; height: 10px; border-radius: 1px; display: inline-block; }
.shardwidget .sw-heat-lab { font-variant-numeric: tabular-nums; }
.shardwidget .sw-dev.sw-sendto { box-shadow: 0 0 0 2px #d4661b; position: relative; z-index: 2; }
.shardwidget .sw-dev.sw-recvfrom { box-shadow: 0 0 0 2px #0969da; position: relative; z-index: 2; }
.shardwidget .sw-dev.sw-sendto.sw-recvfrom { box-shadow: 0 0 0 2px #0969da, 0 0 0 4px #d4661b; }
.shardwidget .sw-xfer { margin-top: 12px; border-top: 1px solid var(--sw-border); padding-top: 6px; display: flex; flex-direction: column; gap: 8px; }
.shardwidget .sw-xfer-h { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 12px; }
.shardwidget .sw-xfer-h .sw-pane-title { margin-bottom: 0; }
.shardwidget .sw-xfer-h .sw-hint { margin-top: 0; }
`;

export function injectCostStyles(el: HTMLElement): void {
  injectCss(el, STYLE_ID, COST_CSS);
}
