"""The names of evalkit's own trace importers, importable without the importers.

``--format`` offers them on every command that reads traces, and every parser is built before any command
runs, so the names must not cost the importers' imports (pydantic, polars). :data:`evalkit.traces.FORMATS`
registers the importers under these names, in this order, and checks that it does when it loads;
installed plug-ins' formats come after them.
"""

from __future__ import annotations

BUILT_IN_FORMATS: tuple[str, ...] = ("evalkit", "langfuse", "otel", "anthropic", "openai-chat", "single-turn")
"""evalkit's own format names, in sniffing order (the native shape is the most specific, so it goes first)."""
