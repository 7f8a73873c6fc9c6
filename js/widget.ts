// The anywidget entry point: only the default export (anywidget deprecates a named `render`).
// One model class family, two views: a function view (`_kind` === "function", ShardView(f, *args))
// or an array view (ShardView(arr); no `_kind`, or "array").
import type { RenderProps } from "@anywidget/types";
import { render as renderArray } from "./array/view";
import { renderTrace } from "./function/view";

function render(props: Pick<RenderProps, "model" | "el">): () => void {
  return props.model.get("_kind") === "function" ? renderTrace(props) : renderArray(props);
}

export default { render };
