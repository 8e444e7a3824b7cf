"""The trajectory checks: each passes a good trace and fails a bad one with refs that resolve, and each rule
(argument predicates, the four match modes, budgets, loops) is held to what docs/checks.md says."""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.checks import TRAJECTORY_CHECKS, CheckError, build_check
from evalkit.contracts.trace import Trace
from evalkit.judge.grounding import resolve_ref

REFUND = [("kb_search", {"query": "refund policy"}), ("order_lookup", {"order_id": "ORD-2026-000001"}),
          ("issue_refund", {"order_id": "ORD-2026-000001", "amount": 79.0, "items": [{"sku": "A", "qty": 1}]})]


def agent_trace(calls: list[tuple[str, Any]], *, tid: str = "t1", timed: bool = True, usage: bool = True,
                metadata: dict[str, Any] | None = None, tool_type: str = "TOOL") -> Trace:
    """A root, one generation per call (then the call), and a final generation; a second apart when timed."""
    obs: list[dict[str, Any]] = [{"id": f"{tid}-root", "type": "AGENT", "name": "agent"}]
    for i, (name, args) in enumerate([*calls, (None, None)]):
        gen: dict[str, Any] = {"id": f"{tid}-g{i}", "type": "GENERATION", "name": "llm", "parentId": f"{tid}-root"}
        if usage:
            gen["usage"] = {"input": 100, "output": 20, "total": 120}
        if timed:
            gen["startTime"] = f"2026-03-02T09:00:{2 * i:02d}Z"
        obs.append(gen)
        if name is not None:
            call = {"id": f"{tid}-c{i}", "type": tool_type, "name": name, "parentId": f"{tid}-root", "input": args,
                    "output": {"ok": True}}
            if timed:
                call["startTime"], call["endTime"] = f"2026-03-02T09:00:{2 * i + 1:02d}Z", f"2026-03-02T09:00:{2 * i + 1:02d}.5Z"
            obs.append(call)
    if timed:
        obs[0]["startTime"] = "2026-03-02T09:00:00Z"
    return Trace.model_validate({"id": tid, "input": "Refund ORD-2026-000001", "metadata": metadata or {},
                                 "observations": obs})


GOOD = agent_trace(REFUND)
CASES: list[tuple[str, dict[str, Any], Trace, Trace]] = [
    ("tool-called", {"tool": "issue_refund", "args": {"subset": {"order_id": "ORD-2026-000001"}}},
     GOOD, agent_trace([*REFUND[:2], ("issue_refund", {"order_id": "ORD-2026-999999"})])),
    ("tool-not-called", {"tool": "escalate_to_human"}, GOOD, agent_trace([*REFUND, ("escalate_to_human", {})])),
    ("trajectory-match", {"expected": ["kb_search", "order_lookup", "issue_refund"]},
     GOOD, agent_trace([REFUND[1], REFUND[0], REFUND[2]])),
    ("argument-correct", {"tool": "issue_refund", "schema": {"type": "object", "required": ["order_id", "amount"],
                                                             "properties": {"amount": {"type": "number", "maximum": 200}}}},
     GOOD, agent_trace([*REFUND[:2], ("issue_refund", {"order_id": "ORD-2026-000001", "amount": 329.0})])),
    ("step-budget", {"maxToolCalls": 3, "maxModelCalls": 4, "maxSeconds": 10, "maxTokens": 480},
     GOOD, agent_trace([*REFUND, REFUND[0]])),
    ("no-loop", {"maxRepeats": 2}, GOOD, agent_trace([REFUND[0], REFUND[1], REFUND[1], REFUND[1], REFUND[2]])),
]


def _decide(primitive: str, params: dict[str, Any], trace: Trace) -> Any:
    return build_check("c", primitive, params).decide(trace)


def test_every_trajectory_check_has_a_case() -> None:
    assert {c[0] for c in CASES} == {c.primitive for c in TRAJECTORY_CHECKS}


