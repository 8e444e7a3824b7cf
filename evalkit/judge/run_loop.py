"""The judge runner's loop: units queued for ``concurrency`` slots, replies stored in batches, the journal.

:func:`evalkit.judge.runner.run_prompts` builds a :class:`RunLoop` and drives it; this module holds what
happens per unit (resume, pre-verdict, cache, call) and per tick (store the replies that landed, append
them to the journal), kept apart from the public entry points.
"""

from __future__ import annotations

import asyncio
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
from evalkit.judge.journal import (
    append_lines,
    check_journal_header,
    drop_cut_off_tail,
    iter_journal,
    journal_header,
)
from evalkit.judge.providers.base import Provider
from evalkit.judge.providers.tokens import ServerCounter, TokenCounter, fits
from evalkit.judge.run_control import Budget, TransportWatch
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
"""Journal and cache are written as soon as the writer thread is idle, so each reply is on disk moments
after it lands (a kill re-pays at most the calls in flight and the replies of one write); while the writer
is busy replies wait until this many are pending or this long has passed, so fsync does not throttle fast
servers."""
ERROR_MODE = "error"
"""The cache's ``mode`` of a deterministic error kept in place of a reply (its ``output`` is the message)."""


class RunLoop:
    """One judge run's state and event loop work: the queue of units, the slots, the journal, the summary.

    Built and driven by :func:`evalkit.judge.runner.run_prompts` (see that module's docstring for the
    order in which an item is finished)."""

    def __init__(self, provider: Provider, out: Path, journal: Path, repeats: int, concurrency: int,
                 cache: JudgeCache | None, max_cost: float | None, prices: PriceTable, verify: Verify | None,
                 policy: RetryPolicy, sleep: Sleep, progress: bool, *, counter: TokenCounter | None = None,
                 context: int | None = None, retry_errors: bool = False) -> None:
        self.provider, self.repeats, self.cache = provider, repeats, cache
        self.max_cost, self.prices, self.verify = max_cost, prices, verify
        self.budget = Budget(max_cost) if max_cost is not None else None
        self.watch = TransportWatch()
        self.counter, self.context, self.retry_errors = counter, context, retry_errors
        self.max_tokens = int(getattr(provider, "max_tokens", None) or 0)
        self.policy, self.sleep, self.journal, self.concurrency = policy, sleep, journal, concurrency
        self.queue: asyncio.Queue[tuple[Any, int, Any] | None] = asyncio.Queue(maxsize=concurrency)
        self.prepare = getattr(provider, "prepare", None)  # renders a request body ahead (openai)
        self.landed: list[tuple[Any, int, CallOutcome, float | None]] = []
        self.closer: Any = None  # closes the provider when its last call has landed (run_judge's runs)
        self.workers: list[asyncio.Task] = []
        self.first_calls = 0  # slots yet to take their first unit
        self.cached_errors = 0  # error rows replayed by the current cache batch
        self.counts: dict[str, Any] = {}  # prompt tokens counted ahead, by prompt digest
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
        self.header = journal_header(provider)
        from tqdm import tqdm

        self.bar = tqdm(unit="item", disable=not progress, mininterval=0.2, dynamic_ncols=True)

    # -- the journal ---------------------------------------------------------------------------
    def open_journal(self) -> None:
        drop_cut_off_tail(self.journal)
        header_seen = False
        for line, record in iter_journal(self.journal):
            if "judgeJournal" in record:
                check_journal_header(record, self.header, self.journal, line)
                header_seen = True
                continue
            try:
                if record["result"] is None and self.retry_errors:
                    continue  # asked again: the item's next record replaces this one
                verdict = record["verdict"]
                self.items.add_resumable(record["criterionId"], record["traceId"], record["repeat"],
                                         record["promptDigest"], record["result"],
                                         None if verdict is None else canonical_line(verdict),
                                         canonical_line(record["run"]))
            except (KeyError, TypeError) as exc:
                raise InputError(f"not a judge journal record (missing {exc})", file=str(self.journal),
                                 line=line) from None
            self.resumable = True
        if not header_seen:  # by the writer thread, first in its queue: before any record, off the loop
            self.writes.append(self.writer.submit(append_lines, self.journal, [canonical_line(self.header)]))

    def flush(self, force: bool = False) -> None:
        writing = bool(self.writes) and not self.writes[-1].done()
        if not force and writing and len(self.pending_journal) < FLUSH_RECORDS \
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

    async def write_outputs(self, out: Path, runs: Path, repeats: Path | None) -> tuple[int, Any]:
        """Write the output files and the journal's last lines and, with ``close_provider``, close the
        provider's connections.

        The journal's last lines are handed to the writer thread once the outputs are written, just
        before those go to disk: their flushes then run at the same time. Started earlier, the journal's
        flush held up creating the output files and their own flushes (a file system commits its metadata
        in one journal of its own: 5 to 7 ms at the end of every run, measured here, against 2)."""
        closing = asyncio.ensure_future(self.closer.close()) if self.closer is not None else None
        await asyncio.sleep(0)  # the provider closes its sockets now
        try:
            written = self.items.write(out, runs, self.repeats, repeats, before_sync=lambda: self.flush(force=True))
        finally:
            self.flush(force=True)  # nothing left when the outputs were written; else kept for a resume
        await self.drain()
        if closing is not None:
            await closing
        return written

    async def drain(self) -> None:
        """Wait for every journal append handed to the writer thread (call after ``flush(force=True)``)."""
        while self.writes:
            await asyncio.wrap_future(self.writes.popleft())

    def close(self) -> None:
        """End the run's resources, whether it finished or failed: the progress bar, the writer thread
        (a failed run's last appends finish first) and the finished-items spill."""
        self.bar.close()
        self.writer.shutdown(wait=bool(self.writes))
        self.items.close()

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
        if self.resumable:
            taken = self.items.take_resumable(c, t, repeat, prompt.digest)
            if taken is not None:
                self.summary.resumed += 1
                if taken[0] is not None:
                    self.summary.verdicts += 1
                else:  # a deterministic error kept from an earlier run: not asked again without retry_errors
                    self.kept_error(prompt, orjson.loads(taken[2]).get("error") or "error")
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
            if mode == ERROR_MODE:
                if self.retry_errors:
                    misses.append((prompt, repeat))
                else:  # the same request failed the same way before: not paid for again
                    self.cached_error(prompt, repeat, output, (input_tokens, output_tokens))
                continue
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
        self.summary.verdicts += found - self.cached_errors
        self.cached_errors = 0
        return misses

    def cached_error(self, prompt: Any, repeat: int, error: str, tokens: tuple[int | None, int | None]) -> None:
        """An error row replayed from the cache (a deterministic failure of an earlier run)."""
        run = self.run_record(prompt, repeat, None, tokens=tokens, attempts=0, cached=True, cost=None, mode=None,
                              error=error)
        self.items.add(prompt.criterion_id, prompt.trace_id, repeat, None, None, record_line(run))
        self.cached_errors += 1
        self.kept_error(prompt, error)

    def kept_error(self, prompt: Any, error: str) -> None:
        """Count an error row an earlier run left (journal or cache)."""
        self.summary.errors += 1
        self.summary.kept_errors += 1
        self.summary.tally.add(prompt.criterion_id, prompt.trace_id, error)

    def refused(self, prompt: Any, repeat: int, why: str, tokens: int) -> None:
        """An item that cannot fit the model's context: an error row, and no call."""
        run = self.run_record(prompt, repeat, None, tokens=(tokens, None), attempts=0, cached=False, cost=None,
                              mode=None, error=why)
        self.items.add(prompt.criterion_id, prompt.trace_id, repeat, None, None, record_line(run))
        self.journal_error(prompt, repeat, run)  # a rerun that no longer knows the context does not send it
        self.summary.errors += 1
        self.summary.refused += 1
        self.summary.tally.add(prompt.criterion_id, prompt.trace_id, why)

    async def worker(self) -> None:
        """One slot of concurrency: take the next unit, call, hand the reply over, repeat.

        When a reply lands the slot only accounts for it (tokens, cost: the budget sees it at once) and
        sends its next request, already rendered; storing the reply (verdict, verify, journal, cache)
        waits for :meth:`store_landed`, which the loop runs after every slot whose reply landed in the
        same tick has sent its next request. So a request never waits for the handling of the replies
        that landed with it, and the calls in flight stay spread out in time instead of moving in waves.
        """
        while True:
            unit = await self.queue.get()
            if unit is None:
                return
            prompt, repeat, prepared, tokens = unit
            estimate = self.estimate(tokens)
            reason = self.stop_reason(estimate)  # decided when a slot is free: the calls that held it have landed
            if reason is not None:
                if self.failure is None:
                    self.summary.stopped = self.summary.stopped or reason
                    self.summary.not_run += 1
                continue
            try:
                outcome = await judge_once(self.provider, list(prompt.messages), prompt.schema,
                                           key=f"{prompt.criterion_id}\0{prompt.trace_id}\0{repeat}",
                                           policy=self.policy, sleep=self.sleep, on_call=self.count_call,
                                           should_stop=self.halted, prepared=prepared, watch=self.watch)
                cost = self.account(outcome)
                if self.budget is not None:
                    self.budget.settle(estimate or 0.0, cost)
                self.landed.append((prompt, repeat, outcome, cost))
                if len(self.landed) == 1:
                    asyncio.get_running_loop().call_soon(self.store_landed)
            except Exception as exc:  # a bug: stop and re-raise after the loop
                self.failure = self.failure or exc

    def store_landed(self) -> None:
        """Store every reply that landed since the last tick, then append them to the journal in one batch."""
        landed, self.landed = self.landed, []
        try:
            for prompt, repeat, outcome, cost in landed:
                self.store(prompt, repeat, outcome, cost)
            self.flush()
        except Exception as exc:  # a bug or a full disk: stop and re-raise after the loop
            self.failure = self.failure or exc
        self.show()

    def count_call(self) -> None:
        self.summary.calls += 1

    def halted(self) -> bool:
        """No further call (retries included): the provider refused the run, or the transport keeps failing."""
        return self.fatal is not None or self.watch.stopped is not None

    def estimate(self, tokens: int | None) -> float | None:
        """A call's cost at most: its prompt's counted tokens and a reply at the cap (None: not priced)."""
        if self.budget is None or tokens is None:
            return None
        return self.prices.cost(self.provider.model, tokens, self.max_tokens)

    def account(self, outcome: CallOutcome) -> float | None:
        """Add a call's retries, tokens and cost to the summary (at once: the budget check reads them)."""
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
        if outcome.output is None:
            s.errors += 1
        return cost

    def store(self, prompt: Any, repeat: int, outcome: CallOutcome, cost: float | None) -> None:
        """The reply's run record and verdict (or error row), its cache entry and its journal line."""
        tokens = (outcome.input_tokens, outcome.output_tokens)
        run = self.run_record(prompt, repeat, None, tokens=tokens, attempts=outcome.attempts, cached=False,
                              cost=cost, mode=outcome.mode, error=outcome.error)
        if outcome.output is None:
            run_line = record_line(run)
            self.items.add(prompt.criterion_id, prompt.trace_id, repeat, None, None, run_line)
            self.summary.tally.add(prompt.criterion_id, prompt.trace_id, outcome.error or "error")
            if outcome.context is not None and self.context is None:
                self.context = outcome.context  # the server named it: later prompts are measured against it
            if outcome.deterministic:  # the same request would fail the same way: kept, not paid for again
                if self.cache is not None:
                    error = CachedReply(outcome.error or "error", tokens[0], tokens[1], cost, ERROR_MODE)
                    self.cache.put(self.make_key(prompt.digest, repeat), error)
                self.journal_error(prompt, repeat, run)
            return
        if self.cache is not None:
            reply = CachedReply(output_text(outcome.output), tokens[0], tokens[1], cost, outcome.mode or "")
            self.cache.put(self.make_key(prompt.digest, repeat), reply)
        self.finish(prompt, repeat, outcome.output, run, journal=True)

    def journal_error(self, prompt: Any, repeat: int, run: dict[str, Any]) -> None:
        """Journal a deterministic error row, which a rerun resumes instead of asking again."""
        self.pending_journal.append(record_line({
            "criterionId": prompt.criterion_id, "traceId": prompt.trace_id, "repeat": repeat,
            "promptDigest": prompt.digest, "result": None, "verdict": None, "run": run}))

    def stop_reason(self, estimate: float | None = None) -> str | None:
        if self.failure is not None:
            return "failure"
        if self.fatal is not None:
            return f"fatal provider error: {self.fatal}"
        if self.watch.stopped is not None:
            return self.watch.stopped
        if self.budget is not None:
            if estimate is None:  # a prompt not counted (should not happen: a budget counts every prompt)
                estimate = 0.0
            if not self.budget.reserve(estimate):
                return (f"budget of ${self.max_cost:g} reached (${self.budget.spent:.4f} spent, the next call "
                        f"could cost up to ${estimate:.4f})")
        return None

    def show(self) -> None:
        if self.bar.disable:
            return
        s = self.summary
        # Items finished, moved as each reply lands (a slow judge's bar does not sit at 0 until the end).
        self.bar.update(s.verdicts + s.errors + s.not_run - self.bar.n)
        cost = f"${s.cost_usd:.4f}" + ("+?" if s.unknown_cost_calls else "")
        self.bar.set_postfix_str(f"calls={s.calls} cached={s.cache_hits} retries={s.retry_count} "
                                 f"errors={s.errors} tokens={s.input_tokens + s.output_tokens} cost={cost}",
                                 refresh=False)

    # -- the loop ------------------------------------------------------------------------------
    async def count(self, prompt: Any) -> Any:
        """The prompt's tokens: counted ahead (:meth:`count_ahead`), else now."""
        count = self.counts.pop(prompt.digest, None)
        if count is None:
            count = await self.counter.count(prompt.messages, prompt.schema, mode=getattr(self.provider, "mode", None))
            if self.repeats > 1:
                self.counts[prompt.digest] = count  # the next repeats of this prompt
        elif self.repeats > 1:
            self.counts[prompt.digest] = count
        return count

    async def count_ahead(self, prompts: list[Any]) -> None:
        """Count every prompt before the first call: a local server answers one request at a time, so its
        tokenizer is asked while it is idle rather than behind a call that takes minutes."""
        if self.counter is None or (self.budget is None and self.context is None) \
                or not isinstance(self.counter, ServerCounter):
            return
        mode = getattr(self.provider, "mode", None)
        for prompt in prompts:
            if prompt.pre_verdict is None and prompt.digest not in self.counts:
                self.counts[prompt.digest] = await self.counter.count(prompt.messages, prompt.schema, mode=mode)

    async def dispatch(self, batch: list[tuple[Any, int]]) -> None:
        """Finish the batch's cached units, then queue each other one for the next free slot."""
        self.show()
        await asyncio.sleep(0)  # let replies in flight land
        prepare = self.prepare
        units = self.from_cache(batch)
        if units and not self.workers:  # started at the first call needed: a rerun from the cache needs none
            connect = getattr(self.provider, "connect", None)
            if connect is not None:  # a remote pool opens while the first bodies are rendered
                connect(min(self.concurrency, len(units)))
            self.workers = [asyncio.create_task(self.worker()) for _ in range(self.concurrency)]
            self.first_calls = self.concurrency
        for prompt, repeat in units:
            if self.failure is not None:
                raise self.failure
            tokens = None
            if self.counter is not None and (self.budget is not None or self.context is not None):
                count = await self.count(prompt)
                tokens = count.tokens
                why = fits(count, self.max_tokens, self.context)
                if why is not None:  # refused before any call: it cannot fit
                    self.refused(prompt, repeat, why, count.tokens)
                    continue
            # Rendered here, while the slots wait on their calls, not when a reply lands.
            await self.queue.put((prompt, repeat, prepare(prompt.messages, prompt.schema) if prepare else None,
                                  tokens))
            if self.first_calls:  # each slot's first call leaves at once, not once every slot's body is rendered
                self.first_calls -= 1
                await asyncio.sleep(0)

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
            self.show()
            for _ in self.workers:
                await self.queue.put(None)  # each slot ends after the units queued before it
            await asyncio.gather(*self.workers)
        finally:
            for worker in self.workers:
                worker.cancel()
            self.store_landed()  # replies that landed before a failure are kept (journal, cache)
        if self.failure is not None:
            raise self.failure


__all__ = ["CACHE_BATCH", "FLUSH_RECORDS", "FLUSH_SECONDS", "RunLoop", "Verify"]
