"""The judge for the router, as one batch: every (criterion, trace) pair that needs it judged in one run.

The router asks its judge one pair at a time; a model judge is best run as a batch (concurrency, cache,
journal, one progress bar). :func:`batch_judge` finds the pairs first (judge-track criteria on every
trace; hybrid criteria only where their code check passed, since a code fail is final), judges them with
one :func:`evalkit.judge.judge_traces` call, and returns a :data:`~evalkit.checks.router.Judge` that answers
from the verdicts written. A pair the run could not judge (an error row) is ``missing`` on the card.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evalkit.checks.router import Judge, RoutedCriterion, judge_from_verdicts
from evalkit.contracts.judge import JudgeSpec
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict


@dataclass(frozen=True)
class BatchJudged:
    """The judge to route with, what it was asked, and where its verdicts are."""

    judge: Judge
    pairs: int
    """(criterion, trace) pairs sent to the judge run."""
    verdicts: list[CriterionVerdict]
    verdicts_path: Path
    criteria: tuple[str, ...]
    """The criteria the judge decides (those with a spec)."""


def judge_pairs(routed: Sequence[RoutedCriterion], traces: Sequence[Trace],
                specs: Mapping[str, JudgeSpec]) -> list[tuple[RoutedCriterion, list[Trace]]]:
    """Per criterion with a spec, the traces its judge must see (a hybrid's code fail is final)."""
    out: list[tuple[RoutedCriterion, list[Trace]]] = []
    for rc in routed:
        if rc.track == "deterministic" or rc.criterion_id not in specs:
            continue
        if rc.track == "hybrid" and rc.check is not None:
            wanted = [t for t in traces if _code_passes(rc, t)]
        else:
            wanted = list(traces)
        out.append((rc, wanted))
    return out


def _code_passes(rc: RoutedCriterion, trace: Trace) -> bool:
    try:
        return rc.check.decide(trace).result != "fail"  # type: ignore[union-attr]
    except Exception:  # noqa: BLE001 - the router records the error; the judge is simply not asked
        return False


def batch_judge(routed: Sequence[RoutedCriterion], traces: Sequence[Trace], specs: Mapping[str, JudgeSpec],
                provider: object, out: str | Path, *, labels: Iterable[HumanLabel] | None = None,
                concurrency: int = 8, progress: bool = False, cache_path: str | Path | None = None) -> BatchJudged:
    """Judge every pair the router will ask about in one run, and return a judge answering from it.

    Args:
        routed: the routed criteria (:func:`evalkit.checks.route`).
        traces: the traces the scorecard is computed over.
        specs: judge specs by criterion id; criteria without one are not judged here.
        provider: the judge provider (:func:`evalkit.judge.make_provider`).
        out: the verdicts file of the judge run (its sidecars and journal go beside it).
        labels: human labels, needed when a spec shows few-shot examples (their split is checked); with
            them, a metadata field shown to the judge that gives the labels is refused.
        concurrency: judge calls in flight at most.
        progress: show the runner's progress bar.
        cache_path: a sqlite reply cache; None for the journal only (reruns resume from it).
    """
    from evalkit.contract_files import read_models
    from evalkit.judge import judge_traces, refuse_session_scope

    refuse_session_scope(specs.values(), "a scorecard of one verdict per trace")
    pairs = judge_pairs(routed, traces, specs)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    # a metadata field that gives the labels is refused over every trace scored
    judge_traces([(specs[rc.criterion_id], wanted) for rc, wanted in pairs], provider,  # type: ignore[arg-type]
                 out, labels=labels, traces_by_id={t.id: t for t in traces}, cache=cache_path,
                 concurrency=concurrency, progress=progress)
    verdicts = read_models(out, CriterionVerdict) if out.stat().st_size else []
    return BatchJudged(judge_from_verdicts(verdicts), sum(len(wanted) for _, wanted in pairs), verdicts, out,
                       tuple(rc.criterion_id for rc, _ in pairs))
