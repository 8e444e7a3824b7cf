"""The report's "Traces" section: search over the embedded traces, and a viewer that opens one in place.

Registered with the report (which imports nothing of this package) when :mod:`evalkit.viewer` is imported,
made from the run folder's ``trace-view.json.gz``. The section holds the compressed data as base64 (only
``[A-Za-z0-9+/=]``: nothing in it can end its script element) and the page's script decompresses it in the
browser (``DecompressionStream``), so the file loads nothing from anywhere. Trace text only ever reaches
the page as ``textContent``.
"""

from __future__ import annotations

import base64
import functools
from pathlib import Path

from markupsafe import Markup

from evalkit.viewer.payload import VIEW_FILE, embedded_counts, read_trace_view

SECTION_ID = "traces"


@functools.cache
def viewer_script() -> str:
    """The viewer's JavaScript: the review page's trace drawing, wrapped with the viewer's own code."""
    from evalkit.analysis import trace_script
    from evalkit.report import page_environment

    env = page_environment("evalkit.viewer")
    return env.get_template("trace-viewer.js.j2").render(trace_js=Markup(trace_script()))


@functools.cache
def viewer_style() -> str:
    """The viewer's style sheet (scoped to the section and its overlay)."""
    from evalkit.report import page_environment

    return page_environment("evalkit.viewer").get_template("trace-viewer.css.j2").render()


def render_viewer_section(path: Path) -> Markup:
    """The ``<section>`` holding the embedded traces, from the run folder's ``trace-view.json.gz``."""
    from evalkit.report import page_environment

    raw, payload = read_trace_view(path)
    template = page_environment("evalkit.viewer").get_template("trace-viewer.html.j2")
    return Markup(template.render(section_id=SECTION_ID, counts=embedded_counts(payload),
                                  per_group=payload["perGroup"], size=len(raw),
                                  data=base64.b64encode(raw).decode("ascii")))


def register_viewer_section() -> None:
    """Add the Traces section to every run report whose folder holds ``trace-view.json.gz``."""
    from evalkit.report import ReportSection, register_section

    register_section(ReportSection(id=SECTION_ID, title="Traces", file=VIEW_FILE, render=render_viewer_section,
                                   style=viewer_style(), script=viewer_script()))
