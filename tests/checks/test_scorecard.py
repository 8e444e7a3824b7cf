"""The gate table, rates and intervals, corrected rates, skip warnings, the file and the 60-column card."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from evalkit.checks import (
    WIDTH,
    JudgeValidation,
    Outcome,
    build_scorecard,
    render_card,
    route,
    score_traces,
    write_scorecard,
)
from evalkit.contract_files import read_model
from evalkit.contracts.labels import ValidationResult
from evalkit.contracts.scorecard import Scorecard
from evalkit.stats import wilson_bounds

from .conftest import make_trace
from .test_router import ORDER_CHECK, criterion, matrix

SEVERITIES = ("CRIT", "HIGH", "MED", "LOW")
STATUSES = ("pass", "fail", "uncertain", "error", "missing", "skipped")


def expected_verdict(cells: list[tuple[str, str]]) -> str:
    gating = [status for severity, status in cells if severity in ("CRIT", "HIGH")]
    if "fail" in gating:
        return "fail"
    if {"uncertain", "error", "missing", "skipped"} & set(gating):  # a gating criterion nobody decided
        return "incomplete"
    return "pass"


def card_of(cells: list[tuple[str, str]], trace_count: int = 1) -> Scorecard:
    routed = route(matrix(*(criterion(f"c{i}", "llm-judge", severity) for i, (severity, _) in enumerate(cells))))
    outcomes = [Outcome("C3", f"c{i}", "t1", status, "llm-judge")
                for i, (_, status) in enumerate(cells) if status != "missing"]  # missing: no outcome at all
    return build_scorecard(routed, outcomes, subject="s", matrix_version="v1", generated_at="now",
                           trace_count=trace_count)


@pytest.mark.parametrize("cells", [list(p) for p in itertools.product(
    itertools.product(SEVERITIES, STATUSES), repeat=2)], ids=lambda c: "+".join(f"{s}:{r}" for s, r in c))
def test_gate_table(cells: list[tuple[str, str]]) -> None:
    card = card_of(cells)
    expected = expected_verdict(cells)
    assert card.components[0].verdict == expected
    assert card.verdict == expected
    assert bool(card.components[0].reasons) == (expected != "pass")


def test_run_verdict_is_the_worst_component() -> None:
    m = matrix(criterion("a", "llm-judge", "CRIT"))
    data = m.to_json_obj()
    data["components"] += [dict(data["components"][0], componentId=f"C{i}",
                                criteria=[criterion(f"x{i}", "llm-judge", "HIGH")]) for i in (4, 5)]
    routed = route(type(m).model_validate(data))
    outcomes = [Outcome("C3", "a", "t1", "pass", "llm-judge"), Outcome("C4", "x4", "t1", "uncertain", "llm-judge"),
                Outcome("C5", "x5", "t1", "fail", "llm-judge")]
    card = build_scorecard(routed, outcomes, subject="s", matrix_version="v1", generated_at="now", trace_count=1)
    assert [c.verdict for c in card.components] == ["pass", "incomplete", "fail"]
    assert card.verdict == "fail"
    card = build_scorecard(routed, outcomes[:2], subject="s", matrix_version="v1", generated_at="now", trace_count=1)
    assert card.verdict == "incomplete"  # x5 has no outcome: missing


def test_pass_rate_is_over_decided_outcomes_with_wilson_interval() -> None:
    routed = route(matrix(criterion("a", "llm-judge", "MED")))
    statuses = ["pass"] * 7 + ["fail"] * 2 + ["uncertain", "skipped"]
    outcomes = [Outcome("C3", "a", f"t{i}", s, "llm-judge") for i, s in enumerate(statuses)]
    card = build_scorecard(routed, outcomes, subject="s", matrix_version="v1", generated_at="now", trace_count=12)
    score = card.components[0].criteria[0]
    assert score.counts.model_dump() == {"passed": 7, "failed": 2, "uncertain": 1, "errored": 0, "missing": 1,
                                         "skipped": 1}
    assert score.pass_rate.rate == pytest.approx(7 / 9)
    assert (score.pass_rate.lo, score.pass_rate.hi) == pytest.approx(wilson_bounds(7, 9))
    assert score.failing_traces == ["t7", "t8"]


def test_skip_rate_of_half_warns_and_a_skipped_gating_criterion_is_incomplete_never_pass_nor_fail() -> None:
    routed = route(matrix(criterion("a", "llm-judge", "CRIT")))
    outcomes = [Outcome("C3", "a", "t1", "skipped", "llm-judge"), Outcome("C3", "a", "t2", "pass", "llm-judge")]
    card = build_scorecard(routed, outcomes, subject="s", matrix_version="v1", generated_at="now", trace_count=2)
    assert card.verdict == "incomplete"
    assert card.components[0].reasons == ["CRIT a 1 skipped"]
    assert card.warnings == ["C3 a: 50% of outcomes skipped"]
    med = route(matrix(criterion("a", "llm-judge", "MED")))
    assert build_scorecard(med, outcomes, subject="s", matrix_version="v1", generated_at="now",
                           trace_count=2).verdict == "pass"  # MED and LOW never gate, skipped or not
    outcomes[0] = Outcome("C3", "a", "t1", "pass", "llm-judge")
    assert build_scorecard(routed, outcomes, subject="s", matrix_version="v1", generated_at="now",
                           trace_count=2).warnings == []


def _validation(status: str, tpr: float = 0.95, tnr: float = 0.9) -> ValidationResult:
    return ValidationResult(criterion_id="a", judge_model="m", status=status, label_count=100, tpr=tpr, tnr=tnr,
                            observed_pass_rate=0.8, corrected_rate=0.8, correction_valid=True)


def test_corrected_rate_only_for_a_validated_judge() -> None:
    routed = route(matrix(criterion("a", "llm-judge", "MED")))
    outcomes = [Outcome("C3", "a", f"t{i}", "pass" if i < 80 else "fail", "llm-judge") for i in range(100)]

    def score(calibration: object) -> object:
        return build_scorecard(routed, outcomes, subject="s", matrix_version="v1", generated_at="now",
                               trace_count=100, calibrations={"a": calibration}).components[0].criteria[0]

    with_counts = score(JudgeValidation("a", "validated", 0.95, 0.9, labelled_pass=50, labelled_fail=50))
    theta = (0.8 + 0.9 - 1) / (0.95 + 0.9 - 1)
    assert with_counts.corrected.rate == pytest.approx(theta)
    assert with_counts.corrected.lo < theta < with_counts.corrected.hi
    point_only = score(_validation("validated"))
    assert point_only.corrected is None and f"corrected {theta:.3f}" in point_only.corrected_note
    unvalidated = score(_validation("unvalidated"))
    assert unvalidated.corrected is None and "unvalidated" in unvalidated.corrected_note


def test_score_traces_writes_a_scorecard_file_that_validates(tmp_path: Path) -> None:
    m = matrix(criterion("ids", "deterministic-script", "HIGH", check=ORDER_CHECK), criterion("j", "llm-judge", "CRIT"))
    traces = [make_trace("t1"), make_trace("t2", order_looked="ORD-2026-999999")]
    card = score_traces(m, iter(traces), generated_at="2026-03-02T00:00:00Z")
    assert card.trace_count == 2
    assert card.verdict == "fail"
    assert card.components[0].reasons == ["HIGH ids failed on 1 trace(s)"]
    out = tmp_path / "run.scorecard.json"
    write_scorecard(out, card)
    assert read_model(out, Scorecard) == card
    assert json.loads(out.read_text())["verdict"] == "fail"


def test_card_is_at_most_60_columns_even_with_long_names() -> None:
    long = criterion("a-very-long-criterion-identifier-that-goes-on-and-on", "llm-judge", "CRIT")
    m = matrix(long, criterion("b", "deterministic-script", "HIGH", check=ORDER_CHECK))
    m.components[0].component_name = "an-order-lookup-component-with-an-unreasonably-long-name"
    card = score_traces(m, [make_trace("t1"), make_trace("t2", order_looked="ORD-2026-1")], generated_at="now")
    text = render_card(card)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= WIDTH
    assert all(len(line) == WIDTH for line in lines)
    assert "FAIL" in lines[1]
    assert "F1" in text and "S2" in text  # one failed code check, two skipped judge outcomes
