// The anywidget entry point: only the default export (anywidget deprecates a named `render`).
import { render } from "./view";

export default { render };
