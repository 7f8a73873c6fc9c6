// Messages between the renderer and the kernel (custom messages, not synced traits).
//   front end -> kernel (model.send): RequestMsg (array view), TraceRequestMsg (function view),
//   TreeRequestMsg and TreeSelectMsg (tree view, wire/tree.ts)
//   kernel -> front end (model.on("msg:custom")): ResultMsg, carrying the request's seq

import type { LayoutState } from "./shared";
import type { TraceState } from "./function";
import type { TreeRequestMsg, TreeSelectMsg } from "./tree";

/** Ask the kernel to re-lay-out the array. */
export interface RequestMsg {
  type: "request";
  seq: number; // strictly increasing per view
  state: LayoutState;
}

/** The kernel's answer to a request. */
export interface ResultMsg {
  type: "result";
  seq: number; // the request this answers
  ok: boolean;
  error: string; // the message when !ok
}

/** Ask the kernel to re-compile the function with a new layout of its inputs and outputs. */
export interface TraceRequestMsg {
  type: "trace_request";
  seq: number;
  state: TraceState;
}

/** The undo / redo buttons: step back (-1) or forward (1) through the layouts shown. The
 *  kernel answers by setting the traits (and `error` when it cannot). */
export interface HistoryMsg {
  type: "history";
  step: -1 | 1;
}

/** The "save picture" buttons ask for the view's picture (view.to_svg()). */
export interface PictureRequestMsg {
  type: "picture_request";
}

/** The kernel's answer to a PictureRequestMsg: the SVG and a file name (no extension). */
export interface PictureMsg {
  type: "picture";
  ok: boolean;
  svg: string;
  name: string;
  error: string;
}

/** Any request the front end sends. */
export type AnyRequestMsg = RequestMsg | TraceRequestMsg | TreeRequestMsg | TreeSelectMsg;
