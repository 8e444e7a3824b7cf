"""The batch folder's index: ``batch.json`` (every run, its state and headline numbers) and ``index.html``.

The page is one self-contained file (no network): a table with one row per run, its values, status (a
failed run with its error), the gate, each criterion's pass rate with its interval (corrected where the
judge's calibration covers it) and each failure mode's rate; a click on a column's title sorts by it, and
each run's name links to its report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalkit.batch.plan import BatchPlan
from evalkit.contracts.batch import BatchIndex, BatchRow
from evalkit.contracts.summary import CriterionHeadline, ModeHeadline
from evalkit.io import atomic_write_text, canonical_dumps

INDEX_JSON = "batch.json"
INDEX_HTML = "index.html"


def batch_rows(plan: BatchPlan, out: Path, states: dict[str, Any]) -> list[BatchRow]:
    """Each run's row: its state now and, where its report is there, its headline numbers."""
    from evalkit.history import run_headline

    rows = []
    for run in plan.runs:
        state = states[run.name]
        folder = out / run.name
        report = state.report and (folder / "index.html").is_file()
        headline = run_headline(folder) if report and (folder / "run.json").is_file() else None
        log = out / "logs" / f"{run.name}.log"
        rows.append(BatchRow(name=run.name, subject=run.written or run.subject.name, values=run.values,
                             status=state.status, error=state.error,
                             report=f"{run.name}/index.html" if report else None,
                             log=f"logs/{run.name}.log" if log.is_file() and not state.reused else None,
                             headline=headline))
    return rows


def _cell_rate(c: CriterionHeadline | ModeHeadline | None) -> dict[str, Any]:
    if c is None or c.rate is None:
        return {"text": "-", "sort": "", "title": "not measured in this run", "interval": "", "observed": False}
    n = c.n if isinstance(c, CriterionHeadline) else c.reviewed
    interval = f"[{100 * c.lo:.1f}, {100 * c.hi:.1f}]" if c.lo is not None and c.hi is not None else ""
    interval += f" n={n}" if n else ""
    observed = isinstance(c, CriterionHeadline) and not c.corrected
    return {"text": f"{100 * c.rate:.1f}%", "interval": interval, "observed": observed,
            "sort": f"{c.rate:.6f}",
            "title": ("observed pass rate (no correction covers this judge)" if observed else
                      "corrected pass rate" if isinstance(c, CriterionHeadline) else "share of reviewed traces")
            + (f", over {n} items" if n else "")}


def page_table(rows: list[BatchRow]) -> dict[str, Any]:
    """The index page's columns and cells (criteria and failure modes in the order the runs name them)."""
    criteria = list(dict.fromkeys(c.criterion for r in rows if r.headline for c in r.headline.criteria))
    modes = list(dict.fromkeys(m.mode for r in rows if r.headline for m in r.headline.failure_modes))
    keys = list(dict.fromkeys(k for r in rows for k in r.values))
    body = []
    for r in rows:
        crit = {c.criterion: c for c in r.headline.criteria} if r.headline else {}
        mode = {m.mode: m for m in r.headline.failure_modes} if r.headline else {}
        body.append({"row": r, "values": [r.values.get(k) for k in keys],
                     "gate": r.headline.gate if r.headline else None,
                     "criteria": [_cell_rate(crit.get(c)) for c in criteria],
                     "modes": [_cell_rate(mode.get(m)) for m in modes]})
    return {"criteria": criteria, "modes": modes, "settings": keys, "body": body}


def write_index(plan: BatchPlan, out: Path, states: dict[str, Any], *, at: str | None) -> Path:
    """Write ``OUT/batch.json`` and ``OUT/index.html`` for the runs' states now; returns the page's path."""
    from evalkit.report import render_page

    index = BatchIndex(batch=plan.name, run_at=at, rows=batch_rows(plan, out, states))
    atomic_write_text(out / INDEX_JSON, canonical_dumps(index.model_dump(mode="json")))
    counts = {s: sum(1 for r in index.rows if r.status == s) for s in ("ok", "failed", "not-run")}
    html = render_page("evalkit.batch", "batch-index.html.j2", scripts=["batch-index.js.j2"],
                       styles=["batch-index.css.j2"], index=index, table=page_table(index.rows), counts=counts)
    path = out / INDEX_HTML
    atomic_write_text(path, html)
    return path
