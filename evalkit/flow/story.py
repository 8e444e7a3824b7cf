"""What notebook 03 shows, computed here: the flows, the expected flow, the gaps, the truth check, the variance,
and every number and sentence the notebook reports about them.

The notebook draws; this module decides (which expected flow, which dispatch tools, what is said when the
flow was inferred, when there is one trace, when no trace carries known failures), so the decisions are
unit-tested without papermill. ``evalkit flow build`` takes its dispatch tools from :func:`dispatch_tools`
too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.contracts.flow import ExpectedFlow
from evalkit.contracts.trace import Trace
from evalkit.flow.build import Flow, build_flow_graph
from evalkit.flow.defaults import DEFAULT_MIN_THREAD_LEN, Semantics
from evalkit.flow.expected import infer_expected_flow
from evalkit.flow.findings import (
    DROPPED,
    FlowGaps,
    TruthCheck,
    check_against_truth,
    dropped_candidates_finding,
    unthreaded_frame,
)
from evalkit.flow.findings import flow_gaps as diff_flows
from evalkit.flow.named import DEFAULT_MIN_SUPPORT
from evalkit.flow.variance import FlowVariance, flow_variance

ANY_MISSING = "any missing edge"
"""The truth check of every trace missing an applicable expected edge (beside the :data:`DROPPED` one)."""


def dispatch_tools(expected: ExpectedFlow | None, named: Iterable[str] = ()) -> frozenset[str]:
    """The tools whose calls start a sub-agent: those the expected flow names and those named besides."""
    return frozenset(named) | frozenset(expected.dispatch_tool_names if expected else ())


@dataclass(frozen=True)
class FlowStory:
    """Flow graphs of a subject's traces and what they show against the expected flow."""

    flows: list[Flow]
    expected: ExpectedFlow
    given: bool
    """True when the subject named the expected flow; False when it was inferred from the traces."""
    gaps: FlowGaps
    truth: dict[str, TruthCheck] | None
    """Flagged traces against the traces' known failures (:data:`ANY_MISSING` and :data:`DROPPED`), or None
    when no trace lists any under the truth key."""
    variance: FlowVariance
    semantics: str
    min_thread_len: int
    min_support: float
    truth_key: str
    truth_label: str
    metrics: list[tuple[str, Any, str | None]] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)

    @property
    def flagged(self) -> list[str]:
        """Traces missing an expected edge that applies to them."""
        return self.gaps.flagged()

    @property
    def dropped(self) -> list[str]:
        """Flagged traces whose producer had the value and did not pass it on."""
        return self.gaps.flagged(dropped_only=True)

    def conclusion(self) -> str:
        """The closing paragraph: what to read first, and what the inferred flow cannot tell."""
        return ("Read the traces that did not pass on a value they had first: that is dropped context, a tool "
                "result or sub-agent output the agent had and never used. Missing edges whose producer gave no "
                "value point to a failing tool rather than to the agent's threading; look at them with the "
                "errors in the overview."
                + ("" if self.given else " The expected flow was inferred from the traces; write the subject's "
                   "expected flow to check against what the agent should do rather than what it usually does."))


def _metrics(story: FlowStory) -> list[tuple[str, Any, str | None]]:
    flows, expected = story.flows, story.expected
    rows: list[tuple[str, Any, str | None]] = [
        ("traces", len(flows), None),
        ("edges", sum(f.edge_count for f in flows),
         f"values of {story.min_thread_len}+ characters followed, matched on the {story.semantics} text"),
        ("unthreaded outputs", sum(len(f.unthreaded_outputs) for f in flows),
         "reached no later observation" + ("" if story.semantics == "mutagent" else " though one took input")),
    ]
    if story.semantics != "mutagent":
        rows.append(("terminal outputs", sum(len(f.terminal_outputs) for f in flows),
                     "end products: nothing later took input, or the trace's own output"))
    rows += [
        ("expected flow", "given" if story.given else "inferred",
         f"{len(expected.edges)} edges" + ("" if story.given else f", modal at {story.min_support:.0%} support")),
        ("traces missing an applicable expected edge", len(story.flagged),
         f"{len(story.dropped)} with a value not passed on"),
    ]
    if story.truth is not None:
        truth, label = story.truth[ANY_MISSING], story.truth_label
        rows += [(f"{label} recall", truth.recall, f"{truth.true_positives} of {truth.truth} traces flagged"),
                 ("false positives", truth.false_positives, f"flagged traces without {label}"),
                 (f"false positives ({DROPPED})", story.truth[DROPPED].false_positives, None)]
    return rows


