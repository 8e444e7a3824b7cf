"""The ``anthropic`` provider: the official SDK's Messages API, the reply's shape enforced by tool use.

The schema is the input schema of one tool the model is required to call (``tool_choice``); the tool
call's input is the structured reply. A reply with no tool call falls back to its text, which the runner
validates like any other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from evalkit.errors import TransientError
from evalkit.io.canonical import compact_sorted_json
from evalkit.judge.providers.base import (
    SCHEMA_NAME,
    ProviderReply,
    classify_status,
    error_message,
    retry_after_seconds,
)
from evalkit.judge.providers.tokens import TokenCount, TokenCounter
from evalkit.judge.reply_cap import DEFAULT_MAX_TOKENS


class AnthropicProvider:
    """Messages through the official ``anthropic`` SDK, SDK retries off (the runner retries).

    Args:
        model: the model id (``claude-sonnet-4-5``).
        api_key: the key (read from ``ANTHROPIC_API_KEY`` by :func:`make_provider`).
        base_url: another Messages-compatible server; None for Anthropic.
        temperature: pinned to 0.
        timeout: seconds per call before it counts as a timeout.
        max_tokens: the reply's token cap.
    """

    name = "anthropic"

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None, temperature: float = 0.0,
                 timeout: float = 60.0, max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        import anthropic

        self._anthropic = anthropic
        self.model = model
        self.temperature = temperature
        self.base_url = base_url
        self.max_tokens = max_tokens
        self.timeout = timeout
        self._api_key = api_key
        self._client = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0,
                                                timeout=timeout)

    async def complete(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> ProviderReply:
        """One call with the schema as a required tool; the tool input is returned as JSON text."""
        anthropic = self._anthropic
        kwargs: dict[str, Any] = {
            **prompt_parts(self.model, messages, schema), "max_tokens": self.max_tokens,
            # This SDK release has no temperature argument; the Messages API takes it in the body.
            "extra_body": {"temperature": self.temperature},
        }
        try:
            response = await self._client.messages.create(**kwargs)
        except anthropic.APITimeoutError as exc:
            raise TransientError(f"timed out: {exc}", kind="timeout") from None
        except anthropic.APIConnectionError as exc:
            raise TransientError(f"connection failed: {exc}", kind="connection") from None
        except anthropic.APIStatusError as exc:
            raise classify_status(exc.status_code, error_message(exc),
                                  retry_after_seconds(exc.response.headers)) from None
        except (anthropic.APIResponseValidationError, ValueError) as exc:
            raise TransientError(f"unreadable response body: {exc}", kind="server") from None
        return _reply(response)

    def token_counter(self) -> Any:
        """Anthropic's own count of a prompt (``/v1/messages/count_tokens``: free, exact, one request)."""
        return AnthropicCounter(self.model, api_key=self._api_key, base_url=self.base_url,
                                timeout=min(self.timeout, 60.0))

    async def aclose(self) -> None:
        """Close the SDK's HTTP client."""
        await self._client.close()


def prompt_parts(model: str, messages: Any, schema: dict[str, Any]) -> dict[str, Any]:
    """The prompt of a Messages request, the same for a call and for counting its tokens: the system text,
    the turns, and the schema as the one tool the model must call."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    parts: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m["role"], "content": m["content"]} for m in messages if m["role"] != "system"],
        "tools": [{"name": SCHEMA_NAME, "description": "Record the verdict.", "input_schema": schema}],
        "tool_choice": {"type": "tool", "name": SCHEMA_NAME},
    }
    if system:
        parts["system"] = system
    return parts


def _reply(response: Any) -> ProviderReply:
    blocks = getattr(response, "content", None) or []
    tool = next((b for b in blocks if getattr(b, "type", None) == "tool_use"), None)
    if tool is not None:
        text = compact_sorted_json(tool.input) if isinstance(tool.input, dict | list) else str(tool.input)
        mode = "tool"
    else:
        text = "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", None) == "text")
        mode = "prompt"
    usage = getattr(response, "usage", None)
    return ProviderReply(text=text, mode=mode,  # type: ignore[arg-type]
                         input_tokens=getattr(usage, "input_tokens", None) if usage else None,
                         output_tokens=getattr(usage, "output_tokens", None) if usage else None)


class AnthropicCounter(TokenCounter):
    """Anthropic's token counting endpoint (``/v1/messages/count_tokens``), through the official client: the
    request's own count, system, turns and tool included."""

    method = "Anthropic /v1/messages/count_tokens"
    whole_request = True

    def __init__(self, model: str, *, api_key: str, base_url: str | None, timeout: float) -> None:
        import anthropic

        self.model = model
        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=2, timeout=timeout)

    async def count(self, messages: Sequence[dict[str, Any]], schema: dict[str, Any] | None = None, *,
                    mode: str | None = None) -> TokenCount:
        return TokenCount(await asyncio.to_thread(self._count, list(messages), schema or {}), self.method)

    def _count(self, messages: list[dict[str, Any]], schema: dict[str, Any]) -> int:
        return int(self._client.messages.count_tokens(**prompt_parts(self.model, messages, schema)).input_tokens)

    async def aclose(self) -> None:
        self._client.close()
