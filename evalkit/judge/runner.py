"""The judge runner: every prompt judged once per repeat, concurrently, resumably, within a budget.

Per (criterion, trace, repeat), in this order: a verdict already in the journal for the same prompt is
taken as it is (resume after a crash or ``kill -9``); a prompt with a ``pre_verdict`` (an unbound term)
is stored without a call; a reply in the cache is replayed (no call); otherwise the judge is called
(:func:`evalkit.judge.calls.judge_once`) by one of ``concurrency`` slots, each taking the next prompt
as soon as it has recorded its last reply. New replies are appended to the journal and the cache in
batches as they arrive. Once the money spent reaches
``max_cost`` no new call starts (calls in flight finish, so the overshoot is at most ``concurrency``
calls) and the items left are counted as not run; rerun with a higher budget to finish them.

Outputs (written at the end, sorted, atomically; see :mod:`evalkit.judge.run_outputs`): ``OUT`` the
verdicts (``criterion-verdict``), ``OUT.runs.jsonl`` one ``judge-run-record`` per item and repeat
(error rows included), and with repeats ``OUT.repeats.jsonl``. The journal defaults to
``OUT.journal.jsonl`` and is kept: it is what a rerun resumes from.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson

from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import FatalError, InputError
from evalkit.io.canonical import canonical_line
from evalkit.judge.cache import CachedReply, JudgeCache, key_maker
from evalkit.judge.calls import CallOutcome, RetryPolicy, Sleep, judge_once, output_text
from evalkit.judge.cost import PriceTable
from evalkit.judge.journal import append_lines, drop_cut_off_tail, iter_journal, journal_lock
from evalkit.judge.providers.base import Provider
from evalkit.judge.run_outputs import (
    FinishedItems,
    JudgeRunSummary,
    cached_run_line,
    journal_line,
    record_line,
    sidecar_paths,
    verdict_obj,
)

Verify = Callable[[Any, CriterionVerdict], CriterionVerdict]
CACHE_BATCH = 256
"""Units looked up in the cache per query; also how often the progress bar moves during a replay."""
FLUSH_RECORDS = 256
FLUSH_SECONDS = 0.25
"""Journal and cache are written when this many replies are pending or this long has passed: a crash
loses at most these (their calls are made again), and fsync does not throttle fast servers."""


class _Run:
    def __init__(self, provider: Provider, out: Path, journal: Path, repeats: int, concurrency: int,
                 cache: JudgeCache | None, max_cost: float | None, prices: PriceTable, verify: Verify | None,
                 policy: RetryPolicy, sleep: Sleep, progress: bool) -> None:
        self.provider, self.repeats, self.cache = provider, repeats, cache
        self.max_cost, self.prices, self.verify = max_cost, prices, verify
        self.policy, self.sleep, self.journal, self.concurrency = policy, sleep, journal, concurrency
        self.queue: asyncio.Queue[tuple[Any, int] | None] = asyncio.Queue(maxsize=concurrency)
        self.workers: list[asyncio.Task] = []
        runs, _, _ = sidecar_paths(out)
        self.summary = JudgeRunSummary(verdicts_path=out, runs_path=runs, journal_path=journal)
        self.items = FinishedItems()
        self.pending_journal: list[str] = []
        self.last_flush = time.monotonic()
        self.resumable = False
        self.fatal: FatalError | None = None
        self.failure: BaseException | None = None
        self.cached_run_line = cached_run_line(provider.name, provider.model, provider.temperature)
        self.make_key = key_maker(provider.name, provider.model, provider.temperature,
                                  getattr(provider, "max_tokens", None))
        self.writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="judge-journal")
        self.writes: deque[Future] = deque()
        self.header = {"judgeJournal": {"model": provider.model, "provider": provider.name,
                                        "temperature": float(provider.temperature)}}
        from tqdm import tqdm

        self.bar = tqdm(unit="item", disable=not progress, mininterval=0.2, dynamic_ncols=True)

    # -- the journal ---------------------------------------------------------------------------
    def open_journal(self) -> None:
        drop_cut_off_tail(self.journal)
        header_seen = False
        for line, record in iter_journal(self.journal):
            if "judgeJournal" in record:
                if record != self.header:
                    raise InputError(f"this journal is of another judge ({record['judgeJournal']}, not "
                                     f"{self.header['judgeJournal']}): pass another --journal or delete it",
                                     file=str(self.journal), line=line)
                header_seen = True
                continue
            try:
                self.items.add_resumable(record["criterionId"], record["traceId"], record["repeat"],
                                         record["promptDigest"], record["result"],
                                         canonical_line(record["verdict"]),
                                         canonical_line(record["run"]))
            except (KeyError, TypeError) as exc:
                raise InputError(f"not a judge journal record (missing {exc})", file=str(self.journal),
                                 line=line) from None
            self.resumable = True
        if not header_seen:
            append_lines(self.journal, [canonical_line(self.header)])

    def flush(self, force: bool = False) -> None:
        if not force and len(self.pending_journal) < FLUSH_RECORDS \
                and time.monotonic() - self.last_flush < FLUSH_SECONDS:
            return
        if self.cache is not None:
            self.cache.commit()  # before the journal: a journal record always has its cache entry
        lines, self.pending_journal = self.pending_journal, []
        self.last_flush = time.monotonic()
        if lines:
            # fsync takes milliseconds: one writer thread appends, in order, while calls go on.
            self.writes.append(self.writer.submit(append_lines, self.journal, lines))
            while self.writes and self.writes[0].done():
                self.writes.popleft().result()  # a failed write stops the run

    async def drain(self) -> None:
        """Wait for every journal append to be on disk."""
        self.flush(force=True)
        while self.writes:
            await asyncio.wrap_future(self.writes.popleft())

    # -- one item ------------------------------------------------------------------------------
    def run_record(self, prompt: Any, repeat: int, result: str | None, *, tokens: tuple[int | None, int | None],
                   attempts: int, cached: bool, cost: float | None, mode: str | None,
                   error: str | None = None) -> dict[str, Any]:
        record = {"criterionId": prompt.criterion_id, "traceId": prompt.trace_id, "repeat": repeat,
                  "provider": self.provider.name, "model": self.provider.model,
                  "temperature": float(self.provider.temperature), "promptDigest": prompt.digest,
                  "result": result, "inputTokens": tokens[0], "outputTokens": tokens[1], "attempts": attempts,
                  "cached": cached, "costUsd": cost, "structuredOutput": mode}
        if prompt.judge_digest is not None:
            record["judgeDigest"] = prompt.judge_digest
        if error is not None:
            record["error"] = error
        return record

    def finish(self, prompt: Any, repeat: int, output: dict[str, Any], run: dict[str, Any], *,
               journal: bool) -> None:
        verdict = verdict_obj(output, prompt.criterion_id, prompt.trace_id)
        if self.verify is not None:
            verdict = self.verify(prompt, CriterionVerdict.model_validate(verdict)).to_json_obj()
        run["result"] = verdict["result"]
        verdict_line, run_line = record_line(verdict), record_line(run)
        self.items.add(prompt.criterion_id, prompt.trace_id, repeat, verdict["result"], verdict_line, run_line)
        self.summary.verdicts += 1
        if journal:
            self.pending_journal.append(journal_line(prompt.criterion_id, prompt.trace_id, repeat, prompt.digest,
                                                     verdict["result"], verdict_line, run_line))

    def without_call(self, prompt: Any, repeat: int) -> bool:
        """Finish the item from the journal or its pre-verdict; False when it needs the cache or a call."""
        c, t = prompt.criterion_id, prompt.trace_id
        if self.resumable and self.items.take_resumable(c, t, repeat, prompt.digest):
            self.summary.resumed += 1
            self.summary.verdicts += 1
            return True
        if prompt.pre_verdict is not None:
            verdict = prompt.pre_verdict.to_json_obj()
            run = self.run_record(prompt, repeat, verdict["result"], tokens=(None, None), attempts=0,
                                  cached=False, cost=None, mode=None)
            self.items.add(c, t, repeat, verdict["result"], canonical_line(verdict), canonical_line(run))
            self.summary.without_call += 1
            self.summary.verdicts += 1
            return True
        return False

    def from_cache(self, units: list[tuple[Any, int]]) -> list[tuple[Any, int]]:
        """Finish the units whose reply is cached (one query per batch); the rest, which need a call. A
        rerun's hot loop: :meth:`finish` inlined; replies were validated when stored (only valid ones are)."""
        if self.cache is None:
            return units
        make_key = self.make_key
        keys = [make_key(prompt.digest, repeat) for prompt, repeat in units]
        hits = self.cache.rows(keys)
        misses = []
        run_line = self.cached_run_line
        add, loads, verify = self.items.add, orjson.loads, self.verify
        for (prompt, repeat), key in zip(units, keys, strict=True):
            hit = hits.get(key)
            if hit is None:
                misses.append((prompt, repeat))
                continue
            _, output, input_tokens, output_tokens, cost, mode = hit
            c, t = prompt.criterion_id, prompt.trace_id
            verdict = verdict_obj(loads(output), c, t)
            if verify is not None:
                verdict = verify(prompt, CriterionVerdict.model_validate(verdict)).to_json_obj()
            result = verdict["result"]
            add(c, t, repeat, result, record_line(verdict),
                run_line(c, t, repeat, prompt.digest, result, input_tokens, output_tokens, cost, mode,
                         prompt.judge_digest))
        found = len(units) - len(misses)
        self.summary.cache_hits += found
        self.summary.verdicts += found
        return misses

    async def worker(self) -> None:
        """One slot of concurrency: take the next unit, call, record, repeat.

        A slot starts its next call as soon as it has recorded its reply, before the other replies of
        the same moment are handled: the calls in flight spread out in time instead of moving in waves,
        each held back by the handling of all the others (at 64 slots and 50 ms, that wait was 5 to 10%).
        """
        while True:
            unit = await self.queue.get()
            if unit is None:
                return
            prompt, repeat = unit
            reason = self.stop_reason()  # decided when a slot is free: the calls that held it have landed
            if reason is not None:
                if self.failure is None:
                    self.summary.stopped = self.summary.stopped or reason
                    self.summary.not_run += 1
                continue
            try:
                outcome = await judge_once(self.provider, list(prompt.messages), prompt.schema,
                                           key=f"{prompt.criterion_id}\0{prompt.trace_id}\0{repeat}",
                                           policy=self.policy, sleep=self.sleep, on_call=self.count_call,
                                           should_stop=lambda: self.fatal is not None)
                self.record_call(prompt, repeat, outcome)
                self.flush()
            except Exception as exc:  # a bug or a full disk: stop and re-raise after the loop
                self.failure = self.failure or exc
            self.show()

    def count_call(self) -> None:
        self.summary.calls += 1
    def record_call(self, prompt: Any, repeat: int, outcome: CallOutcome) -> None:
        s = self.summary
        for kind, n in outcome.retries.items():
            s.retries[kind] = s.retries.get(kind, 0) + n
        s.input_tokens += outcome.input_tokens or 0
        s.output_tokens += outcome.output_tokens or 0
        cost = self.prices.cost(self.provider.model, outcome.input_tokens, outcome.output_tokens)
        if self.provider.name == "replay":
            pass  # the record keeps what the reply cost when recorded; replaying it spends nothing
        elif cost is None:
            s.unknown_cost_calls += outcome.attempts
        else:
            s.cost_usd += cost
        if outcome.fatal is not None:
            self.fatal = self.fatal or outcome.fatal
        tokens = (outcome.input_tokens, outcome.output_tokens)
        run = self.run_record(prompt, repeat, None, tokens=tokens, attempts=outcome.attempts, cached=False,
                              cost=cost, mode=outcome.mode, error=outcome.error)
        if outcome.output is None:
            s.errors += 1
            self.items.add(prompt.criterion_id, prompt.trace_id, repeat, None, None, record_line(run))
            return
        if self.cache is not None:
            reply = CachedReply(output_text(outcome.output), tokens[0], tokens[1], cost, outcome.mode or "")
            self.cache.put(self.make_key(prompt.digest, repeat), reply)
        self.finish(prompt, repeat, outcome.output, run, journal=True)

    def stop_reason(self) -> str | None:
        if self.failure is not None:
            return "failure"
        if self.fatal is not None:
            return f"fatal provider error: {self.fatal}"
        if self.max_cost is not None and self.summary.cost_usd >= self.max_cost:
            return f"budget of ${self.max_cost:g} reached"
        return None

    def show(self) -> None:
        if self.bar.disable:
            return
        s = self.summary
        cost = f"${s.cost_usd:.4f}" + ("+?" if s.unknown_cost_calls else "")
        self.bar.set_postfix_str(f"calls={s.calls} cached={s.cache_hits} retries={s.retry_count} "
                                 f"errors={s.errors} tokens={s.input_tokens + s.output_tokens} cost={cost}",
                                 refresh=False)

    # -- the loop ------------------------------------------------------------------------------
    async def dispatch(self, batch: list[tuple[Any, int]]) -> None:
        """Finish the batch's cached units, then queue each other one for the next free slot."""
        self.bar.update(self.summary.items - self.bar.n)
        self.show()
        await asyncio.sleep(0)  # let replies in flight land
        for unit in self.from_cache(batch):
            if self.failure is not None:
                raise self.failure
            if not self.workers:  # started at the first call needed: a rerun from the cache needs none
                self.workers = [asyncio.create_task(self.worker()) for _ in range(self.concurrency)]
            await self.queue.put(unit)

    async def run(self, prompts: Iterable[Any]) -> None:
        try:
            batch: list[tuple[Any, int]] = []
            since, repeats = 0, range(self.repeats)
            for prompt in prompts:
                for repeat in repeats:
                    if not ((self.resumable or prompt.pre_verdict is not None) and self.without_call(prompt, repeat)):
                        batch.append((prompt, repeat))
                since += self.repeats
                if len(batch) >= CACHE_BATCH or since >= CACHE_BATCH:
                    self.summary.items += since
                    await self.dispatch(batch)
                    batch, since = [], 0
            self.summary.items += since
            await self.dispatch(batch)
            self.bar.update(self.summary.items - self.bar.n)
            for _ in self.workers:
                await self.queue.put(None)  # each slot ends after the units queued before it
            await asyncio.gather(*self.workers)
        finally:
            for worker in self.workers:
                worker.cancel()
        if self.failure is not None:
            raise self.failure
        await self.drain()


