"""``evalkit history show``: the recorded runs as a table, one row per run, grouped by series."""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.contracts.history import HistoryRecord
from evalkit.contracts.summary import CriterionHeadline
from evalkit.history.trend import judge_changes, run_label


def _rate(c: CriterionHeadline | None) -> str:
    if c is None or c.rate is None:
        return "-"
    interval = f" [{c.lo:.1%}, {c.hi:.1%}]" if c.lo is not None and c.hi is not None else ""
    return f"{c.rate:.1%}{interval}" + ("" if c.corrected else " obs")


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def render_history(records: Sequence[HistoryRecord], *, series: str | None = None) -> str:
    """The history as text: per series, each run's gate, criteria rates (corrected with interval, or
    observed, marked ``obs``), top failure mode, and where the judge changed.

    Args:
        records: the store's records, oldest first.
        series: show only this subject's runs.
    """
    groups: dict[tuple[str, str], list[HistoryRecord]] = {}
    for r in records:
        if series is None or r.series == series:
            groups.setdefault((r.series, r.source), []).append(r)
    if not groups:
        return "no recorded runs" + (f" of {series}" if series else "") + "\n"
    lines: list[str] = []
    for (name, source), rs in sorted(groups.items()):
        criteria = list(dict.fromkeys(c.criterion for r in rs for c in r.headline.criteria))
        changes: dict[str, list[str]] = {}
        for c in judge_changes(rs):
            changes.setdefault(c["run"], []).append(c["criterion"])
        rows = [["run", "gate", *criteria, "top failure mode", "judge changed"]]
        for i, r in enumerate(rs, start=1):
            by = {c.criterion: c for c in r.headline.criteria}
            top = max(r.headline.failure_modes, key=lambda m: (m.rate or 0), default=None)
            label = run_label(r, i)
            rows.append([label, r.headline.gate or "-", *(_rate(by.get(c)) for c in criteria),
                         f"{top.mode} {top.rate:.1%}" if top is not None and top.rate is not None else "-",
                         ", ".join(changes.get(label, [])) or "-"])
        lines += [f"{name} ({source}): {len(rs)} run(s)", *_table(rows), ""]
    return "\n".join(lines)
