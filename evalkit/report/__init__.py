"""Self-contained HTML reports: notebooks write summaries, the report renders them into one file.

The charts and readable numbers a notebook puts in its summary are here too, so notebooks import
them from this one place.
"""

from evalkit.report.charts import (
    bar_counts,
    confusion_heatmap,
    cooccurrence_heatmap,
    distribution,
    grouped_rates,
    heatmap,
    intervals,
    lines,
    share_bars,
    stacked_bars,
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
from evalkit.report.numbers import readable, readable_duration
from evalkit.report.summary_builder import SUMMARY_FILE, SummaryBuilder

__all__ = [
    "INDEX_FILE",
    "MANIFEST_FILE",
    "NOTEBOOK_HTML",
    "SUMMARY_FILE",
    "SummaryBuilder",
    "bar_counts",
    "confusion_heatmap",
    "cooccurrence_heatmap",
    "distribution",
    "grouped_rates",
    "heatmap",
    "intervals",
    "lines",
    "notebook_to_html",
    "readable",
    "readable_duration",
    "render_report",
    "script_json",
    "share_bars",
    "stacked_bars",
    "write_report",
]
