"""Reading two runs' verdicts and joining them on (criterion, trace or case).

A run is a CriterionVerdict file (JSONL, JSON or YAML, read with ``evalkit.calibration.read_verdicts``)
or the verdicts themselves. ``join_on="case"`` pairs the traces of agent runs on dataset cases by
their case id: the trace id of a suite run is ``CASE-rREPEAT`` (``evalkit.suite.run_trace_id``), so
the ``-rN`` suffix is dropped; a run with two verdicts on one key is refused (compare one repeat, or
use ``join_on="trace"``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evalkit.calibration import read_verdicts
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError

JoinOn = Literal["trace", "case"]
RunInput = str | Path | Sequence[CriterionVerdict]

_REPEAT_SUFFIX = re.compile(r"-r\d+$")


def case_of_trace(trace_id: str) -> str:
    """The case id of a suite run's trace (``CASE-rN`` -> ``CASE``); other ids are returned as they are."""
    return _REPEAT_SUFFIX.sub("", trace_id)


@dataclass(frozen=True)
class RunVerdicts:
    """One run's verdicts keyed by (criterion, key), with its name and what reading it left out."""

    name: str
    by_key: dict[tuple[str, str], CriterionVerdict]
    notes: tuple[str, ...] = ()


def load_run(run: RunInput, *, name: str, join_on: JoinOn = "trace") -> RunVerdicts:
    """One run's verdicts, keyed for joining.

    Args:
        run: a verdicts file, or the verdicts.
        name: how the run is called in messages (the file name by default in callers).
        join_on: ``trace`` or ``case``.

    Raises:
        InputError: an unreadable file or record, or two verdicts on the same (criterion, key).
    """
    if join_on not in ("trace", "case"):
        raise InputError(f"must be 'trace' or 'case' (got {join_on!r})", path="join_on")
    notes: list[InputError] = []
    file = None
    if isinstance(run, str | Path):
        file = str(run)
        verdicts = read_verdicts(run, notes=notes)
    else:
        verdicts = list(run)
    out: dict[tuple[str, str], CriterionVerdict] = {}
    first: dict[tuple[str, str], int] = {}
    for i, v in enumerate(verdicts):
        key = (v.criterion_id, v.trace_id if join_on == "trace" else case_of_trace(v.trace_id))
        if key in out:
            raise InputError(f"{name}: a second verdict on criterion {key[0]!r} and {join_on} {key[1]!r} "
                             f"(first is record {first[key] + 1}); a comparison needs one verdict per "
                             f"{join_on}: compare one repeat, or join on trace",
                             file=file, path=f"[{i}]")
        out[key] = v
        first[key] = i
    return RunVerdicts(name=name, by_key=out, notes=tuple(str(n) for n in notes))


def run_name(run: RunInput, default: str) -> str:
    """The file name of a run given as a path, else ``default``."""
    return Path(run).name if isinstance(run, str | Path) else default
