"""Recording a run in the history: its headline numbers, where it came from, and its per-item verdicts.

``evalkit run`` (and each subject of a batch) records after its notebooks ran and before its report is
written, then leaves ``trend.json`` in the run folder: the records of its series up to this run, from
which the report draws the trend. ``evalkit eval run`` records its scorecard the same way.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.contracts.history import HistoryRecord, HistorySource
from evalkit.contracts.summary import CriterionHeadline, Headline, InputDigest, NotebookSummary, RunManifest
from evalkit.history.store import append_record, keep_verdicts, read_history, record_id
from evalkit.io import atomic_write_text, canonical_dumps, compact_sorted_json

TREND_FILE = "trend.json"
"""In a run folder: the run's series in the history up to this run (what the report's trend is drawn from)."""


@dataclass(frozen=True)
class Recorded:
    """What recording a run did: the record, and whether it was new (a rerun of the same is not)."""

    record: HistoryRecord
    appended: bool
    series: list[HistoryRecord]
    """The records of the run's series, oldest first, this one last."""


def merge_headlines(headlines: Iterable[Headline]) -> Headline:
    """One run's headline from its notebooks' shares: a criterion's corrected rate wins over an observed one
    (else the first notebook's is kept), failure modes and the gate come from whichever notebook gives them."""
    criteria: dict[str, CriterionHeadline] = {}
    modes, gate, reasons = [], None, []
    for part in headlines:
        for c in part.criteria:
            if c.criterion not in criteria or (c.corrected and not criteria[c.criterion].corrected):
                criteria[c.criterion] = c
        modes += part.failure_modes
        if part.gate is not None:
            gate, reasons = part.gate, part.gate_reasons
    return Headline(criteria=list(criteria.values()), failure_modes=modes, gate=gate, gate_reasons=reasons)


def run_headline(run_dir: str | Path) -> Headline:
    """The headline numbers of a run folder, from the summaries of the notebooks that finished."""
    from evalkit.contract_files import read_model

    run = Path(run_dir)
    manifest = read_model(run / "run.json", RunManifest)
    parts = []
    for nb in manifest.notebooks:
        path = run / nb.name / "summary.json"
        if nb.status == "ok" and path.is_file():
            summary = read_model(path, NotebookSummary)
            if summary.headline is not None:
                parts.append(summary.headline)
    return merge_headlines(parts)


def inputs_digest(inputs: Iterable[InputDigest | dict[str, Any]]) -> str:
    """Digest of a run's input files by field, path and SHA-256: the same data gives the same digest."""
    rows = sorted((i.field, i.path, i.sha256) if isinstance(i, InputDigest) else (i["field"], i["path"], i["sha256"])
                  for i in inputs)
    return hashlib.sha256(compact_sorted_json(rows).encode("utf-8")).hexdigest()


def _relative(run_path: str | Path, folder: Path) -> str:
    """The run folder as the history names it: relative to the history folder when both share a root."""
    target = Path(os.path.abspath(run_path))
    try:
        return Path(os.path.relpath(target, os.path.abspath(folder))).as_posix()
    except ValueError:  # another drive
        return target.as_posix()


def record_run(history: str | Path, *, series: str, source: HistorySource, headline: Headline,
               inputs: Iterable[InputDigest | dict[str, Any]], run_path: str | Path | None = None,
               run_at: str | None = None, seed: int | None = None, judge: str | None = None,
               batch: str | None = None, verdicts_file: str | Path | None = None) -> Recorded:
    """Append a run's record to the history folder (created when missing).

    Args:
        history: the history folder.
        series: the subject's name.
        source: ``run`` or ``eval-run``.
        headline: the run's headline numbers.
        inputs: the run's input files (their digests).
        run_path: the run folder, recorded relative to the history folder.
        run_at: the run's injected timestamp.
        seed: the subject's seed.
        judge: the subject's pinned judge, ``provider/model``.
        batch: the batch that ran it.
        verdicts_file: the run's per-item verdicts, kept for paired checks.

    Raises:
        InputError: an unreadable store or verdicts file.
    """
    folder = Path(history)
    fields: dict[str, Any] = {
        "series": series, "source": source, "run_at": run_at,
        "run": None if run_path is None else _relative(run_path, folder), "inputs": inputs_digest(inputs),
        "seed": seed, "judge": judge, "batch": batch, "headline": headline.model_dump(mode="json"),
        "verdicts": None if verdicts_file is None else keep_verdicts(folder, verdicts_file),
    }
    record = HistoryRecord(id=record_id(fields), **fields)
    appended = append_record(folder, record)
    series_records = [r for r in read_history(folder) if (r.series, r.source) == (series, source)]
    return Recorded(record, appended, series_records)


def record_notebook_run(run_dir: str | Path, history: str | Path, *, run_path: str | Path | None = None,
                        batch: str | None = None, verdicts_file: str | Path | None = None) -> Recorded:
    """Record a finished ``evalkit run`` folder and leave its series in ``RUN_DIR/trend.json`` for the report.

    Args:
        run_dir: the run folder as it is now (it may be the folder being built).
        history: the history folder.
        run_path: where the run folder will be (default ``run_dir``).
        batch: the batch that ran it.
        verdicts_file: the subject's verdicts (what a paired check compares), if it names any.
    """
    from evalkit.contract_files import read_model

    run = Path(run_dir)
    manifest = read_model(run / "run.json", RunManifest)
    judge = f"{manifest.judge.provider}/{manifest.judge.model}" if manifest.judge else None
    recorded = record_run(history, series=manifest.subject, source="run", headline=run_headline(run),
                          inputs=manifest.inputs, run_path=run_path or run, run_at=manifest.run_at,
                          seed=manifest.seed, judge=judge, batch=batch, verdicts_file=verdicts_file)
    last = max(i for i, r in enumerate(recorded.series) if r.id == recorded.record.id)
    upto = recorded.series[: last + 1]  # a run of the same series recorded since is not this run's past
    atomic_write_text(run / TREND_FILE, canonical_dumps({"series": manifest.subject, "source": "run",
                                                         "records": [r.to_json_obj() for r in upto]}))
    return recorded
