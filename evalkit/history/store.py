"""The history folder: ``history.jsonl`` (one record per run, append-only) and ``verdicts/`` beside it.

The store follows evalkit's one append-only policy (:mod:`evalkit.io.append_only`): a record lands whole
or not at all, nothing earlier is rewritten, and runs appending at once (a batch's subjects) take turns.
A run's per-item verdicts are kept under ``verdicts/`` by the digest of their content, cut to what a
paired comparison reads (criterion, trace, result, and what blocked an uncertain verdict), so a folder
people commit stays small and runs with the same verdicts share one file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from evalkit.contracts.history import HistoryRecord
from evalkit.io import AppendOnlyStore, atomic_write_text, canonical_line, compact_sorted_json

HISTORY_FILE = "history.jsonl"
VERDICTS_FOLDER = "verdicts"
DEFAULT_FOLDER = "history"
"""A command that records runs and is not told where records them in ``history/`` beside its output folder
(``--out reports/sample`` -> ``reports/history``): runs written side by side share one history."""


def default_history(out_dir: str | Path) -> Path:
    """The history folder of a run written to ``out_dir`` when none is named: ``history`` beside it."""
    return Path(out_dir).parent / DEFAULT_FOLDER


def history_store(folder: str | Path) -> AppendOnlyStore[HistoryRecord]:
    """The append-only store of a history folder."""
    return AppendOnlyStore(Path(folder) / HISTORY_FILE, HistoryRecord)


def read_history(folder: str | Path) -> list[HistoryRecord]:
    """Every record of the history folder, oldest first (none when the folder has no store yet).

    Raises:
        InputError: a line of the store that is not a valid record, as ``FILE:LINE``.
    """
    return history_store(folder).read().records


def record_id(fields: dict[str, Any]) -> str:
    """The digest a record is known by: of its other fields, as canonical JSON."""
    return hashlib.sha256(compact_sorted_json(fields).encode("utf-8")).hexdigest()


def keep_verdicts(folder: str | Path, verdicts_file: str | Path) -> str:
    """Keep a run's per-item verdicts in the history folder; returns their name in it (``verdicts/SHA.jsonl``).

    Raises:
        InputError: the verdicts file is unreadable or holds an invalid record.
    """
    from evalkit.calibration import read_verdicts

    rows = []
    for v in read_verdicts(verdicts_file):
        row: dict[str, Any] = {"criterionId": v.criterion_id, "traceId": v.trace_id, "result": v.result,
                               "confidence": None, "critique": None}
        if v.blocked_by is not None:
            row["blockedBy"] = v.blocked_by.to_json_obj()
        rows.append(row)
    rows.sort(key=lambda r: (r["criterionId"], r["traceId"]))
    text = "".join(canonical_line(r) for r in rows)
    name = f"{VERDICTS_FOLDER}/{hashlib.sha256(text.encode('utf-8')).hexdigest()}.jsonl"
    path = Path(folder) / name
    if not path.is_file():  # named by its content: a file already there holds these very bytes
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
    return name


def append_record(folder: str | Path, record: HistoryRecord) -> bool:
    """Append a run's record unless the latest record of its series is this very one (a rerun of the same
    inputs, time and numbers is one point of the history, so reruns stay byte-identical).

    Returns:
        True when the record was appended.
    """
    store = history_store(folder)
    same = [r for r in store.read().records if (r.series, r.source) == (record.series, record.source)]
    if same and same[-1].id == record.id:
        return False
    store.append([record])
    return True
