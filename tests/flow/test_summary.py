import pytest

from evalkit.contracts.flow import ExpectedEdge, ExpectedFlow
from evalkit.contracts.trace import Trace
from evalkit.flow import aggregate_graph, build_flow_graph
from evalkit.flow.findings import (
    DROPPED,
    NO_VALUE,
    NOT_FOLLOWED,
    aggregate_edge_frame,
    check_against_truth,
    dropped_candidates,
    dropped_candidates_finding,
    edge_text,
    example_traces,
    flow_gaps,
    name_order,
    unthreaded_frame,
)

ORDER = "order A-2291-XK shipped"
NOTE = "note from the audit trail"


def make_trace(trace_id, *observations, metadata=None):
    return Trace.model_validate({"id": trace_id, "metadata": metadata, "observations": [
        {"id": f"o{i}", "type": "TOOL", **obs} for i, obs in enumerate(observations)]})


def support_trace(trace_id, kind, metadata=None):
    """lookup -> reply; `dropped`: the reply never gets the lookup's order; `failed`: the lookup
    outputs nothing; `no_lookup`: there is no lookup at all."""
    lookup = {"name": "lookup", "output": {"order": ORDER, "note": NOTE}}
    if kind == "failed":
        lookup = {"name": "lookup", "level": "ERROR", "statusMessage": "timed out"}
    reply = {"type": "GENERATION", "name": "reply",
             "input": {"order": "none" if kind == "dropped" else ORDER}, "output": {"answer": "an answer at last"}}
    obs = [reply] if kind == "no_lookup" else [lookup, reply]
    return make_trace(trace_id, *obs, metadata=metadata)


EXPECTED = ExpectedFlow(dispatch_tool_names=[], expected_ui_slots=[], edges=[
    ExpectedEdge(from_tool="lookup", to_tool="reply", slot="order"),
    ExpectedEdge(from_tool="lookup", to_tool="reply"),
])


@pytest.fixture
def flows():
    kinds = {"t1": "clean", "t2": "dropped", "t3": "failed", "t4": "no_lookup", "t5": "dropped"}
    return [build_flow_graph(support_trace(t, k)) for t, k in kinds.items()]


def test_missing_edges_are_told_apart_by_whether_the_value_existed(flows):
    gaps = flow_gaps(flows, EXPECTED)
    assert [d.trace_id for d in gaps.diffs] == ["t1", "t2", "t3", "t4", "t5"]
    assert [g.trace_id for g in gaps.gaps] == ["t2", "t3", "t5"]
    by_id = {g.trace_id: g for g in gaps.gaps}
    assert [m.produced for m in by_id["t2"].missing] == [True, True] and by_id["t2"].dropped
    assert [m.cause for m in by_id["t3"].missing] == [NO_VALUE, NO_VALUE] and not by_id["t3"].dropped
    assert gaps.flagged() == ["t2", "t3", "t5"]
    assert gaps.flagged(dropped_only=True) == ["t2", "t5"]


def test_gap_and_coverage_frames(flows):
    gaps = flow_gaps(flows, EXPECTED)
    rows = gaps.gap_frame().to_dicts()
    assert rows[0] == {"trace_id": "t2", "missing": "lookup → reply [order]; lookup → reply", "dropped": 2,
                       "no_value": 0, "not_comparable": 0, "cause": DROPPED}
    assert rows[1]["cause"] == NO_VALUE and rows[1]["no_value"] == 2
    coverage = {(r["edge"], r["outcome"]): r["traces"] for r in gaps.coverage_frame().to_dicts()}
    assert coverage == {
        ("lookup → reply [order]", "shown"): 1, ("lookup → reply [order]", DROPPED): 2,
        ("lookup → reply [order]", NO_VALUE): 1, ("lookup → reply [order]", "not applicable"): 1,
        ("lookup → reply", "shown"): 1, ("lookup → reply", DROPPED): 2,
        ("lookup → reply", NO_VALUE): 1, ("lookup → reply", "not applicable"): 1,
        ("lookup → reply [order]", NOT_FOLLOWED): 0, ("lookup → reply", NOT_FOLLOWED): 0,
    }


def test_a_gap_mixing_both_causes_names_both():
    # The lookup output the note but not the order: the order edge had no value, the any-slot edge did.
    trace = make_trace("t", {"name": "lookup", "output": {"note": NOTE}},
                       {"type": "GENERATION", "name": "reply", "input": "nothing here"})
    (gap,) = flow_gaps([build_flow_graph(trace)], EXPECTED).gaps
    assert [m.produced for m in gap.missing] == [False, True]
    assert flow_gaps([build_flow_graph(trace)], EXPECTED).gap_frame()["cause"].to_list() == [f"{DROPPED} and {NO_VALUE}"]


