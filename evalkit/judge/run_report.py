"""What a judge run did, per criterion, from its runs sidecar (``OUT.runs.jsonl``): for the CLI and the report.

One row per criterion: items judged, calls made (attempts, retries and re-asks included), replies from the
cache, items decided without a call (an unbound term), error rows, the uncertain rate among the results
written, tokens in and out, and the cost: a sum when every call's cost is known, None (unknown, never 0)
as soon as one call's is not. Replayed replies report the cost recorded with them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalkit.errors import InputError
from evalkit.io.strict_json import iter_jsonl_strict

COLUMNS = ("criterionId", "items", "calls", "cached", "withoutCall", "errors", "uncertain", "uncertainRate",
           "inputTokens", "outputTokens", "costUsd", "models")


def runs_path_of(verdicts: str | Path) -> Path:
    """The runs sidecar the judge runner writes beside a verdicts file (``x.jsonl`` -> ``x.runs.jsonl``)."""
    from evalkit.judge.run_outputs import sidecar_paths

    return sidecar_paths(Path(verdicts))[0]


def judge_run_table(runs: str | Path) -> list[dict[str, Any]]:
    """Per criterion, sorted by id: what the run in ``runs`` (a ``judge-run-record`` JSONL) did.

    Raises:
        InputError: the file is unreadable, or a line is not a judge run record (file, line, field named).
    """
    rows: dict[str, dict[str, Any]] = {}
    for line, record in iter_jsonl_strict(Path(runs)):
        try:
            criterion = record["criterionId"]
            row = rows.setdefault(criterion, {
                "criterionId": criterion, "items": 0, "calls": 0, "cached": 0, "withoutCall": 0, "errors": 0,
                "uncertain": 0, "results": 0, "inputTokens": 0, "outputTokens": 0, "costUsd": 0.0,
                "costKnown": True, "models": set()})
            row["items"] += 1
            row["calls"] += record["attempts"]
            row["cached"] += bool(record["cached"])
            row["models"].add(f"{record['provider']} {record['model']}")
            called = record["attempts"] > 0 or record["cached"]
            if not called:
                row["withoutCall"] += record.get("error") is None and record["result"] is not None
            if record["result"] is None:
                row["errors"] += 1
            else:
                row["results"] += 1
                row["uncertain"] += record["result"] == "uncertain"
            row["inputTokens"] += record["inputTokens"] or 0
            row["outputTokens"] += record["outputTokens"] or 0
            if called:
                if record["costUsd"] is None:
                    row["costKnown"] = False
                else:
                    row["costUsd"] += record["costUsd"]
        except (KeyError, TypeError) as exc:
            raise InputError(f"not a judge run record (missing or bad {exc})", file=str(runs), line=line) from None
    out = []
    for criterion in sorted(rows):
        row = rows[criterion]
        out.append({**{k: row[k] for k in COLUMNS if k in row and k not in ("costUsd", "models")},
                    "uncertainRate": row["uncertain"] / row["results"] if row["results"] else None,
                    "costUsd": row["costUsd"] if row["costKnown"] else None,
                    "models": ", ".join(sorted(row["models"]))})
    return [{k: r[k] for k in COLUMNS} for r in out]


def refs_downgrades(verdicts: str | Path) -> tuple[int, int]:
    """How many verdicts the refs check turned uncertain, of the verdicts the judge answered pass or fail.

    The check runs before any LLM verifier, which then sees only the pass and fail left: a judge whose refs
    never resolve (a small model citing what is not there) leaves that verifier nothing to check, and this
    count is what says so.

    Returns:
        (downgraded, decided): verdicts downgraded for refs that do not resolve, and all verdicts the judge
        answered pass or fail (those downgraded included).
    """
    downgraded = decided = 0
    for _, record in iter_jsonl_strict(Path(verdicts)):
        refs_downgraded = record.get("verifiedBy") == "refs" and record.get("result") == "uncertain" \
            and "[verify downgrade]" in (record.get("critique") or "")
        downgraded += refs_downgraded
        decided += refs_downgraded or record.get("result") in ("pass", "fail")
    return downgraded, decided


__all__ = ["COLUMNS", "judge_run_table", "refs_downgrades", "runs_path_of"]
