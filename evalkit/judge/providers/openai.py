"""The ``openai`` provider: the official SDK's chat completions, so ``base_url`` serves any compatible server.

vLLM, Ollama, llama.cpp server, LiteLLM and OpenAI itself all speak ``/v1/chat/completions``; they differ
in how they take a reply schema. The provider asks in the best way first and steps down when a server
says it cannot (the step is kept for the rest of the run):

1. ``response_format: {"type": "json_schema", ...}`` (OpenAI, vLLM, recent llama.cpp, Ollama);
2. ``response_format: {"type": "json_object", "schema": ...}`` (llama.cpp server builds that refuse
   ``json_schema`` with an HTTP 500 "response_format type must be one of ..." but constrain
   ``json_object`` to the schema given beside it). That schema is the reply schema with its free text
   bounded (:func:`bounded_schema`): the server compiles it into a grammar, and a small model held to a
   grammar but not to a length writes its critique until the reply's cap cuts it off (SmolLM2-135M did:
   1,023 tokens, three minutes a call here, and then no valid reply at all);
3. the schema inline in the prompt, no ``response_format``.

A refusal is an HTTP 400/422/500/501 whose message names ``response_format`` or ``json_schema``; any
other 500 is a server error the runner retries.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from evalkit.errors import CallError, InputError, ProviderError, TransientError
from evalkit.judge.providers.base import (
    SCHEMA_NAME,
    ProviderReply,
    StructuredMode,
    classify_status,
    error_message,
    retry_after_seconds,
    with_inline_schema,
)
from evalkit.judge.providers.raw_http import JSONPoster
from evalkit.judge.reply_cap import DEFAULT_MAX_TOKENS

MODES: tuple[StructuredMode, ...] = ("json_schema", "json_object", "prompt")
_REFUSAL_STATUSES = (400, 422, 500, 501)
_REFUSAL_WORDS = ("response_format", "json_schema", "response format")


def strict_compatible(schema: Any) -> bool:
    """True when OpenAI's strict mode accepts ``schema``: every object closed, every property required."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            props = schema.get("properties", {})
            if schema.get("additionalProperties") is not False or set(schema.get("required", [])) != set(props):
                return False
        return all(strict_compatible(v) for v in schema.values())
    if isinstance(schema, list):
        return all(strict_compatible(v) for v in schema)
    return True


CRITIQUE_CHARS = 1000
"""The longest critique a grammar lets a model write (about 250 tokens): ample for one binary criterion."""
TEXT_CHARS = 240
"""The longest other free text (a cited value, an assumption, what blocked the verdict)."""
LIST_ITEMS = 4
"""The most refs or assumptions a grammar lets a model write."""
CONFIDENCES = [i / 10 for i in range(11)]
"""The confidences a grammar lets a model write (0 to 1 by tenths: llama.cpp's grammars have no maximum)."""


def bounded_schema(schema: Any, name: str = "") -> Any:
    """``schema`` with every free-text string given a ``maxLength`` and every array a ``maxItems``, so a
    grammar built from it ends well within the reply's cap (the bounds fit 1024 tokens together), and the
    confidence one of 0, 0.1, ..., 1."""
    if isinstance(schema, list):
        return [bounded_schema(v, name) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: bounded_schema(v, k) if k not in ("properties",) else
           {p: bounded_schema(sub, p) for p, sub in v.items()} for k, v in schema.items()}
    if out.get("type") == "string" and "enum" not in out and "maxLength" not in out:
        out["maxLength"] = CRITIQUE_CHARS if name == "critique" else TEXT_CHARS
    if out.get("type") == "array" and "maxItems" not in out:
        out["maxItems"] = LIST_ITEMS
    if name == "confidence" and out.get("type") == "number" and "enum" not in out:
        out["enum"] = CONFIDENCES  # grammars cannot bound a number: a small model wrote 5 here
    return out


def _refuses_mode(status: int, message: str) -> bool:
    lowered = message.lower()
    return status in _REFUSAL_STATUSES and any(word in lowered for word in _REFUSAL_WORDS)


