"""One structured question to a judge provider that is not a verdict on a trace (a drafted taxonomy, say),
asked through the judge's machinery: the same providers, retries and one correction
(:func:`~evalkit.judge.calls.judge_once`), the same reply cache (keyed by provider, model, temperature, reply
cap and prompt digest) and a journal in the judge journal's format of lines.

Order, as for a judged item: a reply already in the journal for the same prompt digest is taken as it is (a
rerun after a crash pays nothing); else a cached reply is replayed; else the prompt is counted against the
model's context, as the runner counts its prompts (:func:`~evalkit.judge.judge_setup`), and one that cannot
fit with the reply's cap is refused without a call; else the provider is called, and a valid reply is
journaled and cached before it is returned. An invalid reply is never stored, so a rerun asks again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import InputError
from evalkit.io.canonical import canonical_line
from evalkit.judge.cache import CachedReply, JudgeCache, key_maker
from evalkit.judge.calls import RetryPolicy, judge_once, output_text
from evalkit.judge.cost import PriceTable
from evalkit.judge.journal import append_lines, drop_cut_off_tail, iter_journal
from evalkit.judge.prompt import prompt_digest
from evalkit.judge.providers.base import DEFAULT_MAX_TOKENS, Provider
from evalkit.judge.providers.tokens import TokenCounter, fits


@dataclass(frozen=True)
class Answer:
    """A reply to one question (``output`` None when there is none: see ``error``) and what it took."""

    output: dict[str, Any] | None
    digest: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    attempts: int = 0
    source: str = "call"
    """``call``, ``cache``, ``journal``, or ``refused`` (the prompt cannot fit the context: no call)."""
    error: str | None = None


def _header(purpose: str, provider: Provider) -> dict[str, Any]:
    return {"askJournal": 1, "purpose": purpose, "provider": provider.name, "model": provider.model,
            "temperature": float(provider.temperature), "maxTokens": getattr(provider, "max_tokens", None)}


def _journaled(path: Path, header: dict[str, Any], digest: str) -> dict[str, Any] | None:
    """The journal's reply to ``digest`` (None when it has none); a journal of another judge is refused."""
    drop_cut_off_tail(path)
    found = None
    for line, record in iter_journal(path):
        if "askJournal" in record:
            if record != header:
                raise InputError(f"this journal was written by {record.get('provider')}/{record.get('model')} "
                                 f"for {record.get('purpose')!r}, not {header['provider']}/{header['model']} "
                                 f"for {header['purpose']!r}: remove it or write elsewhere", file=str(path), line=line)
            continue
        if not isinstance(record, dict) or "digest" not in record or "output" not in record:
            raise InputError("not a journal record (missing digest or output)", file=str(path), line=line)
        if record["digest"] == digest:
            found = record
    return found


async def ask_structured(provider: Provider, messages: list[dict[str, str]], schema: dict[str, Any], *,
                         parse: Callable[[str], dict[str, Any]], purpose: str, journal: str | Path | None = None,
                         cache: JudgeCache | None = None, retry: RetryPolicy | None = None,
                         prices: PriceTable | None = None, counter: TokenCounter | None = None,
                         context: int | None = None) -> Answer:
    """Ask one question: from the journal, the cache, or one call (with retries and one correction).

    Args:
        provider: any judge provider (:func:`~evalkit.judge.make_provider`).
        messages: the prompt.
        schema: the reply's JSON Schema.
        parse: reads a reply into the validated output, raising ValueError with what to fix.
        purpose: what is asked (``draft-modes``), written in the journal's header.
        journal: where replies are appended and a rerun takes them from; None for none.
        cache: the judge's reply cache; None for none.
        retry: the retry policy.
        prices: the price table for the cost (the built-in one by default).
        counter: counts the prompt's tokens (:attr:`~evalkit.judge.JudgeSetup.counter`); with ``context``,
            a prompt that cannot fit with the reply's cap is refused before any call.
        context: the model's context window in tokens; None: unknown (the prompt is sent).

    Raises:
        InputError: a journal written by another judge or for another purpose.
    """
    digest = prompt_digest(messages, schema)
    header = _header(purpose, provider)
    path = Path(journal) if journal is not None else None
    if path is not None and (hit := _journaled(path, header, digest)) is not None:
        return Answer(hit["output"], digest, hit.get("inputTokens"), hit.get("outputTokens"), hit.get("costUsd"),
                      0, "journal")
    key = key_maker(provider.name, provider.model, provider.temperature,
                    getattr(provider, "max_tokens", None))(digest, 0)
    if cache is not None and (row := cache.get(key)) is not None:
        answer = Answer(parse(row.output), digest, row.input_tokens, row.output_tokens, row.cost_usd, 0, "cache")
        _append(path, header, answer)
        return answer
    if counter is not None and context is not None:
        count = await counter.count(messages, schema, mode=getattr(provider, "mode", None))
        why = fits(count, int(getattr(provider, "max_tokens", None) or DEFAULT_MAX_TOKENS), context)
        if why is not None:
            return Answer(None, digest, count.tokens, 0, None, 0, "refused", why)
    outcome = await judge_once(provider, list(messages), schema, key=f"{purpose}\0{digest}",
                               policy=retry or RetryPolicy(), parse=parse)
    if outcome.fatal is not None:
        raise outcome.fatal
    cost = None if provider.name == "replay" else \
        (prices or PriceTable.load()).cost(provider.model, outcome.input_tokens, outcome.output_tokens)
    answer = Answer(outcome.output, digest, outcome.input_tokens, outcome.output_tokens, cost, outcome.attempts,
                    "call", outcome.error)
    if outcome.output is not None:
        if cache is not None:
            cache.put(key, CachedReply(output_text(outcome.output), outcome.input_tokens, outcome.output_tokens,
                                       cost, outcome.mode or ""))
            cache.commit()
        _append(path, header, answer)
    return answer


def _append(path: Path | None, header: dict[str, Any], answer: Answer) -> None:
    if path is None:
        return
    lines = [] if path.exists() and path.stat().st_size else [canonical_line(header)]
    lines.append(canonical_line({"digest": answer.digest, "output": answer.output,
                                 "inputTokens": answer.input_tokens, "outputTokens": answer.output_tokens,
                                 "costUsd": answer.cost_usd, "attempts": answer.attempts}))
    append_lines(path, lines)


def ask(provider: Provider, messages: list[dict[str, str]], schema: dict[str, Any], **options: Any) -> Answer:
    """:func:`ask_structured` from synchronous code; the provider is closed afterwards."""
    from evalkit.judge.runner import run_coroutine

    async def run() -> Answer:
        try:
            return await ask_structured(provider, messages, schema, **options)
        finally:
            await provider.aclose()

    return run_coroutine(run())
