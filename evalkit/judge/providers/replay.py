"""Cassettes: replies recorded once from a real judge, replayed offline (reruns, demos, tests).

A cassette is a JSONL file, one recorded call per line::

    {"reply": {"inputTokens": 812, "outputTokens": 95, "text": "{...}"},
     "request": {"maxTokens": 1024, "messages": [...], "model": "gpt-4o-mini", "schema": {...},
                 "temperature": 0}}

The replay provider answers a prompt with the reply recorded for the same model, temperature, messages,
schema and reply token cap (``maxTokens``: a request with another cap is another request, as in the
judge cache's key; a cassette entry without one was recorded at the default cap, so the default is left
out of the key and older cassettes keep replaying); a prompt that was not recorded fails that item
(never a made-up reply). A compact cassette
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
from evalkit.judge.journal import CutOffLine, append_lines, iter_journal
from evalkit.judge.providers.base import Provider, ProviderReply
from evalkit.judge.reply_cap import DEFAULT_MAX_TOKENS


def request_key(model: str, temperature: float, messages: list[dict[str, str]], schema: dict[str, Any],
                max_tokens: int | None = None) -> str:
    """The cassette's key of one request: sha256 of its canonical JSON.

    Args:
        model: the model id.
        temperature: the temperature (0).
        messages: the prompt's messages.
        schema: the reply's JSON Schema.
        max_tokens: the reply's token cap; None or the default cap (:data:`DEFAULT_MAX_TOKENS`) leave it out
            of the key, so keys made before the cap was part of them still match.
    """
    request = {"messages": messages, "model": model, "schema": schema, "temperature": temperature}
    if max_tokens is not None and int(max_tokens) != DEFAULT_MAX_TOKENS:
        request["maxTokens"] = int(max_tokens)
    return hashlib.sha256(compact_sorted_json(request).encode()).hexdigest()


class ReplayProvider:
    """Answers from a cassette.

    Args:
        cassette: the JSONL file of recorded calls.
        model: the model to replay; None takes the cassette's model when it holds only one.
        max_tokens: the token cap of the requests to replay (the pin's); None: the default cap.

    Raises:
        InputError: the cassette is missing, malformed, or holds several models and none was named.
    """

    name = "replay"

    def __init__(self, cassette: str | Path, *, model: str | None = None, max_tokens: int | None = None) -> None:
        self.cassette = Path(cassette)
        self.temperature = 0.0
        self.max_tokens = max_tokens  # part of the cache key and the journal's pin, as for a live provider
        if not self.cassette.is_file():
            raise InputError("cassette not found", file=str(self.cassette))
        self._replies: dict[str, ProviderReply] = {}
        self.warnings: list[str] = []
        """What the run should tell the user before it starts (a cut-off last entry)."""
        models: set[str] = set()
        cut_off: list[CutOffLine] = []
        for line, record in iter_journal(self.cassette, cut_off=cut_off):
            try:
                reply = record["reply"]
                if "key" in record:  # the compact form: the request's key and model only
                    key, model_name = record["key"], record["model"]
                else:
                    request = record["request"]
                    key = request_key(request["model"], request["temperature"], request["messages"],
                                      request["schema"], request.get("maxTokens"))
                    model_name = request["model"]
                if not isinstance(model_name, str) or not isinstance(key, str) or not isinstance(reply["text"], str):
                    raise TypeError("'model', 'key' and 'reply.text' (text)")
                models.add(model_name)
                self._replies[key] = ProviderReply(text=reply["text"], input_tokens=reply.get("inputTokens"),
                                                   output_tokens=reply.get("outputTokens"), mode="replay")
            except (KeyError, TypeError) as exc:
                raise InputError(f"not a cassette entry (missing or not of its type: {exc})", file=str(self.cassette),
                                 line=line) from None
        for cut in cut_off:  # a recording stopped mid-write: its prompts fail as unrecorded, said here first
            self.warnings.append(f"{self.cassette}:{cut.line}: the cassette's last entry is cut off ({cut.size} "
                                 "bytes, no line end): left out, so its prompt fails as not recorded; record it "
                                 "again or remove the line")
        if model is None:
            if len(models) != 1:
                raise InputError(f"cassette holds models {sorted(models)}: name the one to replay",
                                 file=str(self.cassette))
            model = models.pop()
        self.model = model

    async def complete(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> ProviderReply:
        """The recorded reply to this exact prompt."""
        reply = self._replies.get(request_key(self.model, self.temperature, messages, schema, self.max_tokens))
        if reply is None:
            cap = "" if self.max_tokens in (None, DEFAULT_MAX_TOKENS) else f" and max tokens {self.max_tokens}"
            raise CallError(f"{self.cassette}: no reply recorded for this prompt with model {self.model}{cap}")
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
        # Bodies rendered ahead and the pool opened ahead, as without the recorder (the runner asks for both).
        self.prepare = getattr(provider, "prepare", None)
        self.connect = getattr(provider, "connect", None)

    async def complete(self, messages: list[dict[str, str]], schema: dict[str, Any],
                       **prepared: Any) -> ProviderReply:
        """The live reply, recorded."""
        reply = await self.inner.complete(messages, schema, **prepared)
        request = {"messages": messages, "model": self.model, "schema": schema, "temperature": self.temperature}
        if self.max_tokens is not None:
            request["maxTokens"] = int(self.max_tokens)
        entry = {"request": request,
                 "reply": {"inputTokens": reply.input_tokens, "outputTokens": reply.output_tokens,
                           "text": reply.text}}
        append_lines(self.cassette, [compact_sorted_json(entry, allow_nan=False) + "\n"])
        return reply

    async def aclose(self) -> None:
        """Close the live provider."""
        await self.inner.aclose()
