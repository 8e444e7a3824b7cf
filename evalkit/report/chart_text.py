"""Text in a chart spec made safe for Vega: line separators and bidi controls shown as their escapes.

Vega-Lite compiles an explicit sort order into a Vega expression that quotes each category
(``indexof(["a", "b"], datum.x)``), and Vega's expression parser refuses U+2028 and U+2029 inside a
string (older JavaScript read them as line breaks): one tool name holding U+2028 failed a whole notebook.
A bidi override in a category would display a label reversed. :func:`vega_safe` rewrites every string of a
spec (keys too, so field names and the data's keys stay one and the same) before it is drawn: by the
notebooks' SVG renderer (:func:`draw_charts_as_svg`) and by the report (``SummaryBuilder.chart``).
"""

from __future__ import annotations

import re
from typing import Any

from evalkit.report.pages import neutral_text

_SEPARATORS = re.compile("[\u2028\u2029]")
RENDERER = "evalkit-svg"


def vega_text(text: str) -> str:
    """One string of a spec as Vega can parse and a reader can trust."""
    return neutral_text(_SEPARATORS.sub(lambda m: f"\\u{ord(m.group(0)):04X}", text))


def vega_safe(value: Any) -> Any:
    """A Vega-Lite spec (or any JSON value) with :func:`vega_text` applied to every key and string."""
    if isinstance(value, str):
        return vega_text(value)
    if isinstance(value, dict):
        return {vega_safe(k): vega_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [vega_safe(v) for v in value]
    return value


def _svg(spec: dict, **metadata: Any) -> dict[str, str]:
    from altair.vegalite.v6.display import svg_renderer

    return svg_renderer(vega_safe(spec), **metadata)


def draw_charts_as_svg() -> None:
    """Make altair draw every chart displayed in this notebook as SVG, its text made safe (:func:`vega_safe`).

    The notebook's HTML page then holds the drawings themselves: no script, no CDN, no random element ids.
    """
    import altair as alt

    alt.renderers.register(RENDERER, _svg)
    alt.renderers.enable(RENDERER)
