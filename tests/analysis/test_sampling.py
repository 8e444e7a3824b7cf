"""Each sampling strategy picks what it promises, in review order, the same way for the same seed."""

from __future__ import annotations

from collections import Counter

import pytest
from analysis_builders import make_trace

from evalkit.analysis import STRATEGIES, sample_traces
from evalkit.contracts.verdict import BlockedBy, CriterionVerdict
from evalkit.errors import InputError


def _plain(n: int) -> list:
    return [make_trace(f"t{i:03d}", metadata={"intent": "status"}) for i in range(n)]


def _verdict(trace_id: str, result: str, confidence: float, criterion: str = "c1") -> CriterionVerdict:
    blocked = BlockedBy(kind="normative", text="unclear") if result == "uncertain" else None
    return CriterionVerdict(criterion_id=criterion, trace_id=trace_id, result=result, confidence=confidence,
                            critique="because", blocked_by=blocked)


def _ids(traces) -> list[str]:
    return [t.id for t in traces]


@pytest.mark.parametrize("strategy", ["random", "outlier"])
def test_same_seed_same_traces_in_the_same_order(strategy):
    traces = [make_trace(f"t{i:03d}", tools=i % 4, duration_s=1 + i % 7) for i in range(60)]
    first = _ids(sample_traces(traces, 15, strategy, seed=3))
    assert first == _ids(sample_traces(traces, 15, strategy, seed=3))
    assert len(first) == len(set(first)) == 15


def test_random_depends_on_the_seed_and_covers_the_population():
    traces = _plain(100)
    a, b = _ids(sample_traces(traces, 20, "random", seed=1)), _ids(sample_traces(traces, 20, "random", seed=2))
    assert a != b
    assert set(_ids(sample_traces(traces, 500, "random", seed=1))) == set(_ids(traces))  # n is capped


def test_random_does_not_keep_input_order():
    traces = _plain(100)
    picked = _ids(sample_traces(traces, 30, "random", seed=5))
    assert picked != sorted(picked)


def test_stratified_gives_rare_groups_equal_turns_first():
    traces = [make_trace(f"c{i:03d}", metadata={"intent": "common"}) for i in range(90)]
    traces += [make_trace(f"r{i:03d}", metadata={"intent": "rare"}) for i in range(3)]
    traces += [make_trace("m000", metadata={})]  # no intent at all
    picked = sample_traces(traces, 9, "stratified", seed=0, by="intent")
    groups = [t.metadata.get("intent", "(missing)") for t in picked]
    # one of each group per turn, groups in sorted order, rare ones exhausted after their members
    assert groups[:3] == ["(missing)", "common", "rare"]
    assert Counter(groups) == {"common": 5, "rare": 3, "(missing)": 1}


def test_stratified_by_a_trace_feature():
    traces = [make_trace(f"a{i}", tools=1) for i in range(10)] + [make_trace(f"b{i}", tools=3) for i in range(2)]
    picked = sample_traces(traces, 4, "stratified", seed=0, by="tool_calls")
    assert Counter(len([o for o in t.observations if o.type == "TOOL"]) for t in picked) == {1: 2, 3: 2}


def test_stratified_needs_a_field_that_exists():
    traces = _plain(5)
    with pytest.raises(InputError, match="stratify"):
        sample_traces(traces, 2, "stratified")
    with pytest.raises(InputError, match="no trace has metadata field 'tier'"):
        sample_traces(traces, 2, "stratified", by="tier")


def test_outlier_puts_unusual_length_latency_tools_and_errors_first():
    traces = [make_trace(f"n{i:02d}", tools=2, duration_s=2.0 + (i % 3) * 0.1) for i in range(40)]
    traces.insert(7, make_trace("slow", tools=2, duration_s=60.0))
    traces.insert(20, make_trace("many-tools", tools=9))
    traces.insert(30, make_trace("broken", tools=2, failed_tools=1))
    traces.insert(33, make_trace("long-answer", tools=2, answer="word " * 400))
    picked = _ids(sample_traces(traces, 4, "outlier", seed=0))
    assert set(picked) == {"slow", "many-tools", "broken", "long-answer"}


