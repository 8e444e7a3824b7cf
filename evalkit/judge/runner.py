"""The judge runner: every prompt judged once per repeat, concurrently, resumably, within a budget.

Per (criterion, trace, repeat), in this order: a verdict already in the journal for the same prompt is
taken as it is (resume after a crash or ``kill -9``); a prompt with a ``pre_verdict`` (an unbound term)
is stored without a call; a reply in the cache is replayed (no call); otherwise the judge is called
(:func:`evalkit.judge.calls.judge_once`) by one of ``concurrency`` slots. A slot sends its next request
as soon as a reply lands, before that reply is stored (:meth:`~evalkit.judge.run_loop.RunLoop.worker`);
request bodies are rendered ahead by the loop that queues the prompts, and the provider's connections
are opened while the first ones are queued. New replies are appended to the journal and the cache in
batches, as soon as the writer is free. With ``max_cost`` each call reserves its estimated cost before it
is sent (its prompt's counted tokens and a reply at the cap) and no call starts that could take the money
spent and reserved past the budget; the items left are counted as not run (rerun with a higher budget to
finish them). With a context window, a prompt that cannot fit is an error row, refused before any call.
A deterministic failure (context overflow, a reply invalid after the correction) is journaled and cached
as an error row: a rerun does not ask again unless ``retry_errors``. Calls failing for one transport
reason several times in a row stop the run (:mod:`evalkit.judge.run_control`).

Outputs (written at the end, sorted, atomically; see :mod:`evalkit.judge.run_outputs`): ``OUT`` the
verdicts (``criterion-verdict``), ``OUT.runs.jsonl`` one ``judge-run-record`` per item and repeat
(error rows included), and with repeats ``OUT.repeats.jsonl``. The journal defaults to
``OUT.journal.jsonl`` and is kept: it is what a rerun resumes from.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Coroutine, Iterable
from pathlib import Path
from typing import Any, TypeVar

from evalkit.errors import InputError
from evalkit.judge.cache import JudgeCache
from evalkit.judge.calls import RetryPolicy, Sleep
from evalkit.judge.cost import PriceTable
from evalkit.judge.journal import journal_lock
from evalkit.judge.providers.base import Provider
from evalkit.judge.providers.tokens import TokenCounter
from evalkit.judge.run_loop import RunLoop, Verify
from evalkit.judge.run_outputs import JudgeRunSummary, sidecar_paths, verdict_obj

T = TypeVar("T")


async def run_prompts(prompts: Iterable[Any], provider: Provider, *, out: str | Path, repeats: int = 1,
                      concurrency: int = 16, cache: JudgeCache | None = None, journal: str | Path | None = None,
                      max_cost: float | None = None, prices: PriceTable | None = None,
                      verify: Verify | None = None, progress: bool = True, retry: RetryPolicy | None = None,
                      sleep: Sleep = asyncio.sleep, close_provider: bool = False,
                      counter: TokenCounter | None = None, context: int | None = None,
                      retry_errors: bool = False) -> JudgeRunSummary:
    """Judge every prompt ``repeats`` times and write the verdicts, the runs sidecar and repeat statistics.

    Args:
        prompts: :class:`~evalkit.judge.prompt.JudgePrompt`s, consumed as a stream.
        provider: the judge (:func:`~evalkit.judge.providers.make_provider`).
        out: the verdicts file (JSONL); sidecars are written beside it.
        repeats: times each prompt is judged; one canonical verdict per item (see ``run_outputs``).
        concurrency: calls in flight at most.
        cache: replies to replay and to store; None to call for every item.
        journal: the journal to append to and resume from; defaults to ``OUT.journal.jsonl``.
        max_cost: USD; no call starts once this much is spent. Needs the model's price.
        prices: the price table; the built-in one by default.
        verify: downgrades each verdict that its refs do not support (``evalkit.judge.verifier``).
        progress: show a progress bar on stderr.
        retry: the retry policy (backoff, jitter seed, attempts).
        sleep: the wait between retries (tests inject one that records).
        close_provider: close the provider once its last call has landed, while the outputs are written
            (and in any case before returning or raising).
        counter: counts each prompt's tokens (for the context check and the budget); the estimate by default.
        context: the model's context window in tokens; None: unknown (until a context overflow names it).
        retry_errors: ask again the items whose deterministic error an earlier run kept.

    Returns:
        What the run did; ``stopped`` says why it ended early, if it did.

    Raises:
        InputError: bad arguments, a journal of another judge, a prompt given twice.
        FatalError: the provider refused every call (credentials, model); outputs are still written.
    """
    closer = _Closer(provider) if close_provider else None
    try:
        return await _run_prompts(prompts, provider, out, repeats, concurrency, cache, journal, max_cost, prices,
                                  verify, progress, retry, sleep, closer, counter, context, retry_errors)
    finally:
        if closer is not None:
            await closer.close()


class _Closer:
    """Closes a provider once, whichever of the run's end or its failure asks first."""

    def __init__(self, provider: Provider) -> None:
        self.provider, self.closed = provider, False

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            await self.provider.aclose()


