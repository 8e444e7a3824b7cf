"""The notebook side of the report: collect metrics, charts, tables and findings into ``summary.json``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from evalkit.contracts.summary import Chart, Figure, Headline, Metric, NotebookSummary, Table
from evalkit.io.atomic import atomic_write_text
from evalkit.io.canonical import canonical_dumps
from evalkit.report.chart_text import vega_safe

SUMMARY_FILE = "summary.json"


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else round(value, 6)
    if hasattr(value, "item"):  # numpy scalars
        return _cell(value.item())
    return str(value)


class SummaryBuilder:
    """Builds one notebook's :class:`NotebookSummary` step by step, then writes it.

    Args:
        notebook: the notebook's name (``00_overview``).
        title: the section title in the report.
        subject: the subject's name.
    """

    def __init__(self, notebook: str, title: str, subject: str) -> None:
        self.notebook, self.title, self.subject = notebook, title, subject
        self.metrics: list[Metric] = []
        self.findings: list[str] = []
        self.charts: list[Chart] = []
        self.tables: list[Table] = []
        self.figures: list[Figure] = []
        self._headline: Headline | None = None
        self._conclusion = ""

    def metric(self, name: str, value: Any, unit: str | None = None, note: str | None = None) -> None:
        self.metrics.append(Metric(name=name, value=_cell(value), unit=unit, note=note))

    def finding(self, text: str) -> None:
        self.findings.append(text)

    def chart(self, title: str, chart: Any, caption: str | None = None) -> None:
        """Add an altair chart (or a Vega-Lite dict)."""
        spec = chart if isinstance(chart, dict) else chart.to_dict()
        self.charts.append(Chart(title=title, spec=vega_safe(spec), caption=caption))

    def table(self, title: str, frame: Any, limit: int = 50) -> None:
        """Add a polars or pandas frame (first ``limit`` rows)."""
        if hasattr(frame, "to_pandas") and not hasattr(frame, "iloc"):
            columns, rows = list(frame.columns), [list(r) for r in frame.head(limit).iter_rows()]
        else:
            columns, rows = [str(c) for c in frame.columns], frame.head(limit).values.tolist()
        self.tables.append(Table(title=title, columns=[str(c) for c in columns],
                                 rows=[[_cell(v) for v in row] for row in rows]))

    def figure(self, title: str, path: str | Path, caption: str | None = None) -> None:
        """Add a drawing: an SVG file written into the notebook's output folder (named by its file name)."""
        self.figures.append(Figure(title=title, path=Path(path).name, caption=caption))

    def headline(self, headline: Headline) -> None:
        """Record this notebook's share of the run's headline numbers (batch index, run history).

        Args:
            headline: what the notebook computed: criteria rates, failure-mode rates and/or the gate.
        """
        self._headline = headline

    def conclude(self, text: str) -> None:
        self._conclusion = text

    def build(self) -> NotebookSummary:
        return NotebookSummary(notebook=self.notebook, title=self.title, subject=self.subject,
                               metrics=self.metrics, findings=self.findings, charts=self.charts,
                               tables=self.tables, figures=self.figures, conclusion=self._conclusion or "No conclusion written.",
                               **({"headline": self._headline} if self._headline is not None else {}))

    def write(self, output_dir: str | Path) -> Path:
        """Validate and write ``summary.json`` canonically into ``output_dir``; returns its path."""
        summary = self.build()
        path = Path(output_dir) / SUMMARY_FILE
        data = summary.model_dump(mode="json")
        if data["headline"] is None:
            del data["headline"]  # a notebook without headline numbers writes the summary it always wrote
        atomic_write_text(path, canonical_dumps(data))
        return path
