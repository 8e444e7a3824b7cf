"""Cassettes: replies recorded once from a real judge, replayed offline (reruns, demos, tests).

A cassette is a JSONL file, one recorded call per line::

    {"reply": {"inputTokens": 812, "outputTokens": 95, "text": "{...}"},
     "request": {"messages": [...], "model": "gpt-4o-mini", "schema": {...}, "temperature": 0}}

The replay provider answers a prompt with the reply recorded for the same model, temperature, messages
and schema; a prompt that was not recorded fails that item (never a made-up reply). A compact cassette
(the bundled sample's) holds each request's key and model instead of the request itself::

    {"key": "<request_key(...)>", "model": "sim-judge-2026-01", "reply": {...}}

:class:`CassetteRecorder` wraps a live provider and appends each reply it gets to a cassette.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from evalkit.errors import CallError, InputError
from evalkit.io.canonical import compact_sorted_json
from evalkit.judge.journal import append_lines, iter_journal
from evalkit.judge.providers.base import Provider, ProviderReply


def request_key(model: str, temperature: float, messages: list[dict[str, str]], schema: dict[str, Any]) -> str:
    """The cassette's key of one request: sha256 of its canonical JSON."""
    text = compact_sorted_json({"messages": messages, "model": model, "schema": schema,
                                "temperature": temperature})
    return hashlib.sha256(text.encode()).hexdigest()


class ReplayProvider:
    """Answers from a cassette.

    Args:
        cassette: the JSONL file of recorded calls.
        model: the model to replay; None takes the cassette's model when it holds only one.

    Raises:
        InputError: the cassette is missing, malformed, or holds several models and none was named.
    """

    name = "replay"

    def __init__(self, cassette: str | Path, *, model: str | None = None) -> None:
        self.cassette = Path(cassette)
        self.temperature = 0.0
        if not self.cassette.is_file():
            raise InputError("cassette not found", file=str(self.cassette))
        self._replies: dict[str, ProviderReply] = {}
        models: set[str] = set()
        for line, record in iter_journal(self.cassette):
            try:
                reply = record["reply"]
                if "key" in record:  # the compact form: the request's key and model only
                    key, model_name = record["key"], record["model"]
                else:
                    request = record["request"]
                    key = request_key(request["model"], request["temperature"], request["messages"],
                                      request["schema"])
                    model_name = request["model"]
                models.add(model_name)
                self._replies[key] = ProviderReply(text=reply["text"], input_tokens=reply.get("inputTokens"),
                                                   output_tokens=reply.get("outputTokens"), mode="replay")
            except (KeyError, TypeError) as exc:
                raise InputError(f"not a cassette entry (missing {exc})", file=str(self.cassette),
                                 line=line) from None
        if model is None:
            if len(models) != 1:
                raise InputError(f"cassette holds models {sorted(models)}: name the one to replay",
                                 file=str(self.cassette))
            model = models.pop()
        self.model = model

    async def complete(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> ProviderReply:
        """The recorded reply to this exact prompt."""
        reply = self._replies.get(request_key(self.model, self.temperature, messages, schema))
        if reply is None:
            raise CallError(f"{self.cassette}: no reply recorded for this prompt with model {self.model}")
        return reply

    async def aclose(self) -> None:
        """Nothing to release."""


class CassetteRecorder:
    """A live provider that also appends every reply it gets to a cassette.

    Args:
        provider: the live provider.
        cassette: the JSONL file to append to (created when missing).
    """

    def __init__(self, provider: Provider, cassette: str | Path) -> None:
        self.inner = provider
        self.cassette = Path(cassette)
        self.name = provider.name
        self.model = provider.model
        self.temperature = provider.temperature
        self.max_tokens = getattr(provider, "max_tokens", None)  # part of the cache key

    async def complete(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> ProviderReply:
        """The live reply, recorded."""
        reply = await self.inner.complete(messages, schema)
        entry = {"request": {"messages": messages, "model": self.model, "schema": schema,
                             "temperature": self.temperature},
                 "reply": {"inputTokens": reply.input_tokens, "outputTokens": reply.output_tokens,
                           "text": reply.text}}
        append_lines(self.cassette, [compact_sorted_json(entry, allow_nan=False) + "\n"])
        return reply

    async def aclose(self) -> None:
        """Close the live provider."""
        await self.inner.aclose()
