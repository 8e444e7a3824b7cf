"""``evalkit judge lint``: the grounding problems of a verdicts file, each located by its line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from evalkit.contracts.trace import Trace
from evalkit.errors import InputError
from evalkit.io.documents import read_records
from evalkit.judge.grounding import GroundingProblem, lint_verdicts


@dataclass(frozen=True)
class VerdictFileLint:
    """What :func:`lint_verdict_file` found."""

    records: int
    """Verdicts read."""
    problems: list[tuple[int | None, GroundingProblem]]
    """Each problem with the line of its verdict, in file order."""


def lint_verdict_file(path: str | Path, traces_by_id: Mapping[str, Trace]) -> VerdictFileLint:
    """:func:`~evalkit.judge.lint_verdicts` over a criterion-verdict JSONL file from any tool (records are
    read raw, not validated, so a defect shows as a problem rather than stopping the read).

    Raises:
        InputError: the file cannot be read, holds no verdicts, or a line is not JSON.
    """
    records = read_records(path, "jsonl")
    if not records:
        raise InputError("no verdicts in the file: nothing to lint (an empty run, or the wrong file?)", file=str(path))
    problems = lint_verdicts([r.value for r in records], traces_by_id)
    return VerdictFileLint(len(records), [(records[p.index].line, p) for p in problems])


__all__ = ["VerdictFileLint", "lint_verdict_file"]
