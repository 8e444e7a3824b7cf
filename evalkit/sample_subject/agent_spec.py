"""The runnable sample agent's settings (``agent-spec.yaml``): which failure modes it shows, how often."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from evalkit.contracts.base import SnakeContract
from evalkit.sample_subject.catalog import (
    FAILURE_MODES,
    FAILURE_RATES,
    KB_SEARCH_ERROR_RATE,
    ORDER_LOOKUP_TIMEOUT_RATE,
)

Rate = Annotated[float, Field(ge=0, le=1)]


class AgentSpec(SnakeContract):
    """The sample agent's settings: how often each failure mode shows, how often its tools fail."""

    seed: int = 0
    failure_rates: dict[str, Rate] = Field(default_factory=lambda: dict(FAILURE_RATES))
    order_lookup_timeout_rate: Rate = ORDER_LOOKUP_TIMEOUT_RATE
    kb_search_error_rate: Rate = KB_SEARCH_ERROR_RATE

    @field_validator("failure_rates")
    @classmethod
    def _known_modes(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(value) - set(FAILURE_MODES))
        if unknown:
            raise ValueError(f"unknown failure mode {unknown[0]!r}; known: {', '.join(FAILURE_MODES)}")
        return {mode: value.get(mode, 0.0) for mode in FAILURE_MODES}


def default_spec(seed: int) -> AgentSpec:
    """The spec the sample subject ships: the failure rates its recorded traces were made with."""
    return AgentSpec(seed=seed, failure_rates=dict(FAILURE_RATES),
                     order_lookup_timeout_rate=ORDER_LOOKUP_TIMEOUT_RATE, kb_search_error_rate=KB_SEARCH_ERROR_RATE)
