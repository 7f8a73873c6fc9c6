// The anywidget entry point: only the default export (anywidget deprecates a named `render`).
// One model class family, three views: a function view (`_kind` === "function", ShardView(f,
// *args)), a tree view (`_kind` === "tree", ShardView(tree)) or an array view (ShardView(arr);
// no `_kind`).
import type { AnyModel, RenderProps } from "@anywidget/types";
import type { ArrayModel, FunctionModel, TreeModel } from "./wire";
import { ArrayView } from "./array/view";
import { FunctionView } from "./function/view";
import { TreeView } from "./tree/view";
import { hideFallback, type FallbackTraits } from "./shared/fallback";

/** anywidget hands over an untyped model: its `_kind` says which traits it carries. */
function render({ model, el }: Pick<RenderProps, "model" | "el">): () => void {
  const kind = model.get("_kind");
  const view =
    kind === "function"
      ? new FunctionView(model as AnyModel<FunctionModel>, el)
      : kind === "tree"
        ? new TreeView(model as AnyModel<TreeModel>, el)
        : new ArrayView(model as AnyModel<ArrayModel>, el);
  // A live view: the kernel's static picture beside it is hidden while it is shown.
  const show = hideFallback(el.ownerDocument, (model as AnyModel<FallbackTraits>).get("_fallback_id"));
  return () => {
    show();
    view.dispose();
  };
}

export default { render };
