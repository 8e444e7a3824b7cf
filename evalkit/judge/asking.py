"""Asking a model for structured replies that are not verdicts: the verifier's question about each verdict,
and the writer of synthetic test cases (:mod:`evalkit.suite`), on the judge's machinery.

Each prompt goes the way a judge prompt does: a reply already journaled for the same prompt digest is taken as
it is (a killed run resumes without paying twice), then the run's reply cache (keyed by provider, model,
temperature, token cap and prompt digest, as the judge's), then a call (:func:`evalkit.judge.calls.judge_once`:
the retry policy, one correction turn for an invalid reply, the caller's ``parse``). Given a token counter and
the model's context (:func:`~evalkit.judge.judge_setup`), a prompt that cannot fit with the reply's cap is
refused before the call, as the judge's runner refuses it. Each new reply is journaled as it lands and cached;
tokens and cost are counted (a replayed reply costs nothing now), and a call starts only when what it may
cost fits what is left of ``budget``.

The judge's own runner (:mod:`evalkit.judge.runner`) writes verdicts and their run records; what is asked here
has another shape, so it shares everything below that: the providers, the call, the cache, the journal files,
the prices.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from evalkit.errors import InputError
from evalkit.io.canonical import canonical_line
from evalkit.judge.cache import CachedReply, JudgeCache, key_maker
from evalkit.judge.calls import RetryPolicy, judge_once, output_text
from evalkit.judge.cost import PriceTable
from evalkit.judge.journal import append_lines, drop_cut_off_tail, iter_journal, journal_lock
from evalkit.judge.providers.tokens import TokenCounter, fits
from evalkit.judge.reply_cap import DEFAULT_MAX_TOKENS
from evalkit.judge.run_control import Budget


class Asked(Protocol):
    """A prompt to ask: its messages, the reply's JSON Schema and the digest of both."""

    messages: tuple[dict[str, str], ...]
    schema: dict[str, Any]
    digest: str


class Answer(NamedTuple):
    """A reply (None when there is none) and what getting it took."""

    output: dict[str, Any] | None
    tokens: tuple[int | None, int | None]
    cost: float | None
    attempts: int
    cached: bool
    error: str | None
    resumed: bool = False


@dataclass
class AskSummary:
    """Calls, replies taken from the cache or the journal, tokens and cost of one asker."""

    calls: int = 0
    cache_hits: int = 0
    resumed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unknown_cost_calls: int = 0
    errors: int = 0

    def cost_text(self) -> str:
        return f"${self.cost_usd:.4f}" + (" + unknown" if self.unknown_cost_calls else "")


class ReplyJournal:
    """One line per reply, by prompt digest, after a header naming who answers (``{kind: 1, provider, model,
    temperature}``); a rerun takes its replies from it.

    Raises:
        InputError: the journal was written by another provider or model, or holds a line without a digest.
    """

    def __init__(self, path: Path, provider: Any, kind: str, noun: str) -> None:
        self.path = path
        self.header = {kind: 1, "provider": provider.name, "model": provider.model,
                       "temperature": float(provider.temperature)}
        self.replies: dict[str, dict[str, Any]] = {}
        drop_cut_off_tail(path)
        seen_header = False
        for line, record in iter_journal(path):
            if kind in record:
                if record != self.header:
                    raise InputError(f"this {noun} journal was written by {record.get('provider')}/"
                                     f"{record.get('model')}, not {provider.name}/{provider.model}: remove it "
                                     "or write to another output", file=str(path), line=line)
                seen_header = True
                continue
            try:
                self.replies[record["digest"]] = record
            except (KeyError, TypeError):
                raise InputError(f"not a {noun} journal record (missing digest)", file=str(path),
                                 line=line) from None
        if not seen_header:
            append_lines(path, [canonical_line(self.header)])

    def add(self, digest: str, output: dict[str, Any], tokens: tuple[int | None, int | None],
            cost: float | None, attempts: int) -> None:
        record = {"digest": digest, "output": output, "inputTokens": tokens[0], "outputTokens": tokens[1],
                  "costUsd": cost, "attempts": attempts}
        self.replies[digest] = record
        append_lines(self.path, [canonical_line(record)])


