"""Judge providers: one protocol, four implementations, chosen by a spec's pin (or the CLI's flags).

``openai`` (the official SDK; ``base_url`` makes it serve vLLM, Ollama, llama.cpp server, LiteLLM and
any OpenAI-compatible endpoint), ``anthropic`` (the official SDK), ``replay`` (a recorded cassette) and
the scripted fake for tests. Keys come from the usual environment variables, checked here, before any
work starts.

Another package adds a provider by name in the ``evalkit.judge_providers`` entry-point group::

    [project.entry-points."evalkit.judge_providers"]
    my-gateway = "my_package.judge:make_provider"     # make_provider(pin) -> a Provider

(evalkit's own ``sample-rules``, the bundled sample's rules judge, is registered this way).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalkit.errors import (
    CallError,
    FatalError,
    MissingCredential,
    ProviderError,
    TransientError,
    require_credential,
)
from evalkit.judge.providers.base import Provider, ProviderReply
from evalkit.judge.providers.fake import ScriptedProvider
from evalkit.judge.providers.replay import CassetteRecorder, ReplayProvider, request_key
from evalkit.judge.reply_cap import DEFAULT_MAX_TOKENS

PROVIDERS = ("openai", "anthropic", "replay")
PLUGIN_GROUP = "evalkit.judge_providers"
"""The entry-point group of judge providers from other packages (name -> ``factory(pin) -> Provider``)."""
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
"""The environment variable each provider's SDK reads its key from."""


def require_key(provider: str) -> str:
    """The provider's key from its environment variable.

    Raises:
        MissingCredential: the variable is unset or empty; the message is one line naming it.
    """
    hint = " (a local server that needs no key accepts any value)" if provider == "openai" else ""
    return require_credential(KEY_VARIABLES[provider], needed_by=f"the {provider} judge", hint=hint)


def make_provider(pin: Any, *, base_url: str | None = None, cassette: str | Path | None = None,
                  timeout: float = 60.0, record: str | Path | None = None, max_connections: int | None = None) -> Provider:
    """The provider a pin names, with its credential checked now.

    Args:
        pin: a :class:`~evalkit.contracts.judge.JudgePin` (``provider``, ``model``, ``temperature``,
            ``base_url``, ``max_tokens``, ``transport``).
        base_url: overrides the pin's ``base_url`` (an OpenAI- or Anthropic-compatible server).
        cassette: the cassette a ``replay`` pin replays.
        timeout: seconds per call.
        record: a cassette to append every live reply to.
        max_connections: a cap on the ``http`` transport's sockets (None: one per call in flight).

    Raises:
        MissingCredential: the key's environment variable is unset.
        InputError: an unknown provider, a non-zero temperature, or a replay pin without a cassette.
    """
    from evalkit.errors import InputError

    name, model = pin.provider, pin.model
    temperature = float(getattr(pin, "temperature", 0) or 0)
    if temperature != 0:
        raise InputError(f"temperature is pinned to 0 for reproducible verdicts, not {temperature}")
    url = base_url or getattr(pin, "base_url", None)
    max_tokens = int(getattr(pin, "max_tokens", None) or DEFAULT_MAX_TOKENS)
    transport = getattr(pin, "transport", None) or "sdk"
    if transport != "sdk" and name != "openai":
        raise InputError(f"transport {transport!r} is for the openai provider only, not {name}")
    provider: Provider
    if name == "openai":
        from evalkit.judge.providers.openai import OpenAIProvider

        provider = OpenAIProvider(model, api_key=require_key(name), base_url=url, timeout=timeout,
                                  max_tokens=max_tokens, transport=transport, max_connections=max_connections)
    elif name == "anthropic":
        from evalkit.judge.providers.anthropic import AnthropicProvider

        provider = AnthropicProvider(model, api_key=require_key(name), base_url=url, timeout=timeout,
                                     max_tokens=max_tokens)
    elif name == "replay":
        if cassette is None:
            raise InputError("the replay judge needs a cassette (--cassette FILE)")
        provider = ReplayProvider(cassette, model=model if model not in ("", "*") else None, max_tokens=max_tokens)
    else:
        factory = plugin_providers().get(name)
        if factory is None:
            known = [*PROVIDERS, *sorted(plugin_providers())]
            raise InputError(f"unknown judge provider {name!r}: expected one of {', '.join(known)}")
        provider = factory.load()(pin)
    return CassetteRecorder(provider, record) if record is not None else provider


def plugin_providers() -> dict[str, Any]:
    """The judge providers other packages declare, by name (entry points, not yet loaded)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=PLUGIN_GROUP) if ep.name not in PROVIDERS}


__all__ = ["DEFAULT_MAX_TOKENS", "PLUGIN_GROUP", "KEY_VARIABLES", "PROVIDERS", "CallError", "CassetteRecorder", "FatalError", "MissingCredential",
           "Provider", "ProviderError", "ProviderReply", "ReplayProvider", "ScriptedProvider", "TransientError",
           "make_provider", "plugin_providers", "request_key", "require_key"]
