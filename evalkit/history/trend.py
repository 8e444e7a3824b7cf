"""The report's trend section: a subject's recorded runs up to this one, per criterion, judge changes marked.

The report does not import the history (a lower floor learns of a higher one by registration): this
module registers the section, made from the run folder's ``trend.json``, when :mod:`evalkit.history` is
imported, as the layer that writes run reports does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from markupsafe import Markup

from evalkit.contracts.history import HistoryRecord
from evalkit.history.record import TREND_FILE

TREND_SECTION_ID = "trend"


def run_label(record: HistoryRecord, number: int) -> str:
    """How a run is named on the trend's axis and in its table: its number and, when recorded, its time."""
    return f"{number} · {record.run_at}" if record.run_at else f"run {number}"


def judge_changes(records: list[HistoryRecord]) -> list[dict[str, Any]]:
    """``{run, criterion, change}`` for each run whose judge for a criterion differs from the run before
    (its pinned model, or the judge and prompt behind the criterion's verdicts)."""
    out = []
    for i in range(1, len(records)):
        before, now = records[i - 1], records[i]
        judges = {c.criterion: c.judge for c in before.headline.criteria}
        for c in now.headline.criteria:
            if now.judge != before.judge:
                change = f"judge {before.judge} -> {now.judge}"
            elif c.criterion in judges and judges[c.criterion] != c.judge:
                change = f"judge {judges[c.criterion]} -> {c.judge}"
            else:
                continue
            out.append({"run": run_label(now, i + 1), "criterion": c.criterion, "change": change})
    return out


def trend_rows(records: list[HistoryRecord]) -> list[dict[str, Any]]:
    """``{run, criterion, rate, lo, hi, kind}`` per run and rated criterion, oldest run first."""
    return [{"run": run_label(r, i), "criterion": c.criterion, "rate": c.rate, "lo": c.lo, "hi": c.hi,
             "kind": "corrected" if c.corrected else "observed"}
            for i, r in enumerate(records, start=1) for c in r.headline.criteria if c.rate is not None]


def render_trend_section(path: Path) -> Markup:
    """The ``<section>`` of a run report showing its series' trend, from the run folder's ``trend.json``."""
    from evalkit.io import read_json_strict
    from evalkit.report import page_environment, readable, script_json
    from evalkit.report import trend as trend_chart

    data = read_json_strict(path)
    records = [HistoryRecord.model_validate(r) for r in data["records"]]
    rows, changes = trend_rows(records), judge_changes(records)
    spec = script_json(trend_chart(rows, changes).to_dict()) if len(records) > 1 and rows else None
    criteria = list(dict.fromkeys(c.criterion for r in records for c in r.headline.criteria))
    table = []
    for i, r in enumerate(records, start=1):
        by = {c.criterion: c for c in r.headline.criteria}
        table.append({"label": run_label(r, i), "gate": r.headline.gate, "batch": r.batch,
                      "cells": [by.get(c) for c in criteria],
                      "changes": [c["change"] for c in changes if c["run"] == run_label(r, i)]})
    template = page_environment("evalkit.history", readable=readable).get_template("trend-section.html.j2")
    return Markup(template.render(section_id=TREND_SECTION_ID, series=data["series"], source=data["source"],
                                  count=len(records), spec_json=spec, criteria=criteria, table=table,
                                  changes=len({c["run"] for c in changes})))


def register_trend_section() -> None:
    """Add the trend section to every run report whose folder holds ``trend.json``."""
    from evalkit.report import ReportSection, register_section

    register_section(ReportSection(id=TREND_SECTION_ID, title="Trend", file=TREND_FILE, render=render_trend_section))