@pytest.mark.parametrize(("primitive", "params", "good", "bad"), CASES, ids=[c[0] for c in CASES])
def test_passes_good_fails_bad_and_cites_what_it_read(primitive: str, params: dict[str, Any], good: Trace,
                                                      bad: Trace) -> None:
    ok, ko = _decide(primitive, params, good), _decide(primitive, params, bad)
    assert (ok.result, ko.result) == ("pass", "fail"), (ok.critique, ko.critique)
    assert ok.confidence == ko.confidence == 1.0 and ko.critique.startswith(f"[{primitive}]")
    for trace, verdict in ((good, ok), (bad, ko)):
        for ref in verdict.refs or []:
            assert resolve_ref(trace, ref), (ref, resolve_ref(trace, ref).reason)


@pytest.mark.parametrize(("args", "holds"), [
    ({"equals": {"order_id": "ORD-2026-000001"}}, True),
    ({"equals": {"order_id": "ORD-2026-000001", "extra": 1}}, False),
    ({"subset": {}}, True),
    ({"subset": {"order_id": "ORD-2026-000002"}}, False),
    ({"matches": {"order_id": r"^ORD-\d{4}-0+1$"}}, True),
    ({"matches": {"order_id": "^ORD-1"}}, False),
    ({"matches": {"missing_arg": "."}}, False),
])
def test_argument_predicates_on_order_lookup(args: dict[str, Any], holds: bool) -> None:
    called = _decide("tool-called", {"tool": "order_lookup", "args": args}, GOOD)
    not_called = _decide("tool-not-called", {"tool": "order_lookup", "args": args}, GOOD)
    assert (called.result == "pass") is holds and (not_called.result == "pass") is not holds


def test_subset_reaches_into_nested_objects_and_lists_and_json_text_is_read() -> None:
    nested = {"subset": {"items": [{"sku": "A"}], "amount": 79.0}}
    assert _decide("tool-called", {"tool": "issue_refund", "args": nested}, GOOD).result == "pass"
    assert _decide("tool-called", {"tool": "issue_refund", "args": {"subset": {"items": [{"sku": "B"}]}}},
                   GOOD).result == "fail"
    as_text = agent_trace([("issue_refund", '{"order_id": "ORD-2026-000001", "amount": 79.0}')])
    assert _decide("tool-called", {"tool": "issue_refund", "args": {"equals": {"order_id": "ORD-2026-000001",
                                                                               "amount": 79.0}}}, as_text).result == "pass"
    flagged = agent_trace([("escalate", {"urgent": 1})])
    assert _decide("tool-called", {"tool": "escalate", "args": {"subset": {"urgent": True}}}, flagged).result == "fail"
    assert _decide("tool-called", {"tool": "escalate", "args": {"subset": {"urgent": 1}}}, flagged).result == "pass"


def test_tool_called_counts_against_min_and_max_and_names_the_calls_it_saw() -> None:
    twice = agent_trace([REFUND[1], REFUND[1]])
    assert _decide("tool-called", {"tool": "order_lookup", "max": 1}, twice).result == "fail"
    assert _decide("tool-called", {"tool": "order_lookup", "min": 2, "max": 2}, twice).result == "pass"
    none = _decide("tool-called", {"tool": "escalate_to_human"}, GOOD)
    assert none.result == "fail" and "kb_search > order_lookup > issue_refund" in none.critique
    assert _decide("tool-called", {"tool": ["escalate_to_human", "issue_refund"]}, GOOD).result == "pass"


@pytest.mark.parametrize(("mode", "made", "result"), [
    ("exact", ["kb_search", "order_lookup", "issue_refund"], "pass"),
    ("exact", ["kb_search", "order_lookup", "order_lookup", "issue_refund"], "fail"),
    ("exact", ["kb_search", "order_lookup"], "fail"),
    ("in-order", ["kb_search", "think", "order_lookup", "think", "issue_refund"], "pass"),
    ("in-order", ["order_lookup", "kb_search", "issue_refund"], "fail"),
    ("any-order", ["issue_refund", "order_lookup", "kb_search", "think"], "pass"),
    ("any-order", ["issue_refund", "order_lookup", "think"], "fail"),
])
def test_match_modes(mode: str, made: list[str], result: str) -> None:
    trace = agent_trace([(n, {}) for n in made])
    verdict = _decide("trajectory-match", {"mode": mode, "expected": ["kb_search", "order_lookup", "issue_refund"]},
                      trace)
    assert verdict.result == result, verdict.critique


