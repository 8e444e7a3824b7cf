"""Judging traces: the one set-up every judge run shares (``judge run``, ``judge prompt``, the scorecard's
batch judge). Check that no metadata field gives the labels away, build the prompts, check the model the
server serves, count the prompts' tokens against its context, open the cache, run; or only estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.contracts.judge import JudgeSpec
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.trace import Trace
from evalkit.errors import InputError
from evalkit.judge.cache import JudgeCache
from evalkit.judge.cost import PriceTable
from evalkit.judge.estimate import RunEstimate, estimate_run
from evalkit.judge.grounding import verifier
from evalkit.judge.model_check import check_model
from evalkit.judge.prompt import JudgePrompt, build_prompts, check_label_proxies
from evalkit.judge.providers.base import Provider
from evalkit.judge.providers.tokens import TokenCount, TokenCounter, fits, token_counter
from evalkit.judge.run_outputs import JudgeRunSummary, sidecar_paths
from evalkit.judge.runner import run_coroutine, run_judge
from evalkit.judge.sessions import session_traces_by_id

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


class NotConfirmed(InputError):
    """The run's estimated cost is over ``--confirm-over`` and nobody said yes.

    What to do: read the estimate (``--estimate``), then raise ``--confirm-over`` or answer yes at a terminal.
    """


@dataclass(frozen=True)
class JudgeSetup:
    """What a run is measured against before any call: the token counter, the context window, the prices
    (without one for a model the server did not confirm)."""

    counter: TokenCounter
    context: int | None
    prices: PriceTable


def judge_setup(provider: Provider, prices: PriceTable | None = None, *, context_window: int | None = None,
                strict_model: bool = False, warn: Callable[[str], None] | None = None) -> JudgeSetup:
    """Check the model with its server (:func:`~evalkit.judge.model_check.check_model`), choose the token
    counter (:func:`~evalkit.judge.providers.tokens.token_counter`) and the context window: ``context_window``, else
    the price table's for a confirmed model, else unknown (until a context overflow names it)."""
    prices = prices or PriceTable.load()
    for note in getattr(provider, "warnings", ()):  # a replayed cassette's cut-off entry
        if warn is not None:
            warn(f"warning: {note}")
    checked = check_model(provider, prices, strict=strict_model, warn=warn)
    counter = token_counter(provider.name, provider.model, getattr(provider, "base_url", None), judge=provider)
    context = context_window if context_window is not None else \
        (prices.context(provider.model) if checked.confirmed else None)
    return JudgeSetup(counter, context, checked.prices)


def estimate_traces(work: Work, provider: Provider, out: str | Path, *, labels: Iterable[HumanLabel] | None = None,
                    traces_by_id: Mapping[str, Trace] | None = None, cache: str | Path | None = None,
                    journal: str | Path | None = None, repeats: int = 1, prices: PriceTable | None = None,
                    context_window: int | None = None, strict_model: bool = False, retry_errors: bool = False,
                    warn: Callable[[str], None] | None = None) -> RunEstimate:
    """``judge run --estimate``: the calls, tokens and cost a :func:`judge_traces` run with these arguments
    would make (:mod:`evalkit.judge.estimate`); no call to the judge, and nothing written."""
    prompts = judge_prompts(work, labels=labels, traces_by_id=traces_by_id)
    setup = judge_setup(provider, prices, context_window=context_window, strict_model=strict_model, warn=warn)
    replies = JudgeCache(cache) if cache and Path(cache).exists() else None
    journal_path = Path(journal) if journal is not None else sidecar_paths(Path(out))[1]
    try:
        return run_coroutine(estimate_run(prompts, provider, setup.counter, repeats=repeats, context=setup.context,
                                          prices=setup.prices, cache=replies, journal=journal_path,
                                          retry_errors=retry_errors))
    finally:
        if replies is not None:
            replies.close()
        run_coroutine(provider.aclose())


