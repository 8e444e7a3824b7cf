"""A scripted provider for unit tests: no network, deterministic, and every prompt sent is kept."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from evalkit.judge.providers.base import ProviderReply

Script = Callable[[list[dict[str, str]], dict[str, Any], int], "str | ProviderReply | BaseException"]
"""``(messages, schema, call number from 0) -> reply text, a reply, or an exception to raise``."""


class ScriptedProvider:
    """Answers from a script: a list of replies used in order, or a function of the prompt.

    Args:
        script: the replies (text, :class:`ProviderReply` or an exception to raise), or a function.
        model: the model name it reports.
        tokens: ``(input, output)`` tokens reported for a text reply.
    """

    name = "fake"

    def __init__(self, script: Sequence[str | ProviderReply | BaseException] | Script, *,
                 model: str = "scripted", tokens: tuple[int | None, int | None] = (100, 20)) -> None:
        self.model = model
        self.temperature = 0.0
        self._script = script
        self._tokens = tokens
        self.calls: list[tuple[list[dict[str, str]], dict[str, Any]]] = []
        """Every prompt sent, in order: what a test asserts on."""

    async def complete(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> ProviderReply:
        """The next scripted reply (raising it when it is an exception)."""
        index = len(self.calls)
        self.calls.append((messages, schema))
        if callable(self._script):
            item = self._script(messages, schema, index)
        else:
            if index >= len(self._script):
                raise AssertionError(f"script has {len(self._script)} replies; call {index + 1} was made")
            item = self._script[index]
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, ProviderReply):
            return item
        return ProviderReply(text=item, input_tokens=self._tokens[0], output_tokens=self._tokens[1],
                             mode="scripted")

    async def aclose(self) -> None:
        """Nothing to release."""
