"""The HTML of a saved page: the renderer, a stand-in model, and the view's data, in one file.

The page needs no kernel and no network. It carries

- the data, ``{"state": {...synced traits...}, "answers": {key: {"state", "layout", "stats"}}}``
  (binary values as ``{"__b64__": base64}``), in ``<script type="application/json"
  id="shardwidget-data">``;
- the bundle ``static/page.js`` (built from ``js/static/page.ts``: the renderer and the model that
  stands in for the widget manager), loaded through a Blob URL by a small module script. On load
  it mounts the view into ``#shardwidget-root`` and answers the controls' requests from
  ``answers``.

Which data a view's page carries is decided by the views (``shardwidget.export.page``); this module
only writes the HTML.
"""

from __future__ import annotations

import html
import json
import pathlib
from typing import Any

PAGE_JS = pathlib.Path(__file__).parents[1] / "static" / "page.js"

_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{title}</title>
<style>body{{margin:16px;font-family:system-ui,-apple-system,sans-serif}}\
#shardwidget-root{{max-width:1060px}}</style>
</head><body><div id="shardwidget-root"></div>{picture}
<script type="application/json" id="shardwidget-data">{data}</script>
<script type="module">
const url = URL.createObjectURL(new Blob([{code}], {{type: "text/javascript"}}));
await import(url);
</script></body></html>
"""


def script_json(value: object) -> str:
    """JSON that is safe inside a ``<script>`` element: every ``<`` is written ``\\u003c``, so no
    ``</script`` or ``<!--`` in the data can end the element early."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")


def bundle_missing() -> str | None:
    """Why a page cannot be written (the bundle was not built), or None when it can."""
    if PAGE_JS.exists():
        return None
    return f"the JS bundle is missing ({PAGE_JS}); run `npm run build`"


def page(title: str, data: dict[str, Any], picture: str = "") -> str:
    """The whole HTML of a saved page.

    Args:
        title: the page's title (plain text; escaped here).
        picture: the view's static picture (HTML), shown where scripts do not run.
        data: ``{"state": ..., "answers": ...}`` as described in the module docstring, already
            JSON-safe (binary values encoded as ``{"__b64__": base64}``).

    Raises:
        FileNotFoundError: when ``static/page.js`` has not been built.
    """
    missing = bundle_missing()
    if missing:
        raise FileNotFoundError(missing)
    return _PAGE.format(
        title=html.escape(title),
        picture=f"<noscript>{picture}</noscript>" if picture else "",
        data=script_json(data),
        code=script_json(PAGE_JS.read_text(encoding="utf-8")),
    )