def judge_traces(work: Work, provider: Provider, out: str | Path, *, labels: Iterable[HumanLabel] | None = None,
                 traces_by_id: Mapping[str, Trace] | None = None, cache: str | Path | None = None,
                 verify: bool = True, prices: PriceTable | None = None, context_window: int | None = None,
                 strict_model: bool = False, confirm_over: float | None = None,
                 confirm: Callable[[RunEstimate], bool] | None = None,
                 warn: Callable[[str], None] | None = None, **run: Any) -> JudgeRunSummary:
    """Judge each spec on its traces: :func:`judge_prompts`, the model checked with its server and the
    prompts measured against its context (:func:`judge_setup`), then :func:`~evalkit.judge.run_judge` with
    the reply cache open and every verdict verified against its trace.

    Args:
        work: each spec with the traces it judges.
        provider: the judge (closed when the run ends).
        out: the verdicts file; the runs file, the journal and repeat statistics go beside it.
        labels: as for :func:`judge_prompts`.
        traces_by_id: as for :func:`judge_prompts`; also what each verdict's refs are checked against (a
            session judge's against the session it judged).
        cache: the SQLite reply cache, or None.
        verify: re-resolve each verdict's refs against its trace (False: ``--verify none``).
        prices: the price table (the shipped one by default).
        context_window: the model's context in tokens, over the price table's.
        strict_model: a model the server does not list is an error, not a warning.
        confirm_over: USD; a run whose estimated cost may pass this asks ``confirm`` first.
        confirm: shown the estimate, says whether to go on (None: the run is refused).
        warn: told what the user should know before the run starts (a model the server does not list).
        **run: the runner's options (repeats, concurrency, journal, max_cost, progress, retry_errors).

    Raises:
        NotConfirmed: the estimate is over ``confirm_over`` and was not confirmed; no call was made.
    """
    by_id = _by_id(work, traces_by_id)
    prompts = judge_prompts(work, labels=labels, traces_by_id=by_id)
    try:
        setup = judge_setup(provider, prices, context_window=context_window, strict_model=strict_model, warn=warn)
    except BaseException:
        run_coroutine(provider.aclose())
        raise
    replies = JudgeCache(cache) if cache else None
    try:
        if confirm_over is not None:
            _confirm(prompts, provider, setup, replies, out, run, confirm_over, confirm)
        checked = {**by_id, **{t.id: t for spec, traces in work for t in session_traces_by_id([spec], traces).values()}}
        return run_judge(prompts, provider, out=Path(out), cache=replies, verify=verifier(checked) if verify else None,
                         prices=setup.prices, counter=setup.counter, context=setup.context, **run)
    finally:
        if replies is not None:
            replies.close()


def _confirm(prompts: list[JudgePrompt], provider: Provider, setup: JudgeSetup, cache: JudgeCache | None,
             out: str | Path, run: dict[str, Any], over: float, confirm: Callable[[RunEstimate], bool] | None) -> None:
    journal = run.get("journal")
    estimate = run_coroutine(estimate_run(
        prompts, provider, setup.counter, repeats=run.get("repeats", 1), context=setup.context, prices=setup.prices,
        cache=cache, journal=Path(journal) if journal else sidecar_paths(Path(out))[1],
        retry_errors=run.get("retry_errors", False)))
    high = estimate.cost_high
    if high is not None and high <= over:
        return
    if confirm is not None and confirm(estimate):
        return
    run_coroutine(provider.aclose())
    cost = "unknown (no price for the model)" if high is None else f"up to ${high:.4f}"
    raise NotConfirmed(f"the run's cost is {cost}, over --confirm-over ${over:g}, and was not confirmed: nothing "
                       "was called; see it with --estimate, then raise --confirm-over or answer yes at a terminal",
                       path="--confirm-over")


@dataclass(frozen=True)
class PromptSize:
    """A prompt's tokens, the reply's cap, the context window (when known), and why it cannot fit (or None)."""

    count: TokenCount
    cap: int
    context: int | None
    refused: str | None

    def describe(self) -> str:
        room = f" of a context of {self.context}" if self.context is not None else " (context window unknown)"
        return f"{self.count.describe()} + a reply of at most {self.cap}{room}" + \
            (f": REFUSED, {self.refused}" if self.refused else "")


def prompt_sizes(prompts: Sequence[JudgePrompt], pin: Any = None, *, base_url: str | None = None,
                 context_window: int | None = None, prices: PriceTable | None = None) -> list[PromptSize]:
    """Each prompt's token count for the judge ``pin`` names (None: estimated), and whether it fits (what
    ``judge prompt`` shows; no call to the model, only to a local server's tokenizer)."""
    from evalkit.judge.reply_cap import DEFAULT_MAX_TOKENS

    name, model = (pin.provider, pin.model) if pin is not None else ("", "")
    url = base_url or (pin.base_url if pin is not None else None)
    counter = token_counter(name, model, url)
    cap = int(getattr(pin, "max_tokens", None) or DEFAULT_MAX_TOKENS)
    context = context_window if context_window is not None else (prices or PriceTable.load()).context(model)
    mode = "json_schema" if name == "openai" else None

    async def count_all() -> list[TokenCount]:
        return [await counter.count(p.messages, p.schema, mode=mode) for p in prompts]

    return [PromptSize(c, cap, context, fits(c, cap, context)) for c in run_coroutine(count_all())]


def _by_id(work: Work, traces_by_id: Mapping[str, Trace] | None) -> Mapping[str, Trace]:
    if traces_by_id is not None:
        return traces_by_id
    return {trace.id: trace for _, traces in work for trace in traces}


__all__ = ["JudgeSetup", "NotConfirmed", "PromptSize", "Work", "prompt_sizes", "estimate_traces", "judge_prompts", "judge_setup", "judge_traces"]
