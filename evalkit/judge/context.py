"""A judge prompt too long for the judge's model: said before any call, with what to do.

A 200-step coding-agent session rendered whole is a prompt of hundreds of thousands of tokens; sent to a
model with a 128k window it is cut off or refused, and the verdict, if any, is about part of the trace.
The length is estimated from the prompt's characters (:data:`CHARS_PER_TOKEN`, a rule of thumb for
English and code: the real count needs the model's tokenizer) and compared with the context window of
the model's family (:data:`CONTEXT_TOKENS`); a model not listed is not checked.
"""

from __future__ import annotations

from collections.abc import Iterable

from evalkit.judge.prompt import JudgePrompt

__all__ = ["CHARS_PER_TOKEN", "CONTEXT_TOKENS", "context_tokens", "oversized_prompts"]

CHARS_PER_TOKEN = 4
"""Characters per token, roughly, for English text and code (OpenAI's and Anthropic's rule of thumb)."""

CONTEXT_TOKENS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576), ("gpt-5", 400_000), ("gpt-4o", 128_000), ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192), ("gpt-3.5-turbo", 16_385), ("o1", 200_000), ("o3", 200_000), ("o4", 200_000),
    ("claude", 200_000), ("gemini", 1_048_576), ("smollm2", 8_192),
)
"""Context windows in tokens by model name prefix (the providers' published sizes), the first match wins."""


def context_tokens(model: str | None) -> int | None:
    """The context window of ``model`` (a provider prefix such as ``openai/`` is ignored), or None if unknown."""
    if not model:
        return None
    name = model.rsplit("/", 1)[-1].lower()
    return next((size for prefix, size in CONTEXT_TOKENS if name.startswith(prefix)), None)


def oversized_prompts(prompts: Iterable[JudgePrompt], model: str | None) -> list[str]:
    """A warning for each prompt longer than ``model``'s context window (none for a model not listed)."""
    limit = context_tokens(model)
    if limit is None:
        return []
    warnings = []
    for prompt in prompts:
        if prompt.pre_verdict is not None:
            continue  # stored without asking the judge
        tokens = sum(len(m["content"]) for m in prompt.messages) // CHARS_PER_TOKEN
        if tokens > limit:
            warnings.append(f"the {prompt.criterion_id} prompt for trace {prompt.trace_id} is about {tokens:,} "
                            f"tokens, more than {model}'s context window of {limit:,}: the judge would see it cut "
                            "off or refuse it; show it less of the trace (input.trace, input.fields, "
                            "input.observations in the spec)")
    return warnings
