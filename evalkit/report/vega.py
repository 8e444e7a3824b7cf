"""The one Vega bundle (vega, vega-lite, vega-embed) inlined into every report, offline."""

from __future__ import annotations

import functools


@functools.cache
def vega_bundle() -> str:
    """JavaScript that defines ``window.vegaEmbed``; shipped inside vl-convert-python, no network."""
    import vl_convert

    return vl_convert.javascript_bundle()