class _Status(Exception):
    """A non-2xx answer, the same from either transport: status, the server's message, its headers."""

    def __init__(self, status: int, message: str, headers: Any) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


class OpenAIProvider:
    """Chat completions through the official ``openai`` SDK (SDK retries off: the runner retries), or the
    same requests over the raw HTTP transport.

    Transports: ``sdk`` (the default) sends through ``openai.AsyncOpenAI``; ``http`` sends the same
    request body, byte for byte, to an ``http://`` server through
    :class:`~evalkit.judge.providers.raw_http.JSONPoster` and reads the reply the same way, at a fraction
    of the CPU (for local servers at high concurrency, where the SDK's CPU per call sets the pace).
    ``tests/judge/test_raw_http.py`` holds the two to the same bytes and the same outcomes.

    Args:
        model: the model id, as the server names it.
        api_key: the key (read from ``OPENAI_API_KEY`` by :func:`make_provider`).
        base_url: another OpenAI-compatible server (``http://localhost:8000/v1``); None for OpenAI.
        temperature: pinned to 0.
        timeout: seconds per call before it counts as a timeout.
        modes: the structured-output chain to try, best first.
        max_tokens: the reply's token cap, sent with every request.
        transport: ``sdk`` or ``http`` (``http://`` base URLs only).
        max_connections: a cap on the raw transport's sockets; None: one per call in flight (the
            runner's concurrency bounds them).
    """

    name = "openai"

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None, temperature: float = 0.0,
                 timeout: float = 60.0, modes: tuple[StructuredMode, ...] = MODES,
                 max_tokens: int = DEFAULT_MAX_TOKENS, transport: str = "sdk",
                 max_connections: int | None = None) -> None:
        self.model = model
        self.temperature = temperature
        self.base_url = base_url
        self.modes = modes
        self.max_tokens = max_tokens
        self.transport = transport
        self.timeout = timeout
        self._api_key = api_key
        self._mode_index = 0
        self._formats: dict[tuple[int, StructuredMode], tuple[Any, dict[str, Any], bytes]] = {}
        self._poster: JSONPoster | None = None
        self._pinned: tuple[tuple[Any, ...], bytes, bytes, bytes] | None = None  # the body's pinned parts
        self._client: Any = None
        if transport == "http":
            self._poster = JSONPoster(base_url or "", timeout=timeout, max_connections=max_connections, headers={
                "Accept-Encoding": "gzip, deflate", "Connection": "keep-alive", "Authorization": f"Bearer {api_key}",
                "Accept": "application/json", "Content-Type": "application/json",
                "User-Agent": f"evalkit/{_version()} (raw HTTP)"})
        elif transport == "sdk":
            import openai

            self._openai = openai
            self._client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)
        else:
            raise InputError(f"unknown transport {transport!r}: expected sdk or http", path="transport")

    @property
    def mode(self) -> StructuredMode:
        """The structured-output mode calls currently use."""
        return self.modes[self._mode_index]

    def _request(self, mode: StructuredMode, messages: list[dict[str, str]],
                 schema: dict[str, Any]) -> dict[str, Any]:
        """The SDK's keyword arguments; the body it sends has these keys in the SDK's order."""
        kwargs: dict[str, Any] = {"model": self.model}
        if mode == "json_schema":
            kwargs["messages"] = messages
        else:  # OpenAI wants "JSON" in the prompt for json_object; the inline fallback needs the schema
            kwargs["messages"] = with_inline_schema(messages, schema)
        kwargs["max_tokens"] = self.max_tokens
        if mode != "prompt":
            kwargs["response_format"] = self._format(mode, schema)[0]
        kwargs["temperature"] = self.temperature
        return kwargs

    def _format(self, mode: StructuredMode, schema: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """``response_format`` for the mode, and its JSON: built once per schema, not once per call."""
        entry = self._formats.get((id(schema), mode))
        if entry is None or entry[0] is not schema:  # holding the schema keeps its id from being reused
            if mode == "json_schema":
                fmt: dict[str, Any] = {"type": "json_schema", "json_schema": {
                    "name": SCHEMA_NAME, "schema": schema, "strict": strict_compatible(schema)}}
            else:
                fmt = {"type": "json_object", "schema": bounded_schema(schema)}
            entry = (schema, fmt, _dumps(fmt))
            self._formats[(id(schema), mode)] = entry
        return entry[1], entry[2]

    def _body(self, mode: StructuredMode, messages: list[dict[str, str]], schema: dict[str, Any]) -> bytes:
        """The JSON body the SDK would send for :meth:`_request`, the same bytes, assembled from parts (the
        pinned ones written once, not once per call)."""
        pinned = (self.model, self.max_tokens, self.temperature)
        if self._pinned is None or self._pinned[0] != pinned:
            self._pinned = (pinned, b'{"model":' + _dumps(self.model) + b',"messages":',
                            b',"max_tokens":' + _dumps(self.max_tokens), b',"temperature":' + _dumps(self.temperature) + b"}")
        _, head, cap, temperature = self._pinned
        sent = messages if mode == "json_schema" else with_inline_schema(messages, schema)
        if mode == "prompt":
            return b"".join((head, _dumps_messages(sent), cap, temperature))
        return b"".join((head, _dumps_messages(sent), cap, b',"response_format":', self._format(mode, schema)[1],
                         temperature))

    def prepare(self, messages: Any, schema: dict[str, Any]) -> tuple[StructuredMode, bytes] | None:
        """The ``http`` transport's request body for these messages, rendered ahead of the call (the runner
        renders the next prompts while calls are in flight); None for the SDK, which renders its own."""
        if self._poster is None:
            return None
        mode = self.mode
        return mode, self._body(mode, messages, schema)

    def connect(self, connections: int) -> None:
        """Start opening the ``http`` transport's connections now, in the background, rather than on the first
        calls (best effort: a connection that fails to open is left to the call that needs it to report)."""
        if self._poster is not None:
            self._poster.preconnect(connections)

    async def complete(self, messages: list[dict[str, str]], schema: dict[str, Any], *,
                       prepared: tuple[StructuredMode, bytes] | None = None) -> ProviderReply:
        """One call (stepping down the structured-output chain on a refusal); see the module docstring.

        ``prepared``: the body :meth:`prepare` rendered for these messages; sent when its mode is still the
        one in use (after a refusal the body is rendered again for the next mode).
        """
        refused = 0
        while True:
            mode = self.mode
            try:
                if self._poster is not None:
                    body = prepared[1] if prepared is not None and prepared[0] == mode \
                        else self._body(mode, messages, schema)
                    return await self._complete_http(mode, body, refused)
                return await self._complete_sdk(mode, messages, schema, refused)
            except _Status as exc:
                used = self.modes.index(mode)
                if _refuses_mode(exc.status, exc.message) and used + 1 < len(self.modes):
                    # Calls in flight may all be refused at once: step down from the mode this call used.
                    self._mode_index = max(self._mode_index, used + 1)
                    refused += 1
                    continue
                raise classify_status(exc.status, exc.message, retry_after_seconds(exc.headers)) from None

    async def _complete_sdk(self, mode: StructuredMode, messages: list[dict[str, str]], schema: dict[str, Any],
                            refused: int) -> ProviderReply:
        openai = self._openai
        try:
            response = await self._client.chat.completions.create(**self._request(mode, messages, schema))
        except openai.APITimeoutError as exc:
            raise TransientError(f"timed out: {exc}", kind="timeout") from None
        except openai.APIConnectionError as exc:
            raise TransientError(f"connection failed: {exc}", kind="connection") from None
        except openai.APIStatusError as exc:
            raise _Status(exc.status_code, error_message(exc), exc.response.headers) from None
        except (openai.APIResponseValidationError, ValueError) as exc:  # a 200 whose body is not JSON
            raise TransientError(f"unreadable response body: {exc}", kind="server") from None
        message = response.choices[0].message if getattr(response, "choices", None) else None
        usage = getattr(response, "usage", None)
        return _reply(message and {"content": message.content, "refusal": getattr(message, "refusal", None)},
                      usage and {"prompt_tokens": getattr(usage, "prompt_tokens", None),
                                 "completion_tokens": getattr(usage, "completion_tokens", None)}, mode, refused)

    async def _complete_http(self, mode: StructuredMode, body: bytes, refused: int) -> ProviderReply:
        assert self._poster is not None
        status, headers, raw = await self._poster.post("/chat/completions", body)
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            if 200 <= status < 300:
                raise TransientError(f"unreadable response body: {exc}", kind="server") from None
            data = raw.decode("utf-8", "replace").strip()
        if not 200 <= status < 300:
            raise _Status(status, _error_text(status, data), headers)
        choices = data.get("choices") if isinstance(data, dict) else None
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = choice.get("message") if isinstance(choice, dict) else None
        usage = data.get("usage") if isinstance(data, dict) else None
        if choice is not None and not isinstance(message, dict) or not isinstance(usage, dict | None):
            raise TransientError("unreadable response body: no message in the choice", kind="server")
        return _reply(message, usage, mode, refused)

    def served_models(self) -> list[str]:
        """The model ids the server lists at ``/models`` (one GET, before the run).

        Raises:
            OSError: the server cannot be reached or answers with an error.
            ValueError: the answer is not a model list.
        """
        import urllib.request

        url = (self.base_url or "https://api.openai.com/v1").rstrip("/") + "/models"
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {self._api_key}"})
        with urllib.request.urlopen(request, timeout=min(self.timeout, 30)) as response:  # noqa: S310
            data = json.loads(response.read())
        models = data.get("data") if isinstance(data, dict) else None
        if not isinstance(models, list):
            raise ValueError("not a model list ({\"data\": [{\"id\": ...}]})")
        return [str(m["id"]) for m in models if isinstance(m, dict) and "id" in m]

    async def aclose(self) -> None:
        """Close the connections (the SDK's HTTP client, or the raw pool)."""
        if self._poster is not None:
            await self._poster.aclose()
        else:
            await self._client.close()


def _dumps(value: Any) -> bytes:
    """JSON exactly as the ``openai`` SDK writes a request body (``openapi_dumps``)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _dumps_messages(messages: Any) -> bytes:
    """:func:`_dumps` of the messages, the same bytes, by orjson (a third of the time): for lists of
    string-valued dicts both write compact JSON with only ``"``, ``\\`` and control characters escaped."""
    if all(type(m) is dict and all(type(v) is str for v in m.values()) for m in messages):
        try:
            return orjson.dumps(messages)
        except TypeError:  # orjson.JSONEncodeError: a lone surrogate, which json writes as an escape
            pass
    return _dumps(messages)


def _error_text(status: int, data: Any) -> str:
    """What :func:`error_message` reads from the SDK's status error, from the raw body."""
    inner = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(inner, dict) and inner.get("message"):
        return str(inner["message"])
    return f"Error code: {status} - {inner}"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("evalkit")
    except PackageNotFoundError:
        return "dev"


def _reply(message: dict[str, Any] | None, usage: dict[str, Any] | None, mode: StructuredMode,
           refused: int) -> ProviderReply:
    """The reply from the first choice's message and the usage, read the same from either transport."""
    if message is None:
        raise TransientError("response has no choices", kind="server")
    text = message.get("content")
    if text is None:
        refusal = message.get("refusal")
        raise CallError(f"model gave no content{': ' + refusal if refusal else ''}")
    if not isinstance(text, str):
        raise TransientError(f"unreadable response body: content is {type(text).__name__}", kind="server")
    return ProviderReply(text=text, mode=mode, refused=refused,
                         input_tokens=usage.get("prompt_tokens") if usage else None,
                         output_tokens=usage.get("completion_tokens") if usage else None)


__all__ = ["DEFAULT_MAX_TOKENS", "MODES", "OpenAIProvider", "ProviderError", "bounded_schema", "strict_compatible"]