def test_failure_driven_takes_error_levels_failed_tools_and_judge_fails_only():
    traces = [make_trace(f"ok{i}") for i in range(20)]
    traces += [make_trace("tool-failed", failed_tools=1), make_trace("warned", warning=True),
               make_trace("judged"), make_trace("everything", failed_tools=2)]
    verdicts = [_verdict("judged", "fail", 0.9), _verdict("everything", "fail", 0.9), _verdict("ok1", "pass", 0.9)]
    picked = _ids(sample_traces(traces, 10, "failure-driven", seed=0, verdicts=verdicts))
    assert set(picked) == {"tool-failed", "warned", "judged", "everything"}  # fewer than n: only real signals
    assert picked[0] == "everything"  # most kinds of signal first


def test_uncertainty_needs_verdicts_and_takes_the_least_sure_first():
    traces = [make_trace(f"t{i}") for i in range(6)]
    with pytest.raises(InputError, match="verdicts"):
        sample_traces(traces, 3, "uncertainty")
    verdicts = [_verdict("t0", "pass", 0.95), _verdict("t1", "uncertain", 0.0), _verdict("t2", "fail", 0.55),
                _verdict("t3", "pass", 0.69), _verdict("t4", "pass", 0.71), _verdict("t1", "pass", 0.9, "c2")]
    assert _ids(sample_traces(traces, 5, "uncertainty", seed=0, verdicts=verdicts)) == ["t1", "t2", "t3"]
    assert _ids(sample_traces(traces, 5, "uncertainty", seed=0, verdicts=verdicts, low_confidence=0.8)) == \
        ["t1", "t2", "t3", "t4"]


def test_bad_arguments_are_named():
    traces = _plain(3)
    with pytest.raises(InputError, match="unknown sampling strategy 'clever'"):
        sample_traces(traces, 1, "clever")
    with pytest.raises(InputError, match="n: must be at least 1"):
        sample_traces(traces, 0)
    with pytest.raises(InputError, match="duplicate trace id 't000'"):
        sample_traces([*traces, traces[0]], 2)
    assert set(STRATEGIES) == {"random", "stratified", "outlier", "failure-driven", "uncertainty"}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_same_set_of_traces_gives_the_same_sample_whatever_the_file_order(strategy):
    import random

    traces = [make_trace(f"t{i:03d}", tools=i % 4, failed_tools=int(i % 9 == 0), duration_s=1 + i % 7,
                         metadata={"intent": ["refund", "status", "cancel"][i % 3]}) for i in range(60)]
    verdicts = [_verdict(t.id, "uncertain" if i % 5 == 0 else "pass", 0.5 + (i % 4) / 10)
                for i, t in enumerate(traces)]
    shuffled = list(traces)
    random.Random(11).shuffle(shuffled)
    reversed_ = list(reversed(traces))
    options = {"by": "intent", "verdicts": verdicts}
    picks = [_ids(sample_traces(order, 12, strategy, seed=4, **options)) for order in (traces, shuffled, reversed_)]
    assert picks[0] == picks[1] == picks[2]
    assert picks[0]
    if strategy in ("random", "stratified"):  # the seed, not the file, decides the draw
        assert len(picks[0]) == 12 and picks[0] != _ids(sample_traces(traces, 12, strategy, seed=5, **options))


def test_uncertainty_sampling_accepts_verdicts_that_record_no_confidence():
    traces = [make_trace(f"t{i}") for i in range(3)]
    verdicts = [CriterionVerdict(criterion_id="c1", trace_id="t0", result="pass", confidence=None, critique=None),
                _verdict("t1", "uncertain", 0.2)]
    assert _ids(sample_traces(traces, 3, "uncertainty", seed=0, verdicts=verdicts)) == ["t1"]
