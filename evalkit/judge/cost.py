"""What judge calls cost: a price table per model, which the user extends or overrides from a file.

Prices are US dollars per million tokens, input and output; an entry may give the model's context window
(``context``, tokens), which the runner measures prompts against before calling. A model missing from
the table has an unknown cost: reported as unknown (None), never as 0, and a ``--max-cost`` budget
refuses to start on it. A local model (vLLM, Ollama) is free only when the table says so (``input: 0``).

The shipped table is ``prices.yaml`` beside this module, with the day its prices were checked
(:func:`shipped`); check them and put current ones in your own file (YAML or JSON)::

    models:
      gpt-4o-mini: {input: 0.15, output: 0.60}
      my-local-llama: {input: 0, output: 0, context: 32768}

A dated model id (``claude-sonnet-4-5-20250929``) takes its alias's entry when it has none of its own.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.errors import InputError

SHIPPED = Path(__file__).with_name("prices.yaml")
"""The prices shipped with evalkit."""

_DATED = re.compile(r"-\d{8}$")


PRICE_TABLE_FIELDS = ("models", "checked")
"""The fields a price table may have: a misspelt one would be a table silently ignored."""


def _read(path: str | Path) -> dict[str, Any]:
    """A price table, read by the one strict, bounded reader (no tags, no duplicate keys, no unknown fields)."""
    from evalkit.io.documents import read_document

    file = str(path)
    data = read_document(path, kind="prices")
    unknown = sorted(set(data) - set(PRICE_TABLE_FIELDS)) if isinstance(data, dict) else []
    if unknown:
        raise InputError(f"unknown field {unknown[0]!r}: a price table holds {', '.join(PRICE_TABLE_FIELDS)} "
                         "(models: {MODEL: {input: USD, output: USD}})", file=file, path=unknown[0])
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise InputError("expected a mapping 'models: {MODEL: {input: USD, output: USD}}'", file=file)
    return data


@functools.cache
def shipped() -> tuple[dict[str, tuple[float, float]], dict[str, int], str]:
    """The shipped prices (USD per million input and output tokens), context windows, and the day they were
    checked (read once, when first needed: not at import)."""
    data = _read(SHIPPED)
    prices, contexts = {}, {}
    for model, entry in data["models"].items():
        prices[str(model)], context = _entry(entry, str(SHIPPED), f"models.{model}")
        if context is not None:
            contexts[str(model)] = context
    return prices, contexts, str(data.get("checked", "unknown"))


@dataclass(frozen=True)
class PriceTable:
    """USD per million (input, output) tokens by model id."""

    prices: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(shipped()[0]))
    contexts: dict[str, int] = field(default_factory=lambda: dict(shipped()[1]))
    """Context windows in tokens by model id (from the tables' ``context``)."""

    @classmethod
    def load(cls, path: str | Path | None = None, *, builtin: bool = True) -> PriceTable:
        """The built-in table, with the models in ``path`` (YAML or JSON) added or overriding.

        Raises:
            InputError: the file is unreadable, or a model's entry is not ``{input: N, output: N}``
                with non-negative numbers.
        """
        prices = dict(shipped()[0]) if builtin else {}
        contexts = dict(shipped()[1]) if builtin else {}
        if path is None:
            return cls(prices, contexts)
        file = str(path)
        for model, entry in _read(path)["models"].items():
            prices[str(model)], context = _entry(entry, file, f"models.{model}")
            if context is not None:
                contexts[str(model)] = context
        return cls(prices, contexts)

    def _find(self, table: dict[str, Any], model: str) -> Any:
        found = table.get(model)
        if found is None and _DATED.search(model):
            found = table.get(_DATED.sub("", model))
        return found

    def cost(self, model: str, input_tokens: int | None, output_tokens: int | None) -> float | None:
        """The USD cost of one call, or None when the model's price or a token count is unknown."""
        price = self._find(self.prices, model)
        if price is None or input_tokens is None or output_tokens is None:
            return None
        return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000

    def knows(self, model: str) -> bool:
        """True when the table has a price for ``model``."""
        return self._find(self.prices, model) is not None

    def context(self, model: str) -> int | None:
        """The model's context window in tokens, when a table gives it."""
        return self._find(self.contexts, model)

    def without(self, model: str) -> PriceTable:
        """This table with no price for ``model`` (a name the judge's server did not confirm it serves)."""
        drop = {model, _DATED.sub("", model)}
        return PriceTable({k: v for k, v in self.prices.items() if k not in drop}, self.contexts)


def _entry(entry: Any, file: str, path: str) -> tuple[tuple[float, float], int | None]:
    if not isinstance(entry, dict) or not {"input", "output"} <= set(entry) <= {"input", "output", "context"}:
        raise InputError("expected {input: USD per million tokens, output: USD per million tokens} and, "
                         "optionally, context: the context window in tokens", file=file, path=path)
    values = []
    for side in ("input", "output"):
        value = entry[side]
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise InputError(f"{value!r} is not a non-negative price", file=file, path=f"{path}.{side}")
        values.append(float(value))
    context = entry.get("context")
    if context is not None and (isinstance(context, bool) or not isinstance(context, int) or context < 1):
        raise InputError(f"{context!r} is not a context window (a positive number of tokens)", file=file,
                         path=f"{path}.context")
    return (values[0], values[1]), context
