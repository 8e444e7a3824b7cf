"""How many tokens a prompt is, before it is sent, and whether it fits the model's context.

Counted with the provider's own tokenizer where one is at hand: ``tiktoken`` for OpenAI's models (the
``providers`` extra; it fetches its encoding files once, so offline it may be unable to), the server's
tokenize endpoint for llama.cpp's servers (``/extras/tokenize/count`` of llama-cpp-python's, ``/tokenize``
of llama.cpp's own). Otherwise the count is an estimate, about four characters a token, and says so.

What is counted is what the provider sends: the messages, with the reply schema written into the system
message as every structured-output mode but ``json_schema`` sends it (``json_schema`` sends the schema
beside the messages, as a grammar or a format the prompt does not hold; llama-cpp-python's server refuses
it, so for that server the schema is counted inline from the start), plus a few tokens a message for the
chat template.
A prompt fits when its tokens plus the reply's cap (``max_tokens``) are within the context window.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.judge.providers.base import with_inline_schema

CHARS_PER_TOKEN = 4.0
"""The estimate's rate: English prose and JSON average about four characters a token in BPE vocabularies."""

TEMPLATE_TOKENS = 4
"""Tokens a chat template adds around each message (role markers, separators; OpenAI documents 3-4)."""

REPLY_PRIMING = 3
"""Tokens that open the assistant's reply."""


@dataclass(frozen=True)
class TokenCount:
    """A prompt's token count and how it was counted."""

    tokens: int
    method: str
    """``tiktoken o200k_base``, ``server /extras/tokenize/count`` or ``estimate (...)``."""

    @property
    def estimated(self) -> bool:
        return self.method.startswith("estimate")

    def describe(self) -> str:
        return f"{self.tokens} tokens ({self.method})"


class TokenCounter:
    """Counts the tokens of the text a provider sends; the base class estimates."""

    method = f"estimate: about {CHARS_PER_TOKEN:g} characters a token"
    schema_inline = False
    """The provider will send the schema in the prompt whatever mode it starts in (see the module docstring)."""

    def __init__(self, why: str | None = None) -> None:
        if why:
            self.method = f"{self.method}; {why}"

    async def text_tokens(self, text: str) -> int:
        return math.ceil(len(text) / CHARS_PER_TOKEN)

    async def count(self, messages: Sequence[dict[str, Any]], schema: dict[str, Any] | None = None, *,
                    mode: str | None = None) -> TokenCount:
        """The tokens of ``messages`` as sent with ``schema`` in structured-output ``mode`` (see the module
        docstring; None: the schema inline)."""
        inline = schema is not None and (mode != "json_schema" or self.schema_inline)
        sent = with_inline_schema(list(messages), schema) if inline else list(messages)
        text = "\n".join(str(m.get("content", "")) for m in sent)
        tokens = await self.text_tokens(text)
        return TokenCount(tokens + TEMPLATE_TOKENS * len(sent) + REPLY_PRIMING, self.method)

    async def aclose(self) -> None:
        """Release what the counter holds (a server counter's nothing; kept for symmetry)."""


class TiktokenCounter(TokenCounter):
    """OpenAI's own tokenizer for the model."""

    def __init__(self, encoding: Any) -> None:
        self.encoding = encoding
        self.method = f"tiktoken {encoding.name}"

    async def text_tokens(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))