def test_extra_calls_are_refused_without_allow_extra_and_ignore_drops_tools() -> None:
    trace = agent_trace([(n, {}) for n in ["issue_refund", "think", "order_lookup"]])
    expected = ["order_lookup", "issue_refund"]
    assert _decide("trajectory-match", {"mode": "any-order", "expected": expected}, trace).result == "pass"
    strict = _decide("trajectory-match", {"mode": "any-order", "allowExtra": False, "expected": expected}, trace)
    assert strict.result == "fail" and "think" in str(strict.refs)
    assert _decide("trajectory-match", {"mode": "any-order", "allowExtra": False, "ignore": ["think"],
                                        "expected": expected}, trace).result == "pass"
    with_think = {"mode": "exact", "expected": ["order_lookup", "think", "issue_refund"], "ignore": ["think"]}
    assert _decide("trajectory-match", with_think, agent_trace([("order_lookup", {}), ("issue_refund", {})])).result \
        == "pass"                                                            # ignored on the expected side too
    in_order = agent_trace([(n, {}) for n in ["order_lookup", "think", "issue_refund"]])
    assert _decide("trajectory-match", {"mode": "in-order", "allowExtra": False, "expected": expected},
                   in_order).result == "fail"


def test_graded_gives_lcs_precision_recall_f1() -> None:
    # expected a b c d, made a c x d: LCS a c d = 3; precision 3/4, recall 3/4, F1 0.75
    trace = agent_trace([(n, {}) for n in ["a", "c", "x", "d"]])
    params = {"mode": "graded", "expected": ["a", "b", "c", "d"]}
    verdict = _decide("trajectory-match", {**params, "threshold": 0.75}, trace)
    assert verdict.result == "pass" and "precision 0.75, recall 0.75, F1 0.75" in verdict.critique
    below = _decide("trajectory-match", {**params, "threshold": 0.8}, trace)
    assert below.result == "fail" and below.refs[0].obs == "t1-c2"  # x, the call outside the subsequence
    # made a b: precision 1, recall 0.5
    short = agent_trace([("a", {}), ("b", {})])
    assert _decide("trajectory-match", {**params, "metric": "precision"}, short).result == "pass"
    assert _decide("trajectory-match", {**params, "metric": "recall", "threshold": 0.6}, short).result == "fail"


def test_steps_with_argument_predicates_and_any_order_finds_a_full_matching() -> None:
    # the first step could take either lookup; only giving it the second leaves the first for step two
    trace = agent_trace([("lookup", {"id": "1"}), ("lookup", {"id": "2"})])
    steps = [{"tool": "lookup", "args": {"matches": {"id": "."}}}, {"tool": "lookup", "args": {"equals": {"id": "1"}}}]
    assert _decide("trajectory-match", {"mode": "any-order", "expected": steps}, trace).result == "pass"
    assert _decide("trajectory-match", {"mode": "exact", "expected": steps}, trace).result == "fail"


def test_expected_steps_read_from_the_trace_as_a_benchmark_records_them() -> None:
    actions = [{"name": "order_lookup", "kwargs": {"order_id": "ORD-2026-000001"}},
               {"name": "issue_refund", "kwargs": {"order_id": "ORD-2026-000001", "amount": 79.0}}]
    params = {"mode": "in-order", "expectedFrom": {"obs": "$trace", "path": "metadata.task.actions"}}
    right = agent_trace(REFUND, metadata={"task": {"actions": actions}})
    assert _decide("trajectory-match", {**params, "compareArgs": "subset"}, right).result == "pass"
    wrong = agent_trace([*REFUND[:2], ("issue_refund", {"order_id": "ORD-2026-000001", "amount": 90.0})],
                        metadata={"task": {"actions": actions}})
    assert _decide("trajectory-match", params, wrong).result == "pass"  # names only by default
    assert _decide("trajectory-match", {**params, "compareArgs": "subset"}, wrong).result == "fail"
    assert _decide("trajectory-match", {**params, "compareArgs": "exact"}, right).result == "fail"  # items differ
    unknown = _decide("trajectory-match", params, GOOD)
    assert unknown.result == "uncertain" and "no expected steps" in unknown.blocked_by.text


