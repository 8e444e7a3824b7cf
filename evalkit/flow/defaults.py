"""How a flow graph matches values, and the shortest value it follows, importable without pydantic or orjson.

:mod:`evalkit.flow.received` and :mod:`evalkit.flow.slots` use them, and ``evalkit flow build`` offers
them as ``--semantics`` and ``--min-thread-len`` without loading those modules.
"""

from __future__ import annotations

from typing import Literal

Semantics = Literal["received", "mutagent"]
"""``received`` (the default): match on the text a consumer received (:mod:`evalkit.flow.received`);
``mutagent``: the reference method's rule, a value's JSON text in the consumer's input serialized as JSON."""

SEMANTICS: tuple[Semantics, ...] = ("received", "mutagent")
"""The matching rules, the default first."""

DEFAULT_MIN_THREAD_LEN = 12
"""Values shorter than this are ignored: short strings ("ok", "true", ids like "42") occur everywhere
by chance. Twelve characters is the reference flow-graph method's default (mutagent)."""
