"""Which spans are tool calls: the conventions frameworks mark them with, for importers that see plain spans.

A Langfuse export of OpenTelemetry spans (BeeAI's ``tool.search.duckduckgo``, Strands' ``execute_tool``)
or an OTel export without GenAI types records a tool call as an ordinary span. It is a TOOL when one of
these says so, in this order: the GenAI operation ``execute_tool``, the OpenInference span kind ``TOOL``,
a ``tool.name`` / ``gen_ai.tool.name`` attribute, or a span name starting ``tool.`` or ``execute_tool``.
"""

from __future__ import annotations

from typing import Any

TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name")
_NAME_PREFIXES = ("tool.", "execute_tool ")


def tool_convention(name: Any, attrs: dict[str, Any] | None) -> str | None:
    """The convention that marks a span a tool call (said in the import report), or None.

    Args:
        name: the span's name.
        attrs: its attributes (for Langfuse, ``metadata.attributes``).
    """
    attrs = attrs or {}
    if attrs.get("gen_ai.operation.name") == "execute_tool":
        return "the GenAI operation execute_tool"
    kind = attrs.get("openinference.span.kind")
    if isinstance(kind, str) and kind.upper() == "TOOL":
        return "the OpenInference span kind TOOL"
    if any(k in attrs for k in TOOL_NAME_KEYS):  # by key, as the OTel importer plans spans by their keys
        return "a tool.name attribute"
    return TOOL_NAME if is_tool_span_name(name) else None


TOOL_NAME = "a tool.* span name"


def is_tool_span_name(name: Any) -> bool:
    """A span name frameworks give tool calls (``tool.search.duckduckgo``, ``execute_tool get_weather``)."""
    return isinstance(name, str) and name.startswith(_NAME_PREFIXES)
