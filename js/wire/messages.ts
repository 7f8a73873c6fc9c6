// Messages between the renderer and the kernel (custom messages, not synced traits).
//   front end -> kernel (model.send): RequestMsg (array view), TraceRequestMsg (function view)
//   kernel -> front end (model.on("msg:custom")): ResultMsg, carrying the request's seq
import type { LayoutState } from "./array";
import type { TraceState } from "./function";

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

/** Any request the front end sends. */
export type AnyRequestMsg = RequestMsg | TraceRequestMsg;