def test_an_exact_match_that_fails_on_arguments_names_the_first_argument_that_differs() -> None:
    actions = [{"name": "book", "kwargs": {"bags": 0, "pay": [{"id": "cert", "amount": 5}], "cabin": "economy"}}]
    params = {"mode": "exact", "expectedFrom": {"obs": "$trace", "path": "metadata.task.actions"}}
    made = agent_trace([("book", {"bags": 1, "pay": [{"id": "cert", "amount": 55}], "cabin": "economy"})],
                       metadata={"task": {"actions": actions}})
    verdict = _decide("trajectory-match", {**params, "compareArgs": "exact"}, made)
    assert verdict.result == "fail" and "got other arguments (bags: expected 0, got 1)" in verdict.critique
    fixed = agent_trace([("book", {"bags": 0, "pay": [{"id": "cert", "amount": 55}], "cabin": "economy",
                                   "note": "x"})], metadata={"task": {"actions": actions}})
    verdict = _decide("trajectory-match", {**params, "compareArgs": "exact"}, fixed)
    assert "(pay[0].amount: expected 5, got 55)" in verdict.critique
    extra = agent_trace([("book", {**actions[0]["kwargs"], "note": "x"})], metadata={"task": {"actions": actions}})
    assert "(note: not expected, got \"x\")" in _decide("trajectory-match", {**params, "compareArgs": "exact"},
                                                          extra).critique
    assert _decide("trajectory-match", {**params, "compareArgs": "subset"}, extra).result == "pass"


def test_a_refused_write_can_be_left_out_so_a_retried_write_is_one_write() -> None:
    trace = agent_trace([("book", {"amount": 299}), ("book", {"amount": 375})])
    refused = trace.observations[2].model_copy(update={"output": "Error: payment amount does not add up"})
    trace = trace.model_copy(update={"observations": [*trace.observations[:2], refused, *trace.observations[3:]]})
    params = {"mode": "exact", "expected": [{"tool": "book", "args": {"equals": {"amount": 375}}}]}
    assert _decide("trajectory-match", params, trace).result == "fail"
    assert _decide("trajectory-match", {**params, "skipFailed": True}, trace).result == "pass"


def test_argument_correct_by_values_which_calls_and_required() -> None:
    two = agent_trace([("issue_refund", {"amount": 20}), ("issue_refund", {"amount": 500})])
    small = {"tool": "issue_refund", "expected": {"matches": {"amount": r"^\d{1,2}$"}}}
    assert _decide("argument-correct", small, two).result == "fail"
    assert _decide("argument-correct", {**small, "expected": {"subset": {"amount": 20}}, "calls": "first"},
                   two).result == "pass"
    assert _decide("argument-correct", {**small, "expected": {"subset": {"amount": 20}}, "calls": "last"},
                   two).result == "fail"
    absent = agent_trace([REFUND[0]])
    assert _decide("argument-correct", small, absent).result == "pass"
    assert _decide("argument-correct", {**small, "required": True}, absent).result == "fail"


def test_step_budget_is_uncertain_where_the_trace_does_not_record_what_it_measures() -> None:
    bare = agent_trace(REFUND, timed=False, usage=False)
    seconds = _decide("step-budget", {"maxSeconds": 60}, bare)
    assert seconds.result == "uncertain" and "no start or end times" in seconds.critique
    tokens = _decide("step-budget", {"maxTokens": 10_000}, bare)
    assert tokens.result == "uncertain" and "0 of 4 model call(s)" in tokens.critique
    # a budget exceeded is a fail even when another could not be measured
    assert _decide("step-budget", {"maxToolCalls": 2, "maxSeconds": 60}, bare).result == "fail"
    timed = _decide("step-budget", {"maxSeconds": 6.5}, GOOD)  # 09:00:00 to 09:00:06 (last generation)
    assert timed.result == "pass" and "seconds 6 of at most 6.5" in timed.critique
    assert _decide("step-budget", {"maxSeconds": 5.9}, GOOD).result == "fail"


