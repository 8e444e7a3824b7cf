"""Self-contained HTML reports: notebooks write summaries, the report renders them into one file."""

from evalkit.report.html import render_report, script_json, write_report
from evalkit.report.notebooks import notebook_to_html
from evalkit.report.summary import SummaryBuilder

__all__ = ["SummaryBuilder", "notebook_to_html", "render_report", "script_json", "write_report"]
