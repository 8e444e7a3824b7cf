"""Traces of the shapes a dataset must keep: several days, metadata, errors, tokens, gaps, empty traces."""

from __future__ import annotations

import random
from typing import Any

from evalkit.contracts.trace import Trace

INTENTS = ("refund", "order status", "billing/dispute", None)


def varied_traces(n: int = 60, seed: int = 7) -> list[Trace]:
    """``n`` traces over three days; every ninth has no observation, every seventh has no times."""
    rng = random.Random(seed)
    traces = []
    for t in range(n):
        day = 1 + t % 3
        observations: list[dict[str, Any]] = []
        if t % 9 != 4:
            for i in range(rng.randrange(1, 8)):
                kind = rng.choice(("GENERATION", "TOOL", "SPAN", "AGENT"))
                obs: dict[str, Any] = {"id": f"o{i}", "type": kind,
                                       "name": rng.choice(("chat", "search", "lookup")),
                                       "input": {"q": f"question {t}-{i}"},
                                       "output": f"answer {rng.random()}"}
                if i:
                    obs["parentId"] = "o0"
                if t % 7 != 3:
                    second = 10 + i * 3 + rng.randrange(3)
                    obs["startTime"] = f"2026-03-0{day}T12:00:{second:02d}.{rng.randrange(10**6):06d}+00:00"
                    obs["endTime"] = f"2026-03-0{day}T12:01:{second:02d}Z"
                if kind == "GENERATION":
                    obs["model"] = rng.choice(("m-small", "m-large"))
                    obs["usage"] = {"input": rng.randrange(10, 900), "output": rng.randrange(1, 300)}
                if rng.random() < 0.15:
                    obs["level"] = rng.choice(("ERROR", "WARNING"))
                    obs["statusMessage"] = "tool failed"
                observations.append(obs)
        intent = INTENTS[t % len(INTENTS)]
        metadata = {"intent": intent, "tier": rng.choice((1, 2))} if intent else {"tier": 3}
        traces.append(Trace.model_validate({"id": f"trace-{t:03d}", "name": "support", "metadata": metadata,
                                            "output": {"answer": "done " * (t % 5)},
                                            "observations": observations}))
    return traces
