"""Judging traces: the one set-up every judge run shares (``judge run``, ``judge prompt``, the scorecard's
batch judge). Check that no metadata field gives the labels away, build the prompts, open the cache, run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from evalkit.contracts.judge import JudgeSpec
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.trace import Trace
from evalkit.judge.cache import JudgeCache
from evalkit.judge.grounding import verifier
from evalkit.judge.prompt import JudgePrompt, build_prompts, check_label_proxies
from evalkit.judge.providers.base import Provider
from evalkit.judge.run_outputs import JudgeRunSummary
from evalkit.judge.runner import run_judge

Work = Sequence[tuple[JudgeSpec, Sequence[Trace]]]
"""Each spec with the traces it judges, in the order the prompts are built."""


def judge_prompts(work: Work, *, labels: Iterable[HumanLabel] | None = None,
                  traces_by_id: Mapping[str, Trace] | None = None) -> list[JudgePrompt]:
    """The prompts of each spec on its traces, once the label leakage checks pass.

    Args:
        work: each spec with the traces it judges.
        labels: human labels with splits: needed for few-shot examples (their split is checked). With them,
            each spec is refused when a metadata field it shows gives the labels
            (:func:`~evalkit.judge.check_label_proxies`), checked over every trace of ``traces_by_id``:
            every trace read, not only those judged now.
        traces_by_id: every trace read, by id; holds the few-shot example traces. Default: the traces judged.

    Raises:
        InputError: a label proxy, a leaked or unknown example, a label shown to the judge.
    """
    by_id = _by_id(work, traces_by_id)
    label_list = None if labels is None else list(labels)
    if label_list is not None:
        for spec, _ in work:
            check_label_proxies(spec, by_id.values(), label_list)
    return [prompt for spec, traces in work
            for prompt in build_prompts(spec, traces, labels=label_list, traces_by_id=by_id)]


def judge_traces(work: Work, provider: Provider, out: str | Path, *, labels: Iterable[HumanLabel] | None = None,
                 traces_by_id: Mapping[str, Trace] | None = None, cache: str | Path | None = None,
                 verify: bool = True, **run: Any) -> JudgeRunSummary:
    """Judge each spec on its traces: :func:`judge_prompts`, then :func:`~evalkit.judge.run_judge` with the
    reply cache open and every verdict verified against its trace.

    Args:
        work: each spec with the traces it judges.
        provider: the judge (closed when the run ends).
        out: the verdicts file; the runs file, the journal and repeat statistics go beside it.
        labels: as for :func:`judge_prompts`.
        traces_by_id: as for :func:`judge_prompts`; also what each verdict's refs are checked against.
        cache: the SQLite reply cache, or None.
        verify: re-resolve each verdict's refs against its trace (False: ``--verify none``).
        **run: the runner's options (repeats, concurrency, journal, max_cost, prices, progress).
    """
    by_id = _by_id(work, traces_by_id)
    prompts = judge_prompts(work, labels=labels, traces_by_id=by_id)
    replies = JudgeCache(cache) if cache else None
    try:
        return run_judge(prompts, provider, out=Path(out), cache=replies, verify=verifier(by_id) if verify else None,
                         **run)
    finally:
        if replies is not None:
            replies.close()


def _by_id(work: Work, traces_by_id: Mapping[str, Trace] | None) -> Mapping[str, Trace]:
    if traces_by_id is not None:
        return traces_by_id
    return {trace.id: trace for _, traces in work for trace in traces}


__all__ = ["Work", "judge_prompts", "judge_traces"]