async def run_prompts(prompts: Iterable[Any], provider: Provider, *, out: str | Path, repeats: int = 1,
                      concurrency: int = 16, cache: JudgeCache | None = None, journal: str | Path | None = None,
                      max_cost: float | None = None, prices: PriceTable | None = None,
                      verify: Verify | None = None, progress: bool = True, retry: RetryPolicy | None = None,
                      sleep: Sleep = asyncio.sleep) -> JudgeRunSummary:
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

    Returns:
        What the run did; ``stopped`` says why it ended early, if it did.

    Raises:
        InputError: bad arguments, a journal of another judge, a prompt given twice.
        FatalError: the provider refused every call (credentials, model); outputs are still written.
    """
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
        run = _Run(provider, out, journal_path, repeats, concurrency, cache, max_cost, prices, verify,
                   retry or RetryPolicy(), sleep, progress)
        if hasattr(prompts, "__len__"):
            run.bar.total = len(prompts) * repeats  # type: ignore[arg-type]
        try:
            run.open_journal()
            await run.run(prompts)
            written, stats = run.items.write(out, runs_path, repeats, repeats_path if repeats > 1 else None)
        finally:
            run.show()
            run.bar.close()
            run.writer.shutdown(wait=True)
            run.items.close()
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
    async def main() -> JudgeRunSummary:
        try:
            return await run_prompts(prompts, provider, **kwargs)
        finally:
            await provider.aclose()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    # Called where an event loop already runs in this thread (a Jupyter cell, a notebook executed in
    # process): asyncio.run would refuse, so the run gets a loop of its own on a worker thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalkit-judge") as pool:
        return pool.submit(asyncio.run, main()).result()


__all__ = ["JudgeRunSummary", "run_judge", "run_prompts", "sidecar_paths", "verdict_obj"]
