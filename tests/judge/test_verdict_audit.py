"""The bias audit fed from a calibration's own traces and verdicts."""

from __future__ import annotations

from evalkit.contracts.trace import Observation, Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.judge.verdict_audit import (
    agent_model,
    answer_lengths,
    answer_text,
    bias_findings,
    verdict_verbosity,
)


def _trace(tid: str, answer: str | None, *, model: str = "gpt-4o-mini", on_trace: bool = False) -> Trace:
    obs = [Observation(id=f"{tid}-1", type="GENERATION", model=model, output="thinking..."),
           Observation(id=f"{tid}-2", type="TOOL", name="search", output="a long tool output " * 20)]
    if answer is not None and not on_trace:
        obs.append(Observation(id=f"{tid}-3", type="GENERATION", model=model, output=answer))
    return Trace(id=tid, observations=obs, output=answer if on_trace else None)


def _verdict(tid: str, result: str, crit: str = "helpful") -> CriterionVerdict:
    blocked = {"blockedBy": {"kind": "scope", "text": "no evidence"}} if result == "uncertain" else {}
    return CriterionVerdict.model_validate({"criterionId": crit, "traceId": tid, "result": result,
                                            "critique": "x", "confidence": 0.9, **blocked})


def test_the_answer_is_the_trace_output_else_the_last_generation_not_a_tool():
    assert answer_text(_trace("a", "final words")) == "final words"
    assert answer_text(_trace("b", "on the trace", on_trace=True)) == "on the trace"
    assert answer_text(Trace(id="c", observations=[Observation(id="c1", type="TOOL", output="x")])) is None
    assert answer_text(Trace(id="d", output={"b": 1, "a": [1]}, observations=[])) == '{"a":[1],"b":1}'


def test_a_judge_that_passes_long_answers_is_flagged_and_one_that_does_not_is_not():
    traces = [_trace(f"t{i}", "x" * (100 + 10 * i)) for i in range(30)]
    lengths = answer_lengths(traces)
    biased = [_verdict(f"t{i}", "pass" if i >= 15 else "fail") for i in range(30)]
    fair = [_verdict(f"t{i}", "pass" if i % 2 else "fail", crit="grounded") for i in range(30)]
    rows = {v.criterion_id: v for v in verdict_verbosity(biased + fair, lengths, permutations=2000)}
    assert rows["helpful"].biased and rows["helpful"].audit.point_biserial > 0.8
    assert rows["helpful"].mean_length_pass > rows["helpful"].mean_length_fail
    assert not rows["grounded"].biased
    findings = bias_findings(list(rows.values()), judge_model=None, agent=None)
    assert len(findings) == 1 and findings[0].startswith("helpful: the judge passes longer answers")


def test_uncertain_verdicts_and_traces_without_an_answer_are_left_out_and_counted():
    traces = [_trace("a", "short"), _trace("b", "a much longer answer"), Trace(id="c", observations=[Observation(id="c1", type="TOOL", output="x")])]
    verdicts = [_verdict("a", "fail"), _verdict("b", "pass"), _verdict("c", "pass"), _verdict("a", "uncertain")]
    (row,) = verdict_verbosity(verdicts, answer_lengths(traces), permutations=100)
    assert (row.audit.n, row.without_answer) == (2, 1)


def test_same_family_judge_and_agent_are_warned_about():
    traces = [_trace("a", "ok", model="gpt-4o-mini"), _trace("b", "ok", model="gpt-4o-mini"),
              _trace("c", "ok", model="claude-3-5-haiku")]
    assert agent_model(traces) == "gpt-4o-mini"
    assert any("openai" in f for f in bias_findings([], judge_model="gpt-4.1", agent=agent_model(traces)))
    assert bias_findings([], judge_model="claude-sonnet-4", agent="gpt-4o-mini") == []
