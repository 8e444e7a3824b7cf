"""The runnable sample agent answers any case: dataset cases by their tuple, derived cases by their message."""

import pytest

from evalkit.sample_subject.agent import simulate_traces
from evalkit.sample_subject.agent_command import answer_case, main
from evalkit.sample_subject.agent_spec import AgentSpec, default_spec
from evalkit.suite import derive_cases


def test_derived_cases_are_answered_as_the_customer_asked():
    traces = simulate_traces(7, 60)
    derived = derive_cases(traces, {t.id: "fail" for t in traces}).cases
    spec = default_spec(7)
    for trace, case in zip(traces, derived, strict=True):
        answered = answer_case(spec, case).metadata
        want = trace.metadata
        # The tier is not in a recorded message (only dataset queries say "I am a premium member").
        assert (answered["intent"], answered["channel"]) == (want["intent"], want["channel"]), case.query


def test_same_case_and_repeat_same_trace_other_repeat_may_differ():
    case = derive_cases(simulate_traces(7, 1), {"tr-0001": "pass"}).cases[0]
    spec = default_spec(7)
    assert answer_case(spec, case, 1) == answer_case(spec, case, 1)
    assert answer_case(spec, case, 1).input == case.query


def test_the_spec_refuses_unknown_failure_modes_and_rates_outside_0_1():
    with pytest.raises(ValueError, match="unknown failure mode 'slow_reply'"):
        AgentSpec(failure_rates={"slow_reply": 0.5})
    with pytest.raises(ValueError, match="less than or equal to 1"):
        AgentSpec(kb_search_error_rate=1.5)
    assert AgentSpec(failure_rates={"wrong_tool_args": 1}).failure_rates["missed_escalation"] == 0


def test_bad_arguments_exit_2_with_the_usage(tmp_path, capsys):
    assert main(["--spec", "x.yaml", "--case"]) == 2
    assert "usage: python -m evalkit.sample_subject.agent_command" in capsys.readouterr().err
    assert main(["--spec", str(tmp_path / "missing.yaml"), "--case", "c", "--out", "o"]) == 2
    assert "missing.yaml" in capsys.readouterr().err
