"""The Vercel AI SDK's ``ai.*`` span attributes, and joining its spans that lost their parent ids.

The SDK names each span by its operation (``ai.operationId``): a *wrapper* (``ai.generateText``,
``ai.streamText``, ``ai.generateObject``, ``ai.streamObject``, ``ai.embed``, ``ai.embedMany``) that
may make several provider calls (``ai.generateText.doGenerate``, ``ai.streamText.doStream``,
``ai.embed.doEmbed``, ...) and tool calls (``ai.toolCall``). A provider call is a GENERATION (an
EMBEDDING for ``doEmbed``), a tool call a TOOL, and a wrapper a CHAIN: its usage is the sum of its
calls, so it is not counted again as a model call. Prompt, response, usage and model come from the
``ai.*`` attributes when the GenAI / OpenInference ones are absent.

Spans exported without a tracer context (as by an in-memory exporter with no context manager) have
no parent id and each its own trace id. :func:`join_orphans` puts such a provider or tool call back
under its wrapper, by name and timing, only when the match is unambiguous: the child is the only span
of its trace and has no parent, and exactly one parentless wrapper with the same
``ai.telemetry.functionId`` and a matching operation (the child's operation starts with the
wrapper's; any wrapper for ``ai.toolCall``) starts no later and ends no earlier than the child. The
joined child keeps its own trace id in ``metadata.sourceTraceId``. Anything else stays as recorded.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from evalkit.errors import StrictJSONError
from evalkit.io.strict_json import loads_strict
from evalkit.traces.report import ImportReport

__all__ = ["VERCEL_USAGE", "apply_joins", "join_orphans", "vercel_payload_keys", "vercel_type",
           "with_tool_calls"]

VERCEL_USAGE = {
    "input": ("ai.usage.promptTokens", "ai.usage.inputTokens", "ai.usage.tokens"),
    "output": ("ai.usage.completionTokens", "ai.usage.outputTokens"),
    "total": ("ai.usage.totalTokens",),
}
"""Usage keys of the SDK: v4 ``prompt/completionTokens``, v5+ ``input/outputTokens``, embed ``tokens``."""

VERCEL_TOOL_NAME = ("ai.toolCall.name",)

_IN = ("ai.prompt.messages", "ai.prompt", "ai.toolCall.args", "ai.values", "ai.value")
_OUT = ("ai.response.text", "ai.response.object", "ai.toolCall.result", "ai.embeddings", "ai.embedding")
_TOOL_CALLS = "ai.response.toolCalls"


def _operation(attrs: dict[str, Any]) -> str | None:
    op = attrs.get("ai.operationId")
    return op if isinstance(op, str) and op.startswith("ai.") else None


def vercel_type(attrs: dict[str, Any]) -> str | None:
    """The observation type of an ``ai.*`` span, or None when it is not one."""
    op = _operation(attrs)
    if op is None:
        return None
    if op == "ai.toolCall":
        return "TOOL"
    last = op.rsplit(".", 1)[-1]
    if last == "doEmbed":
        return "EMBEDDING"
    if last.startswith("do"):
        return "GENERATION"
    return "CHAIN"


def vercel_payload_keys(attrs: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(input keys, output keys) to try, in order, for an ``ai.*`` span; empty when it is not one."""
    if _operation(attrs) is None:
        return (), ()
    return _IN, _OUT


def with_tool_calls(attrs: dict[str, Any], missing: Any, out: Any) -> Any:
    """``out`` with the tool calls a model call asked for (``ai.response.toolCalls``), when there are any.

    Args:
        attrs: the span's attributes.
        missing: the caller's "no payload" marker; ``out`` may be it.
        out: the output found so far.

    Returns:
        ``out`` unchanged, ``{toolCalls}`` when there was no output, or ``{text, toolCalls}``.
    """
    calls = attrs.get(_TOOL_CALLS)
    if calls is None:
        return out
    if isinstance(calls, str):
        with contextlib.suppress(StrictJSONError):
            calls = loads_strict(calls)
    return {"toolCalls": calls} if out is missing else {"text": out, "toolCalls": calls}


def apply_joins(traces: dict[str, dict[str, Any]], report: ImportReport) -> dict[str, list[str]]:
    """Join orphaned ``ai.*`` spans into their wrappers' traces, in place (see the module docstring).

    ``traces`` maps trace id -> span id -> span, where a span has ``attributes``, ``start``, ``end``,
    ``parent_id``, ``span_id`` and ``joined_from``. Each join is counted in ``report``.

    Returns:
        wrapper trace id -> the trace ids joined into it.
    """
    joined: dict[str, list[str]] = {}
    for child_trace, wrapper_trace, wrapper_span in join_orphans(
            traces, lambda s: s.attributes, lambda s: (s.start, s.end), lambda s: s.parent_id is not None):
        (span,) = traces[child_trace].values()
        if span.span_id in traces[wrapper_trace]:
            continue  # the same span id is already in the wrapper's trace: leave the child apart
        del traces[child_trace]
        span.parent_id = wrapper_span
        span.joined_from = child_trace
        traces[wrapper_trace][span.span_id] = span
        joined.setdefault(wrapper_trace, []).append(child_trace)
        report.mapped("Vercel AI SDK spans with no parent id", "children of their wrapper span, joined by "
                      "name and timing (their own trace id is in metadata.sourceTraceId)")
    return joined


def _time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


S = TypeVar("S")


def join_orphans(traces: dict[str, dict[str, S]], attrs_of: Callable[[S], dict[str, Any]],
                 times_of: Callable[[S], tuple[str | None, str | None]],
                 has_parent: Callable[[S], bool]) -> list[tuple[str, str, str]]:
    """Move orphaned ``ai.*`` provider and tool calls under their wrappers (see the module docstring).

    Args:
        traces: trace id -> span id -> span; changed in place (joined child traces are removed).
        attrs_of, times_of, has_parent: how to read a span's attributes, (start, end) and parent.

    Returns:
        (child trace id, wrapper trace id, wrapper span id) for each join made.
    """
    wrappers: list[tuple[str, str, S]] = []
    children: list[tuple[str, str, S]] = []
    for trace_id, spans in traces.items():
        for span_id, span in spans.items():
            if has_parent(span) or vercel_type(attrs_of(span)) is None:
                continue
            kind = vercel_type(attrs_of(span))
            if kind == "CHAIN":
                wrappers.append((trace_id, span_id, span))
            elif len(spans) == 1:
                children.append((trace_id, span_id, span))
    joins: list[tuple[str, str, str]] = []
    for trace_id, _span_id, child in children:
        attrs = attrs_of(child)
        op = _operation(attrs) or ""
        start, end = (_time(t) for t in times_of(child))
        if start is None or end is None:
            continue
        matches = []
        for w_trace, w_id, wrapper in wrappers:
            w_attrs = attrs_of(wrapper)
            w_op = _operation(w_attrs) or ""
            w_start, w_end = (_time(t) for t in times_of(wrapper))
            if (w_trace != trace_id and w_start is not None and w_end is not None
                    and w_attrs.get("ai.telemetry.functionId") == attrs.get("ai.telemetry.functionId")
                    and (op == "ai.toolCall" or op.startswith(w_op + "."))
                    and w_start <= start and end <= w_end):
                matches.append((w_trace, w_id))
        if len(matches) == 1:
            joins.append((trace_id, *matches[0]))
    return joins
