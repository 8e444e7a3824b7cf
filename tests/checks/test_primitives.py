"""Every primitive passes on a good trace and fails on a bad one, and its refs resolve against the trace."""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.checks import PRIMITIVES, TRAJECTORY_CHECKS, CheckError, build_check
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.judge.grounding import resolve_ref

from .conftest import make_trace

ORDER_RE = r"ORD-\d{4}-\d{6}"

CASES: list[tuple[str, dict[str, Any], Trace, Trace]] = [
    ("presence", {"obs": "respond", "path": "output.answer"},
     make_trace(), make_trace(answer="")),
    ("string-equality", {"actual": {"obs": "order_lookup", "path": "input.order_id"},
                         "expected": {"obs": "$trace", "path": "input", "pattern": ORDER_RE}},
     make_trace(), make_trace(order_looked="ORD-2026-999999")),
    ("format-validity", {"obs": "order_lookup", "path": "output.placed_at", "format": "iso-datetime"},
     make_trace(), make_trace(placed_at="March 2nd")),
    ("schema-conformance", {"obs": "order_lookup", "path": "output",
                            "schema": {"type": "object", "required": ["order_id", "total"],
                                       "properties": {"total": {"type": "number"}}}},
     make_trace(), make_trace(tool_error=True, retried=False)),
    ("ref-integrity", {"source": {"obs": "order_lookup", "path": "output"},
                       "target": {"obs": "respond", "path": "output.answer"}, "pattern": ORDER_RE},
     make_trace(), make_trace(answer="Refund issued for ORD-2026-123456.")),
    ("recovery-after-failure", {}, make_trace(tool_error=True, retried=True), make_trace(tool_error=True)),
    ("tool-output-failure", {}, make_trace(), make_trace(tool_error=True, retried=True)),
]


def test_the_seven_primitives_are_all_covered() -> None:
    # the trajectory checks have their own cases (test_trajectory.py)
    assert {c[0] for c in CASES} == set(PRIMITIVES) - {c.primitive for c in TRAJECTORY_CHECKS}
    assert len(CASES) == 7


def _check_refs(trace: Trace, verdict: CriterionVerdict) -> None:
    for ref in verdict.refs or []:
        resolution = resolve_ref(trace, ref)
        assert resolution, resolution.reason


@pytest.mark.parametrize(("primitive", "params", "good", "bad"), CASES, ids=[c[0] for c in CASES])
def test_primitive_passes_good_and_fails_bad(primitive: str, params: dict[str, Any], good: Trace, bad: Trace) -> None:
    check = build_check("crit-1", primitive, params)
    ok, ko = check.decide(good), check.decide(bad)
    assert (ok.result, ko.result) == ("pass", "fail"), (ok.critique, ko.critique)
    assert ok.criterion_id == ko.criterion_id == "crit-1"
    assert ok.confidence == ko.confidence == 1.0
    assert ko.critique and ko.critique.startswith(f"[{primitive}]")
    _check_refs(good, ok)
    _check_refs(bad, ko)


@pytest.mark.parametrize(("primitive", "params", "good", "bad"), CASES[1:5], ids=[c[0] for c in CASES[1:5]])
def test_fail_cites_the_offending_value(primitive: str, params: dict[str, Any], good: Trace, bad: Trace) -> None:
    verdict = build_check("c", primitive, params).decide(bad)
    assert verdict.refs, verdict.critique
    _check_refs(bad, verdict)


def test_string_equality_fail_names_both_values() -> None:
    check = build_check("c", "string-equality", CASES[1][1])
    verdict = check.decide(make_trace(order_looked="ORD-2026-999999"))
    assert "ORD-2026-999999" in verdict.critique and "ORD-2026-000001" in verdict.critique
    assert {r.obs for r in verdict.refs} == {"t1-o4", "t1"}


def test_presence_counts_against_min_and_max() -> None:
    twice = make_trace(tool_error=True, retried=True)
    assert build_check("c", "presence", {"obs": "order_lookup", "max": 1}).decide(twice).result == "fail"
    assert build_check("c", "presence", {"obs": "order_lookup", "min": 2}).decide(twice).result == "pass"
    assert build_check("c", "presence", {"obs": "escalate_to_human"}).decide(twice).result == "fail"


def test_when_that_does_not_hold_passes_as_not_applicable() -> None:
    check = build_check("c", "presence", {"obs": "escalate_to_human",
                                          "when": {"obs": "$trace", "path": "metadata.intent", "value": "complaint"}})
    verdict = check.decide(make_trace(intent="refund_request"))
    assert verdict.result == "pass" and "does not apply" in verdict.critique
    assert check.decide(make_trace(intent="complaint")).result == "fail"


def test_tool_failure_read_from_error_text_and_json_text() -> None:
    check = build_check("c", "tool-output-failure", {"obs": "lookup"})
    trace = Trace.model_validate({"id": "t", "observations": [
        {"id": "a", "type": "TOOL", "name": "lookup", "output": '{"error": "not found"}'},
    ]})
    verdict = check.decide(trace)
    assert verdict.result == "fail" and "output.error" in verdict.critique
    _check_refs(trace, verdict)
    text = Trace.model_validate({"id": "t", "observations": [
        {"id": "a", "type": "TOOL", "name": "lookup", "output": "Error: connection refused"}]})
    assert check.decide(text).result == "fail"
    fine = Trace.model_validate({"id": "t", "observations": [
        {"id": "a", "type": "TOOL", "name": "lookup", "output": "No errors were found in the lease."}]})
    assert check.decide(fine).result == "pass"


@pytest.mark.parametrize(("primitive", "params", "message"), [
    ("presense", {}, "unknown check primitive 'presense'"),
    ("presence", {"obs": "x", "colour": 1}, "unknown parameter(s) colour"),
    ("presence", {}, "missing parameter(s) obs"),
    ("format-validity", {"obs": "x", "format": "yaml"}, "unknown format 'yaml'"),
    ("schema-conformance", {"obs": "x", "schema": {"type": "thing"}}, "not a valid JSON Schema"),
    ("ref-integrity", {"source": {"obs": "a"}, "target": {"obs": "b"}, "pattern": "("}, "not a valid regular"),
    ("string-equality", {"actual": {"obs": "a", "path": "p"}}, "exactly one of expected"),
])
def test_bad_configuration_is_an_error_naming_the_parameter(primitive: str, params: dict[str, Any],
                                                             message: str) -> None:
    with pytest.raises(CheckError) as err:
        build_check("c", primitive, params, where="components[0].criteria[1].check")
    assert message in str(err.value)
    assert err.value.path.startswith("components[0].criteria[1].check")