class Asker:
    """Asks one provider prompts whose replies ``parse`` reads (see the module docstring).

    Args:
        provider: any judge provider.
        journal: the journal file to append to and resume from, locked until :meth:`close` (another run
            writing it is refused); None for none (a library call that keeps its replies itself).
        kind: the journal header's key (``verifierJournal``, ``generatorJournal``): a journal of another kind
            or another provider is refused.
        noun: how errors name the journal ("verifier", "case generator").
        parse: reads a reply's text into its validated JSON object, raising ValueError with what to fix.
        cache: the reply cache, or None.
        concurrency: calls in flight at most.
        prices: the price table (the built-in one by default).
        budget: USD; each call first reserves what it may cost (its prompt, counted or estimated, and a reply
            at the token cap), as the judge runner's ``--max-cost`` does, so calls in flight never overrun it;
            a prompt whose call does not fit what is left gets no answer (saying why).
        retry: the retry policy.
        counter: counts each prompt's tokens (:attr:`~evalkit.judge.JudgeSetup.counter`); with ``context``, a
            prompt that cannot fit with the reply's cap gets no call and an answer saying why.
        context: the model's context window in tokens; None: unknown (every prompt is sent).
    """

    def __init__(self, provider: Any, *, journal: str | Path | None, kind: str, noun: str,
                 parse: Callable[[str], dict[str, Any]], cache: JudgeCache | None = None, concurrency: int = 8,
                 prices: PriceTable | None = None, budget: float | None = None,
                 retry: RetryPolicy | None = None, counter: TokenCounter | None = None,
                 context: int | None = None) -> None:
        self.provider, self.parse, self.cache, self.budget = provider, parse, cache, budget
        # --max-cost as the judge runner holds it: each call reserves what it may cost before it starts
        self._money = Budget(budget) if budget is not None else None
        self.prices = prices or PriceTable.load()
        self.policy = retry or RetryPolicy()
        self.counter, self.context = counter, context
        # held until close(), as a judge run holds its journal: two runs never append to one journal at once
        self._held = contextlib.ExitStack()
        self.book: ReplyJournal | None = None
        if journal is not None:
            self._held.enter_context(journal_lock(journal))
            try:
                self.book = ReplyJournal(Path(journal), provider, kind, noun)
            except BaseException:
                self._held.close()
                raise
        self.make_key = key_maker(provider.name, provider.model, provider.temperature,
                                  getattr(provider, "max_tokens", None))
        self.slots = asyncio.Semaphore(concurrency)
        self.summary = AskSummary()

    def _count_call(self) -> None:
        self.summary.calls += 1

    async def ask(self, prompt: Asked, *, label: str,
                  parse: Callable[[str], dict[str, Any]] | None = None) -> Answer:
        """The reply to one prompt: from the journal, the cache, or a call (within the budget and the context).

        Args:
            prompt: what to ask.
            label: names the item (seeds its retry jitter, as the judge's item key does).
            parse: this prompt's reader, when it differs from the asker's (a reply checked against what this
                prompt holds).
        """
        s = self.summary
        parse = parse or self.parse
        key = self.make_key(prompt.digest, 0)
        if self.book is not None and prompt.digest in self.book.replies:
            r = self.book.replies[prompt.digest]
            s.resumed += 1
            return Answer(r["output"], (r["inputTokens"], r["outputTokens"]), r["costUsd"], 0, False, None, True)
        if self.cache is not None and (hit := self.cache.rows([key]).get(key)) is not None:
            _, text, in_t, out_t, cost, _ = hit
            s.cache_hits += 1
            return Answer(parse(text), (in_t, out_t), cost, 0, True, None)
        cap = int(getattr(self.provider, "max_tokens", None) or DEFAULT_MAX_TOKENS)
        prompt_tokens = None
        if (self.counter is not None and self.context is not None) or self._money is not None:
            counter = self.counter or TokenCounter()  # the estimate, for a budget without a counter
            count = await counter.count(prompt.messages, prompt.schema, mode=getattr(self.provider, "mode", None))
            prompt_tokens = count.tokens
            why = fits(count, cap, self.context)
            if why is not None:
                s.errors += 1
                return Answer(None, (count.tokens, None), None, 0, False, why)
        # What the call may cost at most (its prompt and a reply at the cap); a replayed reply spends nothing.
        estimate = 0.0 if self.provider.name == "replay" or prompt_tokens is None else \
            (self.prices.cost(self.provider.model, prompt_tokens, cap) or 0.0)
        async with self.slots:  # the budget is read when a slot is free: the calls that held it have landed
            if self._money is not None and (s.cost_usd >= self.budget or not self._money.reserve(estimate)):
                s.errors += 1
                return Answer(None, (None, None), None, 0, False,
                              f"the budget of ${self.budget:g} was spent (${self._money.spent:.4f} spent, "
                              f"${self._money.reserved:.4f} held by calls in flight, the next call could cost up "
                              f"to ${estimate:.4f})")
            try:
                outcome = await judge_once(self.provider, list(prompt.messages), prompt.schema, key=label,
                                           policy=self.policy, on_call=self._count_call, parse=parse)
            except BaseException:
                if self._money is not None:
                    self._money.settle(estimate, None)  # an unknown outcome is held at what it may have cost
                raise
        tokens = (outcome.input_tokens, outcome.output_tokens)
        s.input_tokens += outcome.input_tokens or 0
        s.output_tokens += outcome.output_tokens or 0
        cost = self.prices.cost(self.provider.model, outcome.input_tokens, outcome.output_tokens)
        if self.provider.name == "replay":
            cost_now = 0.0  # a replayed reply spends nothing now
        elif cost is None:
            s.unknown_cost_calls += outcome.attempts
            cost_now = None
        else:
            s.cost_usd += cost
            cost_now = cost
        if self._money is not None:
            self._money.settle(estimate, cost_now)
        if outcome.output is None:
            s.errors += 1
        else:
            if self.book is not None:
                self.book.add(prompt.digest, outcome.output, tokens, cost, outcome.attempts)
            if self.cache is not None:
                self.cache.put(key, CachedReply(output_text(outcome.output), tokens[0], tokens[1], cost,
                                                outcome.mode or ""))
        return Answer(outcome.output, tokens, cost, outcome.attempts, False, outcome.error)

    def close(self) -> None:
        """Commit the cache (the journal is written as replies land) and let the journal go."""
        try:
            if self.cache is not None:
                self.cache.commit()
        finally:
            self._held.close()


__all__ = ["Answer", "AskSummary", "Asked", "Asker", "ReplyJournal"]
