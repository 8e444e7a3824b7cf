"""The right model: an OpenAI-compatible server is asked once which models it serves (``/v1/models``).

llama.cpp's server, and others, answer for any model name, so ``--model gpt-4o`` against a local server
would run the local model and price its replies as GPT-4o's. A name the server does not list is a warning
(an error with ``--strict-model``), and its replies get no price: a price is used only for a model name the
server confirmed. Neither are its context window from the price table trusted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evalkit.errors import InputError
from evalkit.judge.cost import PriceTable


@dataclass(frozen=True)
class ModelCheck:
    """What the check found: whether the server confirmed the model, and the price table to use."""

    confirmed: bool
    prices: PriceTable
    message: str | None = None
    """What the user is warned of (None when the model is confirmed or nothing was asked)."""


def check_model(provider: object, prices: PriceTable, *, strict: bool = False,
                warn: Callable[[str], None] | None = None) -> ModelCheck:
    """Ask the provider's server which models it serves and keep the price only for a listed model.

    Args:
        provider: the judge; only providers that list their models (``served_models``: openai) are asked.
        prices: the price table.
        strict: a model the server does not list (or a list that cannot be had) is an error.
        warn: told the warning, when there is one.

    Raises:
        InputError: with ``strict``, the model is not confirmed.
    """
    listing = getattr(provider, "served_models", None)
    if listing is None:
        return ModelCheck(True, prices)
    model = provider.model  # type: ignore[attr-defined]
    where = getattr(provider, "base_url", None) or "the OpenAI API"
    try:
        served = listing()
    except (OSError, ValueError) as exc:
        message = (f"could not ask {where} which models it serves ({exc}): model {model!r} is not confirmed, "
                   "so its replies are not priced")
    else:
        if model in served:
            return ModelCheck(True, prices)
        shown = ", ".join(repr(m) for m in served[:5]) + (f" and {len(served) - 5} more" if len(served) > 5 else "")
        message = (f"{where} does not list model {model!r} (it serves {shown or 'none'}): a server that answers "
                   "for any name may be running another model, so its replies are not priced; pass one of "
                   "the names it lists as --model")
    if strict:
        raise InputError(f"{message} (--strict-model)", path="--model")
    if warn is not None:
        warn(f"warning: {message}")
    return ModelCheck(False, prices.without(model), message)


__all__ = ["ModelCheck", "check_model"]
