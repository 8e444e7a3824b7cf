"""``evalkit judge run --estimate``: what a run would call and cost, before any call.

Per criterion: the items, those the journal or the cache already answers (no call), those decided
without a call (an unbound term), those that would not fit the model's context (refused, no call), and
the calls left, with their prompts' input tokens counted (:mod:`evalkit.judge.providers.tokens`: the tokenizer's
name says whether it is exact or an estimate) and the replies' tokens at most the cap each. The cost is
a range: the input alone, and the input with every reply at its cap; unknown without a price.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.judge.cache import JudgeCache, key_maker
from evalkit.judge.cost import PriceTable
from evalkit.judge.journal import iter_journal
from evalkit.judge.providers.tokens import TokenCounter, fits


@dataclass
class CriterionEstimate:
    """One criterion's share of a run, before it runs."""

    criterion_id: str
    items: int = 0
    answered: int = 0
    """Items the journal or the cache already holds a reply (or a deterministic error) for."""
    without_call: int = 0
    too_long: int = 0
    calls: int = 0
    input_tokens: int = 0
    reply_cap: int = 0
    cost_low: float | None = 0.0
    cost_high: float | None = 0.0

    @property
    def output_tokens_at_most(self) -> int:
        return self.calls * self.reply_cap


@dataclass
class RunEstimate:
    """A run's estimate: per criterion, and how the tokens were counted."""

    criteria: list[CriterionEstimate] = field(default_factory=list)
    method: str = ""

    @property
    def cost_high(self) -> float | None:
        costs = [c.cost_high for c in self.criteria]
        return None if any(c is None for c in costs) else sum(costs)  # type: ignore[arg-type]

    def lines(self) -> list[str]:
        """The estimate as the command prints it."""
        out = []
        for c in self.criteria:
            cost = "unknown (no price for the model)" if c.cost_low is None else \
                f"${c.cost_low:.4f} to ${c.cost_high:.4f}"
            skipped = []
            if c.answered:
                skipped.append(f"{c.answered} already answered")
            if c.without_call:
                skipped.append(f"{c.without_call} decided without a call")
            if c.too_long:
                skipped.append(f"{c.too_long} too long for the context (refused)")
            out.append(f"  {c.criterion_id}: {c.items} items, {c.calls} calls"
                       + (f" ({', '.join(skipped)})" if skipped else "")
                       + f", input tokens {c.input_tokens}, output tokens at most {c.output_tokens_at_most}, "
                       f"cost {cost}")
        total_calls = sum(c.calls for c in self.criteria)
        total_in = sum(c.input_tokens for c in self.criteria)
        high = self.cost_high
        out.append(f"  in all: {total_calls} calls, input tokens {total_in} ({self.method}), cost "
                   + ("unknown" if high is None else f"at most ${high:.4f}"))
        return out


def _journaled(journal: Path, retry_errors: bool) -> set[tuple[str, str, int, str]]:
    done = set()
    for _, record in iter_journal(journal):
        if "judgeJournal" in record:
            continue
        if record.get("result") is None and retry_errors:
            continue
        done.add((record["criterionId"], record["traceId"], record["repeat"], record["promptDigest"]))
    return done


async def estimate_run(prompts: Iterable[Any], provider: Any, counter: TokenCounter, *, repeats: int = 1,
                       context: int | None = None, prices: PriceTable | None = None,
                       cache: JudgeCache | None = None, journal: Path | None = None,
                       retry_errors: bool = False) -> RunEstimate:
    """The calls, tokens and cost of judging ``prompts`` with ``provider`` (no call is made).

    Args:
        prompts: the run's prompts.
        provider: the judge (its name, model and reply cap).
        counter: counts each prompt's tokens.
        repeats: judgements per item.
        context: the model's context window in tokens, when known.
        prices: the price table; without the model's price the cost is unknown.
        cache: the reply cache a run would replay from.
        journal: the journal a run would resume from.
        retry_errors: errors kept in the journal or cache would be asked again.
    """
    prices = prices or PriceTable.load()
    cap = int(getattr(provider, "max_tokens", None) or 0)
    done = _journaled(journal, retry_errors) if journal is not None and journal.exists() else set()
    make_key = key_maker(provider.name, provider.model, provider.temperature, getattr(provider, "max_tokens", None))
    by_criterion: dict[str, CriterionEstimate] = {}
    for prompt in prompts:
        row = by_criterion.setdefault(prompt.criterion_id, CriterionEstimate(prompt.criterion_id, reply_cap=cap))
        row.items += repeats
        if prompt.pre_verdict is not None:
            row.without_call += repeats
            continue
        wanted = [r for r in range(repeats) if (prompt.criterion_id, prompt.trace_id, r, prompt.digest) not in done]
        if cache is not None and wanted:
            hits = cache.rows([make_key(prompt.digest, r) for r in wanted])
            wanted = [r for r in wanted if make_key(prompt.digest, r) not in hits
                      or (retry_errors and hits[make_key(prompt.digest, r)][5] == "error")]
        row.answered += repeats - len(wanted)
        if not wanted:
            continue
        count = await counter.count(prompt.messages, prompt.schema, mode=getattr(provider, "mode", None))
        if fits(count, cap, context) is not None:
            row.too_long += len(wanted)
            continue
        row.calls += len(wanted)
        row.input_tokens += count.tokens * len(wanted)
        low = prices.cost(provider.model, count.tokens, 0)
        high = prices.cost(provider.model, count.tokens, cap)
        row.cost_low = None if low is None or row.cost_low is None else row.cost_low + low * len(wanted)
        row.cost_high = None if high is None or row.cost_high is None else row.cost_high + high * len(wanted)
    for row in by_criterion.values():
        if not prices.knows(provider.model):
            row.cost_low = row.cost_high = None
    return RunEstimate([by_criterion[c] for c in sorted(by_criterion)], counter.method)


__all__ = ["CriterionEstimate", "RunEstimate", "estimate_run"]