def test_edge_text():
    assert edge_text(EXPECTED.edges[0]) == "lookup → reply [order]"
    assert edge_text(EXPECTED.edges[1]) == "lookup → reply"


def test_unthreaded_outputs_by_name_and_slot_with_the_share_of_traces_producing_them(flows):
    # The reference method counts the final answer (nothing after it) as a value not passed on.
    mutagent = [build_flow_graph(support_trace(f.trace_id, k), semantics="mutagent")
                for f, k in zip(flows, ["clean", "dropped", "failed", "no_lookup", "dropped"], strict=True)]
    answer = {"name": "reply", "slot": "answer", "outputs": 5, "traces": 5, "produced": 5, "share": 1.0}
    rest = [
        {"name": "lookup", "slot": "note", "outputs": 3, "traces": 3, "produced": 3, "share": 1.0},
        {"name": "lookup", "slot": "order", "outputs": 2, "traces": 2, "produced": 3, "share": pytest.approx(2 / 3)},
    ]
    assert unthreaded_frame(mutagent).to_dicts() == [answer, *rest]
    # By default it is terminal, an end product: counted apart, not among the dropped values.
    assert unthreaded_frame(flows).to_dicts() == rest
    assert unthreaded_frame(flows, terminal=True).to_dicts() == [answer]
    assert unthreaded_frame([]).height == 0


def test_only_values_usually_passed_on_are_candidate_dropped_context(flows):
    frame = unthreaded_frame(flows)
    assert dropped_candidates(frame).height == 0  # order dropped in 2 of 3: not usually passed on
    assert dropped_candidates(frame, max_share=0.7).to_dicts()[0]["slot"] == "order"
    assert dropped_candidates_finding(frame) is None
    text = dropped_candidates_finding(frame, max_share=0.7)
    assert "lookup [order]" in text and "dropped in 2 of 3 traces" in text and "usually passed on" in text


def test_aggregate_edges_in_time_order(flows):
    g = aggregate_graph(flows)
    assert name_order(g) == ["lookup", "reply"]
    assert aggregate_edge_frame(g).to_dicts() == [
        {"from": "lookup", "to": "reply", "traces": 1, "share": 0.2, "kind": "threaded", "slots": "order (1)"}]
    assert aggregate_edge_frame(aggregate_graph([])).height == 0


def test_example_traces(flows):
    assert example_traces(flows, flow_gaps(flows, EXPECTED)) == {"clean": "t1", "dropped": "t2", "no value": "t3"}
    clean_only = flows[:1]
    assert example_traces(clean_only, flow_gaps(clean_only, EXPECTED)) == {"clean": "t1"}


def test_example_clean_trace_is_the_one_showing_most_expected_edges():
    # t4 has no lookup: no expected edge applies, nothing is missing, and nothing is shown either.
    flows = [build_flow_graph(support_trace("t4", "no_lookup")), build_flow_graph(support_trace("t1", "clean"))]
    assert example_traces(flows, flow_gaps(flows, EXPECTED))["clean"] == "t1"


def test_check_against_truth():
    traces = [support_trace(t, "clean", metadata={"injected": labels}) for t, labels in
              [("a", ["drop"]), ("b", ["drop", "other"]), ("c", []), ("d", ["other"])]]
    check = check_against_truth(["a", "c"], traces, key="injected", label="drop")
    assert (check.truth, check.flagged, check.true_positives, check.false_positives) == (2, 2, 1, 1)
    assert check.missed == ["b"] and check.recall == 0.5 and check.precision == 0.5
    empty = check_against_truth([], traces, key="injected", label="drop")
    assert empty.recall == 0.0 and empty.precision is None
    assert check_against_truth(["a"], traces, key="absent", label="drop") is None
    assert check_against_truth(["a"], [support_trace("x", "clean")], key="injected", label="drop") is None


def test_a_value_too_short_to_follow_or_produced_after_the_consumer_is_not_called_dropped():
    short = make_trace("short", {"name": "lookup", "output": {"order": "ok"}},
                       {"type": "GENERATION", "name": "reply", "input": {"q": "something else entirely"}})
    late = make_trace("late", {"type": "GENERATION", "name": "reply", "input": {"q": "something else entirely"}},
                      {"name": "lookup", "output": {"order": ORDER}},
                      {"name": "audit", "input": {"event": "the call ended here"}})
    expected = ExpectedFlow(dispatch_tool_names=[], expected_ui_slots=[],
                            edges=[ExpectedEdge(from_tool="lookup", to_tool="reply", slot="order")])
    gaps = flow_gaps([build_flow_graph(short), build_flow_graph(late)], expected)
    assert [[m.cause for m in g.missing] for g in gaps.gaps] == [[NOT_FOLLOWED], [NOT_FOLLOWED]]
    assert gaps.flagged(dropped_only=True) == []
    assert gaps.gap_frame()["not_comparable"].to_list() == [1, 1]