def _findings(story: FlowStory) -> list[str]:
    flows, flagged, dropped, truth = story.flows, story.flagged, story.dropped, story.truth
    out = []
    if not story.given:
        out.append(f"The subject names no expected flow: the {len(story.expected.edges)} edges that at least "
                   f"{story.min_support:.0%} of traces show were taken as expected, so a missing edge here means "
                   "\"unlike most traces\", not \"wrong\".")
    unthreaded = unthreaded_frame(flows)
    if not unthreaded.height:
        out.append("Every followed output reached a later observation or was an end product: no unthreaded "
                   "outputs.")
    if truth is None:
        out.append(f"Ground-truth check skipped: no trace lists known failures under metadata.{story.truth_key}, "
                   "so the flagged traces are not scored against anything.")
    if len(flows) < 2:
        out.append(f"Only {len(flows)} trace: how much the flow varies is not measured (n={len(flows)}).")
    candidates = dropped_candidates_finding(unthreaded)
    if candidates:
        out.append(candidates)
    if flagged:
        out.append(f"{len(flagged)} of {len(flows)} traces miss an expected edge that applies to them: "
                   f"{len(dropped)} did not pass on a value they had; the other {len(flagged) - len(dropped)} miss "
                   "only edges whose producer gave no value or whose value could not be followed to the consumer.")
    else:
        out.append("The trace misses no expected edge that applies to it." if len(flows) == 1 else
                   f"None of the {len(flows)} traces misses an expected edge that applies to it.")
    if truth is not None:
        any_missing = truth[ANY_MISSING]
        # no trace carries the failure: a recall of nothing is no number (the notebook stopped on it)
        recall = "n/a" if any_missing.recall is None else f"{any_missing.recall:.2f}"
        out.append(f"Against {story.truth_key}: {any_missing.true_positives} of {any_missing.truth} traces with "
                   f"{story.truth_label} are flagged (recall {recall}), with "
                   f"{any_missing.false_positives} false positives; counting only values not passed on, "
                   f"{truth[DROPPED].false_positives} false positives.")
    if len(flows) >= 2:
        distances = story.variance.trace_frame()
        out.append(f"A median trace is {distances['distance'].median():.2f} from the modal flow "
                   f"({len(story.variance.modal)} modal edges).")
    return out


def flow_story(traces: Sequence[Trace], *, expected: ExpectedFlow | None = None,
               dispatch_tool_names: Iterable[str] = (), min_support: float = DEFAULT_MIN_SUPPORT,
               min_thread_len: int = DEFAULT_MIN_THREAD_LEN, semantics: Semantics = "received",
               truth_key: str = "injected_failures", truth_label: str = "dropped_tool_result") -> FlowStory:
    """Build every trace's flow graph and find what notebook 03 reports.

    Args:
        traces: the subject's traces.
        expected: the subject's expected flow; None infers the modal flow from the traces.
        dispatch_tool_names: tools that start a sub-agent besides those the expected flow names.
        min_support: share of traces an edge needs to be modal (and inferred as expected).
        min_thread_len: values shorter than this are not followed.
        semantics: ``received`` (the text each consumer received) or ``mutagent`` (the reference method's).
        truth_key: the metadata list of known failures per trace, when the traces carry one.
        truth_label: the known failure that missing edges should find.
    """
    dispatch = dispatch_tools(expected, dispatch_tool_names)
    flows = [build_flow_graph(t, dispatch_tool_names=dispatch, min_thread_len=min_thread_len, semantics=semantics)
             for t in traces]
    modal = expected or infer_expected_flow(flows, min_support=min_support)
    gaps = diff_flows(flows, modal)
    any_missing = check_against_truth(gaps.flagged(), traces, key=truth_key, label=truth_label)
    truth = None if any_missing is None else {
        ANY_MISSING: any_missing,
        DROPPED: check_against_truth(gaps.flagged(dropped_only=True), traces, key=truth_key, label=truth_label)}
    story = FlowStory(flows=flows, expected=modal, given=expected is not None, gaps=gaps, truth=truth,
                      variance=flow_variance(flows, min_support=min_support), semantics=semantics,
                      min_thread_len=min_thread_len, min_support=min_support, truth_key=truth_key,
                      truth_label=truth_label)
    story.metrics.extend(_metrics(story))
    story.findings.extend(_findings(story))
    return story