def test_a_model_call_seen_by_two_instrumentations_is_counted_once() -> None:
    usage = {"input": 100, "output": 20, "total": 120}
    rows = [{"id": "a", "type": "AGENT", "name": "agent"},
            {"id": "w1", "type": "GENERATION", "name": "call_llm", "parentId": "a", "usage": usage},
            {"id": "s1", "type": "SPAN", "name": "http", "parentId": "w1"},
            {"id": "g1", "type": "GENERATION", "name": "openai.chat", "parentId": "s1", "usage": usage},
            {"id": "w2", "type": "GENERATION", "name": "call_llm", "parentId": "a", "usage": usage},
            {"id": "g2", "type": "GENERATION", "name": "openai.chat", "parentId": "w2", "usage": usage}]
    folded = [dict(r, usage=None) if r["name"] == "call_llm" else r for r in rows]   # as the importers write it
    for observations in (rows, folded):
        trace = Trace.model_validate({"id": "k", "observations": observations})
        verdict = _decide("step-budget", {"maxModelCalls": 2, "maxTokens": 240}, trace)
        assert verdict.result == "pass" and "model calls 2 of at most 2; tokens 240 of at most 240" in verdict.critique


def test_no_loop_counts_only_identical_calls_in_a_row() -> None:
    retried = agent_trace([REFUND[1], REFUND[1]])
    assert _decide("no-loop", {}, retried).result == "pass"  # one retry is not a loop (default K = 2)
    assert _decide("no-loop", {"maxRepeats": 1}, retried).result == "fail"
    other_args = agent_trace([REFUND[1], ("order_lookup", {"order_id": "ORD-2026-000002"}), REFUND[1]])
    assert _decide("no-loop", {"maxRepeats": 1}, other_args).result == "pass"
    apart = agent_trace([REFUND[1], REFUND[0], REFUND[1]])
    assert _decide("no-loop", {"maxRepeats": 1}, apart).result == "pass"
    looped = agent_trace([REFUND[0], REFUND[0], REFUND[0]])
    assert _decide("no-loop", {"maxRepeats": 2, "tool": "order_lookup"}, looped).result == "pass"
    loop = _decide("no-loop", {"maxRepeats": 2, "tool": "kb_search"}, looped)
    assert loop.result == "fail" and "3 times in a row" in loop.critique
    polled = looped.model_copy(update={"observations": [
        o.model_copy(update={"output": f"line {i}"}) if o.type == "TOOL" else o for i, o in enumerate(looped.observations)]})
    assert _decide("no-loop", {"maxRepeats": 2, "sameOutput": True}, polled).result == "pass"   # new output: polling
    assert _decide("no-loop", {"maxRepeats": 2, "sameOutput": True}, looped).result == "fail"   # same output: stuck


def test_tools_under_another_type_are_read_when_types_says_so() -> None:
    spans = agent_trace(REFUND, tool_type="SPAN")
    params = {"expected": ["kb_search", "order_lookup", "issue_refund"]}
    assert _decide("trajectory-match", params, spans).result == "fail"
    assert _decide("trajectory-match", {**params, "types": ["SPAN"]}, spans).result == "pass"


@pytest.mark.parametrize(("primitive", "params", "where"), [
    ("tool-called", {}, "check.params"),
    ("tool-called", {"tool": "x", "args": {"like": {}}}, "check.params.args"),
    ("tool-called", {"tool": "x", "args": {"matches": {"a": "("}}}, "check.params.args.matches.a"),
    ("tool-called", {"tool": "x", "min": 3, "max": 1}, "check.params"),
    ("trajectory-match", {"expected": ["a"], "mode": "fuzzy"}, "check.params.mode"),
    ("trajectory-match", {}, "check.params"),
    ("trajectory-match", {"expected": [{"tool": "a", "when": 1}]}, "check.params.expected[0]"),
    ("argument-correct", {"tool": "x"}, "check.params"),
    ("argument-correct", {"tool": "x", "schema": {"type": "nope"}}, "check.params.schema"),
    ("step-budget", {}, "check.params"),
    ("step-budget", {"maxToolCalls": 1, "types": ["TOOLS"]}, "check.params.types"),
    ("no-loop", {"maxRepeats": 0}, "check.params.maxRepeats"),
])
def test_a_bad_configuration_names_its_place(primitive: str, params: dict[str, Any], where: str) -> None:
    with pytest.raises(CheckError) as caught:
        build_check("c", primitive, params)
    assert caught.value.path == where, caught.value
