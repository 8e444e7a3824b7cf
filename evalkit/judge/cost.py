"""What judge calls cost: a price table per model, which the user extends or overrides from a file.

Prices are US dollars per million tokens, input and output. A model missing from the table has an
unknown cost: reported as unknown (None), never as 0, and a ``--max-cost`` budget refuses to start
on it. A local model (vLLM, Ollama) is free only when the table says so (``price: 0``).

The built-in prices are the providers' published list prices as of 2025-06; check them and put
current ones in your own file (YAML or JSON)::

    models:
      gpt-4o-mini: {input: 0.15, output: 0.60}
      my-local-llama: {input: 0, output: 0}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.errors import InputError

BUILTIN_PRICES: dict[str, tuple[float, float]] = {
    # OpenAI (platform.openai.com/docs/pricing)
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "o4-mini": (1.10, 4.40),
    # Anthropic (docs.anthropic.com/en/docs/about-claude/pricing)
    "claude-opus-4-0": (15.00, 75.00),
    "claude-sonnet-4-0": (3.00, 15.00),
    "claude-3-7-sonnet-latest": (3.00, 15.00),
    "claude-3-5-haiku-latest": (0.80, 4.00),
    "claude-3-haiku-20240307": (0.25, 1.25),
}
"""USD per million (input, output) tokens, list prices as of 2025-06."""


@dataclass(frozen=True)
class PriceTable:
    """USD per million (input, output) tokens by model id."""

    prices: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(BUILTIN_PRICES))

    @classmethod
    def load(cls, path: str | Path | None = None, *, builtin: bool = True) -> PriceTable:
        """The built-in table, with the models in ``path`` (YAML or JSON) added or overriding.

        Raises:
            InputError: the file is unreadable, or a model's entry is not ``{input: N, output: N}``
                with non-negative numbers.
        """
        prices = dict(BUILTIN_PRICES) if builtin else {}
        if path is None:
            return cls(prices)
        file = str(path)
        try:
            import yaml

            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise InputError(f"cannot read the price table: {exc.strerror or exc}", file=file) from None
        except Exception as exc:  # yaml.YAMLError: a located parse error
            raise InputError(f"not YAML or JSON: {exc}", file=file) from None
        models = data.get("models") if isinstance(data, dict) else None
        if not isinstance(models, dict):
            raise InputError("expected a mapping 'models: {MODEL: {input: USD, output: USD}}'", file=file)
        for model, entry in models.items():
            prices[str(model)] = _entry(entry, file, f"models.{model}")
        return cls(prices)

    def cost(self, model: str, input_tokens: int | None, output_tokens: int | None) -> float | None:
        """The USD cost of one call, or None when the model's price or a token count is unknown."""
        price = self.prices.get(model)
        if price is None or input_tokens is None or output_tokens is None:
            return None
        return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000

    def knows(self, model: str) -> bool:
        """True when the table has a price for ``model``."""
        return model in self.prices


def _entry(entry: Any, file: str, path: str) -> tuple[float, float]:
    if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
        raise InputError("expected {input: USD per million tokens, output: USD per million tokens}",
                         file=file, path=path)
    values = []
    for side in ("input", "output"):
        value = entry[side]
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise InputError(f"{value!r} is not a non-negative price", file=file, path=f"{path}.{side}")
        values.append(float(value))
    return values[0], values[1]
