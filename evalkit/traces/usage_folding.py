"""Token usage counted once per model call: a wrapper's copy of its model call's usage is folded away.

Instrumentations often record a model call's usage twice or three times: Google ADK's ``call_llm``
span around ``generate_content`` around the provider's ``openai.chat`` span, each with the same token
counts; the Vercel AI SDK's ``ai.generateText`` summing its ``doGenerate`` calls. Summed, a trace with
two calls of 4,777 tokens shows 14,331. The innermost generation is the model call; any observation
whose subtree holds a GENERATION with usage keeps its own usage in ``metadata.usageFolded`` instead,
so nothing is lost and nothing is counted twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.contracts.trace import Observation

FOLDED_KEY = "usageFolded"
"""The metadata key holding a wrapper's usage once it is folded into its model calls'."""

FOLDED = ("token usage a wrapper repeats from the model calls inside it (counted once, at the innermost "
          "generation)")
"""What the import report calls the folded copies."""


def fold_repeated_usage(observations: Sequence[Observation]) -> tuple[list[Observation], int]:
    """The observations with every wrapper's repeated usage moved to ``metadata.usageFolded``.

    Args:
        observations: one trace's observations (parents may come before or after their children).

    Returns:
        The observations (the same objects where nothing changed) and how many usages were folded.
    """
    with_usage = [o for o in observations if o.usage]
    if len(with_usage) < 2:
        return list(observations), 0
    parent_of = {o.id: o.parent_id for o in observations}
    wrappers: set[str] = set()
    for obs in with_usage:
        if obs.type != "GENERATION":
            continue
        parent, seen = parent_of.get(obs.id), {obs.id}
        while parent is not None and parent not in seen:  # a cycle in a corrupt export ends the walk
            seen.add(parent)
            wrappers.add(parent)
            parent = parent_of.get(parent)
    out: list[Observation] = []
    folded = 0
    for obs in observations:
        if obs.usage and obs.id in wrappers:
            folded += 1
            update = {"usage": None, "metadata": {**(obs.metadata or {}), FOLDED_KEY: obs.usage}}
            obs = obs.model_copy(update=update)
            obs.model_fields_set.discard("usage")
            obs.model_fields_set.add("metadata")
        out.append(obs)
    return out, folded