class ServerCounter(TokenCounter):
    """The server's own tokenizer, over HTTP: exact for the model it serves."""

    def __init__(self, url: str, body: str, method: str, schema_inline: bool = False) -> None:
        self.url, self.body, self.method, self.schema_inline = url, body, method, schema_inline

    async def count(self, messages: Sequence[dict[str, Any]], schema: dict[str, Any] | None = None, *,
                    mode: str | None = None) -> TokenCount:
        try:
            return await super().count(messages, schema, mode=mode)
        except (OSError, ValueError, KeyError, TypeError) as exc:  # a busy or gone server: estimated, said so
            counted = await TokenCounter().count(messages, schema, mode="prompt" if self.schema_inline else mode)
            return TokenCount(counted.tokens, f"{counted.method}; the server's tokenizer failed: "
                                              f"{type(exc).__name__}")

    async def text_tokens(self, text: str) -> int:
        return await asyncio.to_thread(self._post, text)

    def _post(self, text: str) -> int:
        data = json.dumps({self.body: text}).encode()
        request = urllib.request.Request(self.url, data=data, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - the judge's own server
            reply = json.loads(response.read())
        return int(reply["count"]) if "count" in reply else len(reply["tokens"])


TIKTOKEN_PREFIXES = {"gpt-4o": "o200k_base", "gpt-4.1": "o200k_base", "gpt-4.5": "o200k_base", "gpt-5": "o200k_base",
                     "o1": "o200k_base", "o3": "o200k_base", "o4": "o200k_base", "gpt-4": "cl100k_base",
                     "gpt-3.5": "cl100k_base"}
"""The encoding of OpenAI model families tiktoken may not know by name yet (newer than the installed tiktoken)."""


def _tiktoken_counter(model: str) -> TokenCounter:
    try:
        import tiktoken
    except ImportError:
        return TokenCounter("tiktoken is not installed (pip install \"evalkit[providers]\")")
    try:
        try:
            encoding = tiktoken.encoding_for_model(model)
        except KeyError:
            name = next((e for p, e in TIKTOKEN_PREFIXES.items() if model.startswith(p)), None)
            if name is None:
                return TokenCounter(f"tiktoken does not know model {model!r}")
            encoding = tiktoken.get_encoding(name)
    except Exception as exc:  # noqa: BLE001 - offline: tiktoken fetches its encoding files on first use
        return TokenCounter(f"tiktoken could not load its encoding ({type(exc).__name__})")
    return TiktokenCounter(encoding)


def _server_root(base_url: str) -> str:
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


def _server_counter(base_url: str) -> TokenCounter | None:
    """llama-cpp-python's or llama.cpp's tokenize endpoint, when the server answers one; None otherwise."""
    root = _server_root(base_url)
    for path, body, name, inline in (("/extras/tokenize/count", "input", "server /extras/tokenize/count", True),
                                     ("/tokenize", "content", "server /tokenize", False)):
        counter = ServerCounter(root + path, body, name, inline)
        try:
            counter._post("a")
        except (OSError, ValueError, KeyError, TypeError, urllib.error.URLError):
            continue
        return counter
    return None


def _anthropic_counter(judge: Any) -> TokenCounter:
    try:
        counter = judge.token_counter()
        counter._count([{"role": "user", "content": "a"}], {"type": "object"})
    except Exception as exc:  # noqa: BLE001 - a compatible server without the endpoint, or no connection
        return TokenCounter(f"the server does not count tokens ({type(exc).__name__})")
    return counter


def token_counter(provider: str, model: str, base_url: str | None, *, judge: Any = None) -> TokenCounter:
    """The best counter for a judge: the server's tokenizer (a server of its own; Anthropic's counting
    endpoint, given the ``judge`` provider), tiktoken (OpenAI's models), else the estimate, which says why."""
    if provider == "anthropic" and judge is not None and hasattr(judge, "token_counter"):
        return _anthropic_counter(judge)
    if provider == "openai" and base_url:
        counter = _server_counter(base_url)
        if counter is not None:
            return counter
        if "api.openai.com" not in base_url:
            tiktoken_counter = _tiktoken_counter(model)
            if not tiktoken_counter.method.startswith("estimate"):
                return tiktoken_counter
            return TokenCounter("the server has no tokenize endpoint")
    if provider == "openai":
        return _tiktoken_counter(model)
    if provider == "anthropic":
        return TokenCounter("Anthropic's counting endpoint is asked only with the provider at hand")
    return TokenCounter()


def fits(count: TokenCount, max_tokens: int, context: int | None) -> str | None:
    """None when the prompt and the reply's cap fit the context window; else why not, in a sentence."""
    if context is None or count.tokens + max_tokens <= context:
        return None
    return (f"the prompt does not fit the model's context: {count.describe()} + the reply's cap of {max_tokens} "
            f"> the context window of {context}")


__all__ = ["CHARS_PER_TOKEN", "ServerCounter", "TiktokenCounter", "TokenCount", "TokenCounter", "fits",
           "token_counter"]
