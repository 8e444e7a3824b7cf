"""What every judge provider does: send one prompt, return the structured reply as JSON text.

A provider makes exactly one HTTP call per :meth:`Provider.complete` (the SDKs' own retries are turned
off) and sorts failures into the three kinds the runner acts on: :class:`TransientError` (retry with
backoff: 429, 5xx, connection errors, timeouts), :class:`CallError` (this item fails, the run goes on: a
400, a refused prompt) and :class:`FatalError` (stop before the next call: bad credentials, unknown model).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from evalkit.errors import CallError, FatalError, ProviderError, TransientError
from evalkit.io.canonical import compact_sorted_json

StructuredMode = Literal["json_schema", "json_object", "prompt", "tool", "replay", "scripted"]
"""How the reply's shape was asked for: the provider's own mechanism, or the schema inline in the prompt."""


SCHEMA_NAME = "judge_output"
"""The name the schema is sent under (OpenAI ``json_schema.name``, Anthropic tool name)."""


@dataclass(frozen=True)
class ProviderReply:
    """One reply: the structured output as JSON text, the tokens it cost, and how its shape was asked for."""

    text: str
    input_tokens: int | None
    output_tokens: int | None
    mode: StructuredMode
    refused: int = 0
    """Requests made before this one whose structured-output mode the server refused (counted as calls)."""


@runtime_checkable
class Provider(Protocol):
    """A judge model behind one API, pinned to a model and temperature 0."""

    name: str
    model: str
    temperature: float

    async def complete(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> ProviderReply:
        """Send one prompt once (no retries) and return the reply's JSON text."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


def schema_instruction(schema: dict[str, Any]) -> str:
    """The inline fallback: the schema written into the prompt, for servers without structured output."""
    return ("Reply with one JSON object and nothing else. It must validate against this JSON Schema:\n"
            + compact_sorted_json(schema))


def with_inline_schema(messages: list[dict[str, str]], schema: dict[str, Any]) -> list[dict[str, str]]:
    """``messages`` with the schema instruction appended to the system message (or added as one)."""
    instruction = schema_instruction(schema)
    out = [dict(m) for m in messages]
    for m in out:
        if m.get("role") == "system":
            m["content"] = f"{m['content']}\n\n{instruction}"
            return out
    return [{"role": "system", "content": instruction}, *out]


def retry_after_seconds(headers: Any) -> float | None:
    """``Retry-After`` (seconds, or ``retry-after-ms``) from response headers; None when absent or a date."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: rare from model APIs; the runner's backoff applies


def error_message(exc: Any) -> str:
    """The server's own words from an SDK's status error (``{"error": {"message": ...}}``), else its text."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(exc, "message", exc))


class ContextOverflow(CallError):
    """The prompt and the reply's cap are longer than the model's context: the same request fails the same
    way every time (cached and journaled as an error row; a rerun does not call again).

    What to do: judge fewer fields of the trace (``input`` of the spec), lower ``--max-tokens``, or use a
    model with a longer context.
    """

    def __init__(self, message: str, context: int | None) -> None:
        super().__init__(message)
        self.context = context


_OVERFLOW = re.compile(r"context (?:length|window)|context_length_exceeded|too many tokens|prompt is too long|"
                       r"exceeds? (?:the )?(?:model'?s? )?(?:maximum )?context", re.IGNORECASE)
_CONTEXT_SIZE = re.compile(r"(?:context (?:length|window)(?: of| is)?|maximum context length is)\D{0,20}(\d{3,7})",
                           re.IGNORECASE)


def context_overflow(status: int, message: str) -> ContextOverflow | None:
    """The HTTP 400 (or 413) of a prompt too long for the model, with the context size the server names
    (OpenAI, vLLM and llama.cpp word it differently; all name the context); None for any other error."""
    if status not in (400, 413) or not _OVERFLOW.search(message):
        return None
    size = _CONTEXT_SIZE.search(message)
    return ContextOverflow(f"HTTP {status}: {message}", int(size.group(1)) if size else None)


def classify_status(status: int, message: str, retry_after: float | None) -> ProviderError:
    """The error kind for an HTTP status, as the runner should treat it."""
    overflow = context_overflow(status, message)
    if overflow is not None:
        return overflow
    if status == 429:
        return TransientError(f"HTTP 429 rate limited: {message}", kind="rate-limit", retry_after=retry_after)
    if status >= 500 or status == 408:
        return TransientError(f"HTTP {status}: {message}", kind="server", retry_after=retry_after)
    if status in (401, 403, 404):
        return FatalError(f"HTTP {status}: {message}")
    return CallError(f"HTTP {status}: {message}")
