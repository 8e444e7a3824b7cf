"""The loop on a subject file: its ``edd:`` settings, the default evaluation, the remedy command."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalkit.contracts.edd import EddChangeRequest, LoopBudget
from evalkit.edd.evaluate import Evaluate, SuiteEvaluation
from evalkit.edd.loop import Clock, LoopOutcome, run_loop, wall_clock_ms
from evalkit.edd.remedy import RemedyOutcome, run_remedy
from evalkit.errors import InputError


def run_subject_loop(subject_file: str | Path, out_dir: str | Path, *, budget: LoopBudget | None = None,
                     clock: Clock = wall_clock_ms, evaluate: Evaluate | None = None, concurrency: int = 2,
                     case_ids: Sequence[str] | None = None, provider: Any = None) -> LoopOutcome:
    """Run (or resume) the loop on a subject that names its remedy command (``edd:``).

    Args:
        subject_file: the subject; needs ``edd`` (and, for the default evaluation, ``agent``, ``dataset``,
            ``eval_matrix``).
        out_dir: the loop's folder.
        budget: the bounds (None: the ledger's, or the defaults).
        clock: ms since the epoch.
        evaluate: replaces the default evaluation (:class:`SuiteEvaluation`).
        concurrency, case_ids, provider: passed to the default evaluation.

    Raises:
        InputError: the subject has no ``edd`` block, or what the evaluation needs is missing.
    """
    from evalkit.subjects import load_subject

    resolved = load_subject(subject_file)
    subject = resolved.subject
    if subject.edd is None:
        raise InputError("the subject names no remedy command: add edd: {remedy_command: [...], timeout_s: ...}",
                         file=str(subject_file), path="edd")
    settings = subject.edd
    evaluate = evaluate or SuiteEvaluation(subject_file, out_dir, variance_repeats=settings.variance_repeats,
                                           concurrency=concurrency, case_ids=case_ids, provider=provider)

    def remedy(request: EddChangeRequest, request_file: Path, response_file: Path) -> RemedyOutcome:
        return run_remedy(settings.remedy_command, request, request_file.resolve(), response_file.resolve(),
                          cwd=resolved.base, timeout_s=settings.timeout_s)

    return run_loop(subject.name, out_dir, evaluate, remedy, budget=budget, clock=clock,
                    remedy_target=settings.remedy_target)
