"""One judged prompt, start to finish: the call, the retries, and the reply checked against the schema.

Retries follow one policy, the runner's (the SDKs' own retries are off): a transient failure (HTTP 429,
5xx, a connection error, a timeout) is retried after ``Retry-After`` when the server sent one, else
after an exponential backoff with full jitter, up to ``max_attempts`` calls. The jitter comes from a
random generator seeded by the policy's seed and the item, so a test (or a rerun) sees the same delays
whatever order items finish in. A reply that is not valid JSON for the schema is sent back once with
the validation error; a second invalid reply is an error row, never a made-up verdict.

Some failures are deterministic: the same request at temperature 0 fails the same way every time (a
prompt longer than the model's context, a reply still invalid after the correction). The outcome says so,
and the runner keeps them (journal and cache) so a rerun does not pay for them again.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from evalkit.errors import CallError, FatalError, InputError, TransientError
from evalkit.io.canonical import compact_sorted_json
from evalkit.judge.output import parse_judge_output
from evalkit.judge.providers.base import ContextOverflow, Provider, ProviderReply

Sleep = Callable[[float], Awaitable[Any]]


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before calling again after a transient failure.

    Args:
        max_attempts: calls per item before it becomes an error row (transient failures only).
        base: the first backoff ceiling in seconds; it doubles per retry.
        cap: the largest backoff ceiling.
        max_retry_after: the longest ``Retry-After`` honoured as given (longer ones are cut to it).
        seed: seeds the jitter, with the item's key.
    """

    max_attempts: int = 6
    base: float = 0.5
    cap: float = 30.0
    max_retry_after: float = 300.0
    seed: int = 0

    def delay(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry`` (from 0)."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        return rng.uniform(0, min(self.cap, self.base * 2 ** retry))


@dataclass
class CallOutcome:
    """What judging one prompt once produced: the validated output (None for an error) and its costs."""

    output: dict[str, Any] | None
    error: str | None = None
    attempts: int = 0
    retries: dict[str, int] = field(default_factory=dict)
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    mode: str | None = None
    fatal: FatalError | None = None
    deterministic: bool = False
    """The error would recur on the same request (see the module docstring)."""
    context: int | None = None
    """The context window a context overflow's error named."""

    def add_tokens(self, reply: ProviderReply) -> None:
        self.input_tokens = None if reply.input_tokens is None or self.input_tokens is None \
            else self.input_tokens + reply.input_tokens
        self.output_tokens = None if reply.output_tokens is None or self.output_tokens is None \
            else self.output_tokens + reply.output_tokens


def reply_body(text: str) -> str:
    """A model's reply with the one Markdown code fence a model often wraps it in (```json ... ```) removed.

    Only a reply wrapped whole in exactly one fence is unwrapped: text around a fence, or two fences, is left
    as it is, for the parser to refuse with its own message.
    """
    body = text.strip()
    if body.startswith("```") and body.endswith("```") and body.count("```") == 2:
        body = body[3:-3].removeprefix("json").strip()
    return body


def parse_output(text: str) -> dict[str, Any]:
    """The reply as a validated :class:`JudgeOutput` (:func:`parse_judge_output`), as a JSON object.

    A reply wrapped whole in one Markdown code fence (common without structured output) is unwrapped.

    Raises:
        ValueError: not JSON, or not valid for the schema (the message says what to fix).
    """
    body = reply_body(text)
    try:
        return parse_judge_output(body).model_dump(mode="json", by_alias=True)  # every field, left-out ones too
    except InputError as exc:
        raise ValueError(f"does not fit the schema: {exc.render()}") from None


def correction_turns(reply_text: str, problem: str) -> list[dict[str, str]]:
    """The two messages that send an invalid reply back with what was wrong."""
    return [{"role": "assistant", "content": reply_text},
            {"role": "user", "content": f"That reply is invalid: it {problem}. Reply again with only the JSON "
                                        "object, valid against the schema."}]


async def judge_once(provider: Provider, messages: list[dict[str, str]], schema: dict[str, Any], *,
                     key: str, policy: RetryPolicy, sleep: Sleep = asyncio.sleep,
                     on_call: Callable[[], None] | None = None,
                     should_stop: Callable[[], bool] | None = None, prepared: Any = None,
                     parse: Callable[[str], dict[str, Any]] = parse_output, watch: Any = None) -> CallOutcome:
    """Judge one prompt: call, retry transient failures, re-ask once on an invalid reply.

    Args:
        provider: the judge.
        messages: the prompt.
        schema: the reply's JSON Schema.
        key: the item's key, seeding its jitter.
        policy: the retry policy.
        sleep: the wait (injected by tests).
        on_call: called before each call (progress counting).
        should_stop: when it returns True, no further call is made (a fatal error elsewhere).
        prepared: the request rendered ahead by the provider's ``prepare`` for these messages and schema;
            used until the messages change (a correction turn).
        parse: reads a reply into the validated output, raising ValueError with what to fix (the judge's
            :func:`parse_output` by default; the verifier passes its own).
        watch: told of each transient failure (``failed(kind, message)``) and each answered call
            (``succeeded()``): the run's :class:`~evalkit.judge.run_control.TransportWatch`.
    """
    outcome = CallOutcome(output=None)
    rng: random.Random | None = None  # seeded on the first retry: most items never need one
    transient = 0
    corrected = False
    while True:
        if should_stop is not None and should_stop():
            outcome.error = outcome.error or "not judged: the run stopped"
            return outcome
        outcome.attempts += 1
        if on_call is not None:
            on_call()
        try:
            if prepared is None:
                reply = await provider.complete(messages, schema)
            else:
                reply = await provider.complete(messages, schema, prepared=prepared)  # type: ignore[call-arg]
        except TransientError as exc:
            if watch is not None:
                watch.failed(exc.kind, str(exc))
            transient += 1
            if transient >= policy.max_attempts:
                outcome.error = f"gave up after {outcome.attempts} calls: {exc}"
                return outcome
            outcome.retries[exc.kind] = outcome.retries.get(exc.kind, 0) + 1
            rng = rng or random.Random(f"{policy.seed}:{key}")
            await sleep(policy.delay(transient - 1, exc.retry_after, rng))
            continue
        except ContextOverflow as exc:
            outcome.error, outcome.deterministic, outcome.context = str(exc), True, exc.context
            return outcome
        except CallError as exc:
            outcome.error = str(exc)
            return outcome
        except FatalError as exc:
            outcome.error, outcome.fatal = str(exc), exc
            return outcome
        if watch is not None:
            watch.succeeded()
        outcome.add_tokens(reply)
        outcome.mode = reply.mode
        if reply.refused:  # the server refused a structured-output mode first: those requests were calls too
            outcome.attempts += reply.refused
            outcome.retries["structured-output-refused"] = \
                outcome.retries.get("structured-output-refused", 0) + reply.refused
            for _ in range(reply.refused):
                if on_call is not None:
                    on_call()
        try:
            outcome.output = parse(reply.text)
            return outcome
        except ValueError as exc:
            if corrected:
                outcome.error = f"invalid reply after one correction: it {exc}"
                outcome.deterministic = True
                return outcome
            corrected = True
            outcome.retries["invalid-reply"] = outcome.retries.get("invalid-reply", 0) + 1
            messages = [*messages, *correction_turns(reply.text, str(exc))]
            prepared = None  # rendered for the messages before the correction


def output_text(output: dict[str, Any]) -> str:
    """A validated output as the canonical JSON the cache stores."""
    return compact_sorted_json(output, allow_nan=False)
