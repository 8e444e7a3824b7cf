"""evalkit's own trace formats, registered in one table that is cheap to import.

A built-in format is one row here: its name (a ``--format`` choice), the module that reads it, and the
names of that module's recogniser and reader. :data:`evalkit.traces.FORMATS` is built from these rows when
the importers load; the command line reads the names from here without loading them, since every parser
is built before any command runs and must not pay for pydantic and polars. Adding a format is its reader
module, one row here, and its test. Installed plug-ins' formats come after these (see
:mod:`evalkit.traces.plugins`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FormatEntry:
    """One built-in trace format: where its recogniser and reader live, and how the reader is called."""

    name: str
    module: str
    looks_like: str
    read: str
    per_record: bool = True
    """Each value is read on its own (see :class:`evalkit.traces.TraceFormat`)."""
    takes_context: bool = False
    """The reader is called as ``read(values, context)`` (see :class:`evalkit.traces.TraceFormat`)."""


# Sniffing tries formats in this order; the native shape is the most specific, so it goes first.
BUILT_IN: tuple[FormatEntry, ...] = (
    FormatEntry("evalkit", "evalkit.traces.native", "looks_like_native", "read_native"),
    FormatEntry("langfuse", "evalkit.traces.langfuse", "looks_like_langfuse", "read_langfuse", takes_context=True),
    FormatEntry("otel", "evalkit.traces.otel", "looks_like_otel", "read_otel", per_record=False,
                takes_context=True),
    # Before openai-chat: an Anthropic message list also has a messages list of {role, ...}.
    FormatEntry("anthropic", "evalkit.traces.anthropic", "looks_like_anthropic", "read_anthropic",
                per_record=False, takes_context=True),
    FormatEntry("claude-code", "evalkit.traces.claude_code", "looks_like_claude_code", "read_claude_code",
                per_record=False, takes_context=True),
    FormatEntry("codex", "evalkit.traces.codex", "looks_like_codex", "read_codex", per_record=False,
                takes_context=True),
    FormatEntry("gemini-cli", "evalkit.traces.gemini_cli", "looks_like_gemini_cli", "read_gemini_cli",
                per_record=False, takes_context=True),
    FormatEntry("inspect", "evalkit.traces.inspect_logs", "looks_like_inspect", "read_inspect", per_record=False,
                takes_context=True),
    FormatEntry("atif", "evalkit.traces.atif", "looks_like_atif", "read_atif", takes_context=True),
    FormatEntry("openai-chat", "evalkit.traces.openai_chat", "looks_like_openai_chat", "read_openai_chat",
                takes_context=True),
    FormatEntry("pairwise", "evalkit.traces.pairwise", "looks_like_pairwise", "read_pairwise", takes_context=True),
    # Last: a record with a chat's messages and a prompt field is a chat.
    FormatEntry("single-turn", "evalkit.traces.single_turn", "looks_like_single_turn", "read_single_turn",
                takes_context=True),
)

BUILT_IN_FORMATS: tuple[str, ...] = tuple(entry.name for entry in BUILT_IN)
"""evalkit's own format names, in sniffing order."""