async def _run_prompts(prompts: Iterable[Any], provider: Provider, out: str | Path, repeats: int, concurrency: int,
                       cache: JudgeCache | None, journal: str | Path | None, max_cost: float | None,
                       prices: PriceTable | None, verify: Verify | None, progress: bool, retry: RetryPolicy | None,
                       sleep: Sleep, closer: _Closer | None, counter: TokenCounter | None, context: int | None,
                       retry_errors: bool) -> JudgeRunSummary:
    if repeats < 1 or concurrency < 1:
        raise InputError(f"repeats ({repeats}) and concurrency ({concurrency}) must be at least 1")
    prices = prices or PriceTable.load()
    if max_cost is not None and not prices.knows(provider.model):
        raise InputError(f"--max-cost needs a price for model {provider.model!r}: add it to a price table "
                         "(models: {MODEL: {input: USD, output: USD}} per million tokens)")
    out = Path(out)
    runs_path, default_journal, repeats_path = sidecar_paths(out)
    journal_path = Path(journal) if journal is not None else default_journal
    started = time.monotonic()
    with journal_lock(journal_path):
        run = RunLoop(provider, out, journal_path, repeats, concurrency, cache, max_cost, prices, verify,
                      retry or RetryPolicy(), sleep, progress, counter=counter or TokenCounter(), context=context,
                      retry_errors=retry_errors)
        run.closer = closer
        if hasattr(prompts, "__len__"):
            run.bar.total = len(prompts) * repeats  # type: ignore[arg-type]
        try:
            run.open_journal()
            if isinstance(prompts, list):
                await run.count_ahead(prompts)
            await run.run(prompts)
            written, stats = await run.write_outputs(out, runs_path, repeats_path if repeats > 1 else None)
        finally:
            run.show()
            run.close()
            if cache is not None:
                cache.commit()
    summary = run.summary
    summary.verdicts, summary.repeat_stats = written, stats if repeats > 1 else None
    summary.seconds = time.monotonic() - started
    if run.fatal is not None:
        raise run.fatal
    return summary


def run_judge(prompts: Iterable[Any], provider: Provider, **kwargs: Any) -> JudgeRunSummary:
    """:func:`run_prompts` from synchronous code (the CLI): runs the loop and closes the provider."""
    return run_coroutine(run_prompts(prompts, provider, close_provider=True, **kwargs))


def run_coroutine(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to its end from synchronous code, and return its result.

    Where an event loop already runs in this thread (a Jupyter cell, a notebook executed in process),
    ``asyncio.run`` would refuse, so the coroutine gets a loop of its own on a worker thread.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalkit-judge") as pool:
        return pool.submit(asyncio.run, coro).result()


__all__ = ["JudgeRunSummary", "run_coroutine", "run_judge", "run_prompts", "sidecar_paths", "verdict_obj"]
