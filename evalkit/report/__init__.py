"""Self-contained HTML reports: notebooks write summaries, the report renders them into one file.

The charts and readable numbers a notebook puts in its summary are here too, so notebooks import
them from this one place, and so is :func:`page_environment`, the Jinja set-up every evalkit page
shares, and :func:`register_section`, by which another package adds its section to run reports.

Every name loads on first use: the charts need altair (about two seconds to import), and the commands
that only render a page (``evalkit review build``, ``evalkit skill-eval worksheet``) or read a constant
must not pay for it. ``from evalkit.report import X`` works as for any facade.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.facade import load_on_first_use

if TYPE_CHECKING:
    from evalkit.report.chart_text import draw_charts_as_svg, vega_safe
    from evalkit.report.charts import (
        LEVEL_COLORS,
        bar_counts,
        binned_counts,
        confusion_heatmap,
        cooccurrence_heatmap,
        distribution,
        grouped_rates,
        heatmap,
        intervals,
        lines,
        share_bars,
        stacked_bars,
        trend,
    )
    from evalkit.report.html import (
        INDEX_FILE,
        MANIFEST_FILE,
        NOTEBOOK_HTML,
        render_report,
        script_json,
        write_report,
    )
    from evalkit.report.notebooks import notebook_to_html
    from evalkit.report.numbers import counted, readable, readable_duration
    from evalkit.report.pages import content_security_policy, neutral_text, page_environment, render_page
    from evalkit.report.sections import ReportSection, register_section, registered_sections
    from evalkit.report.summary_builder import SUMMARY_FILE, SummaryBuilder

__all__ = [
    "INDEX_FILE",
    "MANIFEST_FILE",
    "NOTEBOOK_HTML",
    "SUMMARY_FILE",
    "ReportSection",
    "SummaryBuilder",
    "bar_counts",
    "content_security_policy",
    "confusion_heatmap",
    "cooccurrence_heatmap",
    "binned_counts",
    "distribution",
    "draw_charts_as_svg",
    "grouped_rates",
    "heatmap",
    "intervals",
    "lines",
    "neutral_text",
    "notebook_to_html",
    "page_environment",
    "readable",
    "counted",
    "LEVEL_COLORS",
    "readable_duration",
    "register_section",
    "registered_sections",
    "render_page",
    "render_report",
    "script_json",
    "share_bars",
    "stacked_bars",
    "trend",
    "vega_safe",
    "write_report",
]

__getattr__, __dir__ = load_on_first_use(__name__, __all__)
