"""The ``openai`` provider: the official SDK's chat completions, so ``base_url`` serves any compatible server.

vLLM, Ollama, llama.cpp server, LiteLLM and OpenAI itself all speak ``/v1/chat/completions``; they differ
in how they take a reply schema. The provider asks in the best way first and steps down when a server
says it cannot (the step is kept for the rest of the run):

1. ``response_format: {"type": "json_schema", ...}`` (OpenAI, vLLM, recent llama.cpp, Ollama);
2. ``response_format: {"type": "json_object", "schema": ...}`` (llama.cpp server builds that refuse
   ``json_schema`` with an HTTP 500 "response_format type must be one of ..." but constrain
   ``json_object`` to the schema given beside it);
3. the schema inline in the prompt, no ``response_format``.

A refusal is an HTTP 400/422/500/501 whose message names ``response_format`` or ``json_schema``; any
other 500 is a server error the runner retries.
"""

from __future__ import annotations

from typing import Any

from evalkit.errors import CallError, ProviderError, TransientError
from evalkit.judge.providers.base import (
    SCHEMA_NAME,
    ProviderReply,
    StructuredMode,
    classify_status,
    error_message,
    retry_after_seconds,
    with_inline_schema,
)

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


def _refuses_mode(status: int, message: str) -> bool:
    lowered = message.lower()
    return status in _REFUSAL_STATUSES and any(word in lowered for word in _REFUSAL_WORDS)


class OpenAIProvider:
    """Chat completions through the official ``openai`` SDK, SDK retries off (the runner retries).

    Args:
        model: the model id, as the server names it.
        api_key: the key (read from ``OPENAI_API_KEY`` by :func:`make_provider`).
        base_url: another OpenAI-compatible server (``http://localhost:8000/v1``); None for OpenAI.
        temperature: pinned to 0.
        timeout: seconds per call before it counts as a timeout.
        modes: the structured-output chain to try, best first.
    """

    name = "openai"

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None, temperature: float = 0.0,
                 timeout: float = 60.0, modes: tuple[StructuredMode, ...] = MODES) -> None:
        import openai

        self._openai = openai
        self.model = model
        self.temperature = temperature
        self.base_url = base_url
        self.modes = modes
        self._mode_index = 0
        self._client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)

    @property
    def mode(self) -> StructuredMode:
        """The structured-output mode calls currently use."""
        return self.modes[self._mode_index]

    def _request(self, mode: StructuredMode, messages: list[dict[str, str]],
                 schema: dict[str, Any]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, "temperature": self.temperature}
        if mode == "json_schema":
            kwargs["messages"] = messages
            kwargs["response_format"] = {"type": "json_schema", "json_schema": {
                "name": SCHEMA_NAME, "schema": schema, "strict": strict_compatible(schema)}}
        elif mode == "json_object":
            kwargs["messages"] = with_inline_schema(messages, schema)  # OpenAI wants "JSON" in the prompt
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        else:
            kwargs["messages"] = with_inline_schema(messages, schema)
        return kwargs

    async def complete(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> ProviderReply:
        """One call (stepping down the structured-output chain on a refusal); see the module docstring."""
        openai = self._openai
        refused = 0
        while True:
            mode = self.mode
            try:
                response = await self._client.chat.completions.create(**self._request(mode, messages, schema))
            except openai.APITimeoutError as exc:
                raise TransientError(f"timed out: {exc}", kind="timeout") from None
            except openai.APIConnectionError as exc:
                raise TransientError(f"connection failed: {exc}", kind="connection") from None
            except openai.APIStatusError as exc:
                message = error_message(exc)
                used = self.modes.index(mode)
                if _refuses_mode(exc.status_code, message) and used + 1 < len(self.modes):
                    # Calls in flight may all be refused at once: step down from the mode this call used.
                    self._mode_index = max(self._mode_index, used + 1)
                    refused += 1
                    continue
                raise classify_status(exc.status_code, message,
                                      retry_after_seconds(exc.response.headers)) from None
            except (openai.APIResponseValidationError, ValueError) as exc:  # a 200 whose body is not JSON
                raise TransientError(f"unreadable response body: {exc}", kind="server") from None
            return _reply(response, mode, refused)

    async def aclose(self) -> None:
        """Close the SDK's HTTP client."""
        await self._client.close()


def _reply(response: Any, mode: StructuredMode, refused: int) -> ProviderReply:
    if not getattr(response, "choices", None):
        raise TransientError("response has no choices", kind="server")
    message = response.choices[0].message
    text = message.content
    if text is None:
        refusal = getattr(message, "refusal", None)
        raise CallError(f"model gave no content{': ' + refusal if refusal else ''}")
    usage = getattr(response, "usage", None)
    return ProviderReply(text=text, mode=mode, refused=refused,
                         input_tokens=getattr(usage, "prompt_tokens", None) if usage else None,
                         output_tokens=getattr(usage, "completion_tokens", None) if usage else None)


__all__ = ["MODES", "OpenAIProvider", "ProviderError", "strict_compatible"]
