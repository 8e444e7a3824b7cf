"""What notebook 03 reports, decided in the package: expected flow given or inferred, dispatch tools, truth."""

from __future__ import annotations

from evalkit.contracts.flow import ExpectedEdge, ExpectedFlow
from evalkit.flow import ANY_MISSING, DROPPED, dispatch_tools, flow_story
from tests.flow.test_summary import support_trace

EXPECTED = ExpectedFlow(edges=[ExpectedEdge(from_tool="lookup", to_tool="reply")], dispatch_tool_names=[],
                        expected_ui_slots=[])


def _traces():
    kinds = ["ok", "ok", "ok", "dropped", "failed"]
    return [support_trace(f"t{i}", kind, metadata={"injected_failures": ["dropped_tool_result"]}
                          if kind == "dropped" else {"injected_failures": []}) for i, kind in enumerate(kinds)]


def _metrics(story):
    return {name: (value, note) for name, value, note in story.metrics}


def test_a_given_expected_flow_is_used_and_said_to_be_given():
    story = flow_story(_traces(), expected=EXPECTED)
    assert story.given and story.expected is EXPECTED
    assert _metrics(story)["expected flow"] == ("given", "1 edges")
    assert story.flagged == ["t3", "t4"] and story.dropped == ["t3"]
    assert not any("names no expected flow" in f for f in story.findings)
    assert "inferred from the traces" not in story.conclusion()


def test_without_an_expected_flow_the_modal_one_is_inferred_and_the_report_says_what_that_means():
    story = flow_story(_traces())
    assert not story.given
    assert _metrics(story)["expected flow"][0] == "inferred"
    assert any('means "unlike most traces", not "wrong"' in f for f in story.findings)
    assert "inferred from the traces" in story.conclusion()


def test_known_failures_score_the_flagged_traces():
    story = flow_story(_traces(), expected=EXPECTED)
    truth = story.truth[ANY_MISSING]
    assert (truth.truth, truth.true_positives, truth.false_positives) == (1, 1, 1)
    assert story.truth[DROPPED].false_positives == 0
    assert _metrics(story)["dropped_tool_result recall"][0] == 1.0
    assert any(f.startswith("Against injected_failures: 1 of 1 traces") for f in story.findings)


def test_traces_without_known_failures_skip_the_truth_check_and_say_so():
    story = flow_story(_traces(), expected=EXPECTED, truth_key="known")
    assert story.truth is None
    assert "dropped_tool_result recall" not in _metrics(story)
    assert any(f.startswith("Ground-truth check skipped: no trace lists known failures under metadata.known")
               for f in story.findings)


def test_one_trace_says_its_variance_is_not_measured():
    story = flow_story(_traces()[:1], expected=EXPECTED)
    assert "Only 1 trace: how much the flow varies is not measured (n=1)." in story.findings
    assert not any(f.startswith("A median trace") for f in story.findings)
    # the one trace carries no known failure: recall is no number, said so rather than a crash
    assert any("are flagged (recall n/a)" in f for f in story.findings)


def test_terminal_outputs_are_counted_only_on_received_text():
    assert "terminal outputs" in _metrics(flow_story(_traces(), expected=EXPECTED))
    assert "terminal outputs" not in _metrics(flow_story(_traces(), expected=EXPECTED, semantics="mutagent"))


def test_dispatch_tools_are_those_the_flow_names_and_those_named_besides():
    flow = ExpectedFlow(edges=[], dispatch_tool_names=["delegate"], expected_ui_slots=[])
    assert dispatch_tools(flow, ["spawn"]) == {"delegate", "spawn"}
    assert dispatch_tools(None, ["spawn"]) == {"spawn"}
    assert dispatch_tools(flow) == {"delegate"}
