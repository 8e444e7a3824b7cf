"""Which judge a run uses: the flags, else the specs' one pin. The precedence rules live here, once.

- Specs pinning different judges need ``--provider`` and ``--model`` (one run is one judge).
- A flag overrides the pin's field. A pin's model, server, reply cap and transport belong to its provider:
  a ``--provider`` other than the pin's takes none of them.
- The replay provider needs no model (``*``: the cassette's one model); every other one does.
- ``--max-tokens`` (at least 1) and ``--transport`` (``http`` for openai only) override the pin's.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.contracts.judge import JudgePin, JudgeSpec
from evalkit.errors import InputError


def choose_pin(specs: Sequence[JudgeSpec], *, provider: str | None = None, model: str | None = None,
               base_url: str | None = None, max_tokens: int | None = None,
               transport: str | None = None) -> JudgePin:
    """The judge to run the specs with: the flags given, else the specs' pin.

    Args:
        specs: the specs to be run together.
        provider: ``--provider``; overrides the pin's (and then none of the pin's other fields apply).
        model: ``--model``.
        base_url: ``--base-url``.
        max_tokens: ``--max-tokens``, the reply's token cap.
        transport: ``--transport`` (``sdk`` or ``http``).

    Raises:
        InputError: the specs pin several judges and no provider and model are given; no provider or
            model is named; a cap below 1; a transport its provider does not have.
    """
    pins = {(s.judge.provider, s.judge.model, s.judge.base_url) for s in specs if s.judge is not None}
    if len(pins) > 1 and not (provider and model):
        raise InputError(f"the specs pin {len(pins)} different judges ({', '.join(sorted(p[1] for p in pins))}): "
                         "run them separately, or pass --provider and --model", path="--spec")
    pin_provider, pin_model, pin_url = next(iter(pins)) if pins else (None, None, None)
    provider = provider or pin_provider
    same = provider == pin_provider  # a pin's model and server belong to its provider only
    model = model or (pin_model if same else None)
    base_url = base_url or (pin_url if same else None)
    if provider is None:
        raise InputError("no judge named: pass --provider (openai, anthropic or replay) and --model, or pin "
                         "one in the spec (judge: {provider: ..., model: ...})", path="--provider")
    if model is None:
        if provider != "replay":
            raise InputError(f"no model named for the {provider} judge: pass --model", path="--model")
        model = "*"  # replay: the cassette's one model
    # The spec pin's reply cap and transport come along when the flags keep its provider (judge-runner #10);
    # --max-tokens and --transport override them.
    pinned = next((s.judge for s in specs if s.judge is not None), None) if same else None
    extra = {"max_tokens": pinned.max_tokens, "transport": pinned.transport} if pinned is not None else {}
    if max_tokens is not None:
        if max_tokens < 1:
            raise InputError(f"the reply's token cap must be at least 1, not {max_tokens}", path="--max-tokens")
        extra["max_tokens"] = max_tokens
    if transport is not None:
        if transport != "sdk" and provider != "openai":
            raise InputError(f"transport {transport} is for the openai provider only, not {provider}",
                             path="--transport")
        extra["transport"] = transport
    return JudgePin(provider=provider, model=model, base_url=base_url, **extra)


__all__ = ["choose_pin"]
