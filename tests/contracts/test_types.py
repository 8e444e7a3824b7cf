"""The shared contract types: one interval type, one non-empty text, the two name shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from evalkit.contracts import (
    ConfidenceInterval,
    FailureMode,
    HumanLabel,
    RateConfidenceInterval,
    RateInterval,
    Scorecard,
    Subject,
)
from evalkit.stats import interval, rate_interval

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "contracts"


def test_an_interval_may_be_negative_but_never_reversed_or_infinite() -> None:
    kappa_ci = ConfidenceInterval(lo=-0.12, hi=0.4, level=0.95)
    assert kappa_ci.to_json_obj() == {"lo": -0.12, "hi": 0.4, "level": 0.95}
    with pytest.raises(ValidationError, match="hi: must be >= lo"):
        ConfidenceInterval(lo=0.5, hi=0.4, level=0.95)
    with pytest.raises(ValidationError, match="finite"):
        ConfidenceInterval.model_validate_json('{"lo": 0.1, "hi": 1e400, "level": 0.95}')
    assert interval(None, 0.95) is None
    assert interval((0.2, 0.3), 0.9) == ConfidenceInterval(lo=0.2, hi=0.3, level=0.9)


def test_a_rate_interval_is_an_interval_whose_ends_are_rates() -> None:
    card = json.loads((EXAMPLES / "scorecard.json").read_text())
    rate = card["components"][0]["criteria"][0]["passRate"]
    parsed = RateInterval.model_validate(rate)
    assert isinstance(parsed, RateConfidenceInterval) and isinstance(parsed, ConfidenceInterval)
    assert parsed.to_json_obj() == rate
    Scorecard.model_validate(card)
    with pytest.raises(ValidationError) as info:
        RateInterval.model_validate(rate | {"lo": -0.01})
    assert [(e["loc"], e["type"]) for e in info.value.errors()] == [(("lo",), "greater_than_equal")]
    with pytest.raises(ValidationError, match="hi: must be >= lo"):
        RateConfidenceInterval(lo=0.6, hi=0.5, level=0.95)
    assert rate_interval((0.2, 0.3), 0.9) == RateConfidenceInterval(lo=0.2, hi=0.3, level=0.9)
    with pytest.raises(ValidationError):
        rate_interval((-0.2, 0.3), 0.9)


def test_non_empty_text_is_refused_empty_wherever_it_is_used() -> None:
    with pytest.raises(ValidationError) as info:
        HumanLabel.model_validate({"traceId": "", "label": "pass"})
    assert info.value.errors()[0]["type"] == "string_too_short"


def test_slug_is_kebab_case_and_a_lower_name_also_takes_underscores() -> None:
    mode = {"id": "wrong-tool", "name": "Wrong tool", "definition": "called a tool the task did not need"}
    assert FailureMode.model_validate(mode).id == "wrong-tool"
    with pytest.raises(ValidationError) as info:
        FailureMode.model_validate(mode | {"id": "wrong_tool"})
    assert [(e["loc"], e["type"]) for e in info.value.errors()] == [(("id",), "string_pattern_mismatch")]
    subject = {"name": "my_agent", "traces": "traces.jsonl", "notebooks": ["00_overview"]}
    assert Subject.model_validate(subject).notebooks == ["00_overview"]
    with pytest.raises(ValidationError, match="pattern"):
        Subject.model_validate(subject | {"name": "My Agent"})
