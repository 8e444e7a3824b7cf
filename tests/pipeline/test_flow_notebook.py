"""The flow-graph notebook on a freshly generated sample subject: it finds the injected dropped tool results."""

import json
import subprocess
import sys

import pytest
import yaml

from evalkit.contracts.summary import NotebookSummary
from evalkit.pipeline import run_subject
from evalkit.traces import load

NAME = "03_flow_graph"
RUN_AT = "2026-12-01T00:00:00Z"


def _with_flow_notebook(subject_file, *, expected_flow=True):
    """The generated subject lists only some notebooks: add this one (and maybe drop the expected flow)."""
    subject = yaml.safe_load(subject_file.read_text())
    subject["notebooks"] = [n for n in subject["notebooks"] if n != NAME] + [NAME]
    if not expected_flow:
        del subject["expected_flow"]
    subject_file.write_text(yaml.safe_dump(subject, sort_keys=False))
    return subject_file


def _run(subject_file, out) -> NotebookSummary:
    manifest = run_subject(subject_file, out, only=[NAME], at=RUN_AT)
    assert [n.status for n in manifest.notebooks] == ["ok"], manifest.notebooks
    return NotebookSummary.model_validate_json((out / NAME / "summary.json").read_text())


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    out = tmp_path_factory.mktemp("sample")
    subprocess.run([sys.executable, "-m", "evalkit.sample_subject", "--out", str(out)], check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def dropped(sample):
    """The traces the sample's generator dropped a tool result from (its ground truth)."""
    return {t.id for t in load(sample / "traces.jsonl")
            if "dropped_tool_result" in t.metadata["injected_failures"]}


@pytest.fixture(scope="module")
def flow_run(sample, tmp_path_factory):
    out = tmp_path_factory.mktemp("flow-run")
    return out, _run(_with_flow_notebook(sample / "subject.yaml"), out / "run")


def _table(summary: NotebookSummary, title: str) -> list[dict]:
    (table,) = [t for t in summary.tables if t.title == title]
    return [dict(zip(table.columns, row, strict=True)) for row in table.rows]


def _metrics(summary: NotebookSummary) -> dict:
    return {m.name: m.value for m in summary.metrics}


@pytest.mark.slow
def test_every_dropped_tool_result_is_a_missing_expected_edge(flow_run, dropped):
    _, summary = flow_run
    assert len(dropped) == 30
    rows = _table(summary, "Traces missing an applicable expected edge")
    flagged = {r["trace_id"] for r in rows}
    assert dropped <= flagged  # recall 1.0
    # The flagged traces that are not in the ground truth are the ones whose producer failed: no value
    # to pass on. Every trace that had the value and dropped it is a true positive.
    value_dropped = {r["trace_id"] for r in rows if r["dropped"] > 0}
    assert value_dropped == dropped
    assert all(r["cause"] == "producer gave no value" for r in rows if r["trace_id"] not in dropped)
    metrics = _metrics(summary)
    assert metrics["dropped_tool_result recall"] == 1.0
    assert metrics["false positives"] == len(flagged - dropped)
    assert metrics["false positives (value not passed on)"] == 0
    assert metrics["traces missing an applicable expected edge"] == len(flagged)
    (check,) = [r for r in _table(summary, "Flagged traces against injected_failures = dropped_tool_result")
                if r["flagged by"] == "any missing edge"]
    assert (check["true positives"], check["false positives"], check["missed"]) == (30, len(flagged - dropped), "")


@pytest.mark.slow
def test_the_report_holds_the_graph_tables_and_charts(flow_run, sample):
    out, summary = flow_run
    metrics = _metrics(summary)
    assert metrics["traces"] == 300 and metrics["expected flow"] == "given"
    assert metrics["edges"] > 0 and metrics["unthreaded outputs"] > 0
    assert {c.title for c in summary.charts} == {
        "Aggregate flow: traces (of 300) in which a value of one name reached another",
        "Expected edges: shown, missing, not applicable",
        "Share of the 300 traces having each named edge",
        "Distance of each of the 300 traces from the modal flow",
    }
    unthreaded = {(r["name"], r["slot"]): r for r in _table(summary, "Unthreaded outputs by producer and slot")}
    assert unthreaded["order_lookup", "items"]["traces"] + unthreaded["kb_search", "articles"]["traces"] == 30
    # The answer is the trace's end product: terminal, not a value that was not passed on.
    assert ("respond", "answer") not in unthreaded
    terminal = {(r["name"], r["slot"]): r for r in _table(summary, "Terminal outputs (end products) by producer and slot")}
    assert terminal["respond", "answer"]["traces"] == 300
    assert metrics["terminal outputs"] > 0
    examples = {r["example"]: r for r in _table(summary, "Traces drawn in full in the notebook")}
    assert examples["clean"]["missing"] == "" and examples["dropped"]["missing"]
    for label in examples:
        assert (out / "run" / NAME / f"flow-{label.replace(' ', '-')}.svg").is_file()
    assert (out / "run" / NAME / "flow-aggregate.svg").is_file()
    assert "<svg" in (out / "run" / NAME / "flow-aggregate.svg").read_text()
    assert any("recall 1.00" in f for f in summary.findings)
    # The drawings are in the report itself, as images: the report stays one self-contained file.
    assert [f.path for f in summary.figures] == ["flow-aggregate.svg", *(f"flow-{label.replace(' ', '-')}.svg"
                                                                          for label in examples)]
    html = (out / "run" / "index.html").read_text()
    assert html.count('<img src="data:image/svg+xml;base64,') == len(summary.figures)
    assert "Aggregate flow graph" in html


@pytest.mark.slow
def test_without_an_expected_flow_the_modal_flow_is_inferred(sample, dropped, tmp_path):
    subject_dir = tmp_path / "subject"
    subject_dir.mkdir()
    for path in sample.iterdir():
        (subject_dir / path.name).write_bytes(path.read_bytes())
    summary = _run(_with_flow_notebook(subject_dir / "subject.yaml", expected_flow=False), tmp_path / "run")
    assert _metrics(summary)["expected flow"] == "inferred"
    assert any("names no expected flow" in f for f in summary.findings)
    # The tool results the agent usually threads are in the modal flow, so their drops still show.
    flagged = {r["trace_id"] for r in _table(summary, "Traces missing an applicable expected edge")}
    assert dropped <= flagged


# --- chat traces without ground truth or expected flow ----------------------------------------------

def _chat_trace(trace_id: str, *, with_tool: bool) -> dict:
    """A leasing-assistant conversation as the chat importer writes it: each model call's input is the
    conversation so far; the tool's result is JSON text, read into an object at import."""
    system = {"role": "system", "content": "You are Emma, a leasing assistant at The Riverside."}
    user = {"role": "user", "content": "Can I tour tomorrow at 11?"}
    first = 'Let me check.\nOne "moment" please.'  # a newline and quotes: escaped in JSON text
    slots = '{"available": [{"date": "01/21/2025", "time": "11:00 AM"}]}'
    obs = [{"id": "g0", "type": "GENERATION", "name": "assistant", "input": [system, user],
            "output": {"role": "assistant", "content": first}}]
    if with_tool:
        obs += [{"id": "t1", "type": "TOOL", "name": "get_tour_slots", "output": json.loads(slots)},
                {"id": "g2", "type": "GENERATION", "name": "assistant",
                 "input": [system, user, {"role": "assistant", "content": first}, {"role": "tool", "content": slots}],
                 "output": {"role": "assistant", "content": "11 AM tomorrow is free: shall I book it?"}}]
    return {"id": trace_id, "observations": obs}


def _chat_subject(tmp_path, traces):
    (tmp_path / "traces.jsonl").write_text("".join(json.dumps(t) + "\n" for t in traces))
    subject = {"name": "leasing-chat", "traces": "traces.jsonl", "notebooks": [NAME]}
    (tmp_path / "subject.yaml").write_text(yaml.safe_dump(subject))
    return tmp_path / "subject.yaml"


@pytest.mark.slow
def test_on_chat_traces_tool_results_thread_and_answers_are_end_products(tmp_path):
    traces = [_chat_trace(f"c{i}", with_tool=i % 3 != 0) for i in range(6)]
    summary = _run(_chat_subject(tmp_path, traces), tmp_path / "run")
    metrics = _metrics(summary)
    assert metrics["unthreaded outputs"] == 0  # nothing was dropped: every reply and result reached the next call
    assert metrics["terminal outputs"] == 6  # each trace's last reply
    edges = {(r["from"], r["to"]): r["traces"] for r in _table(summary, "Aggregate edges")}
    assert edges["get_tour_slots", "assistant"] == 4 and edges["assistant", "assistant"] == 4
    assert any(f.startswith("Ground-truth check skipped: no trace lists known failures under "
                            "metadata.injected_failures") for f in summary.findings)
    assert not any("usually passed on" in f for f in summary.findings)
    html = (tmp_path / "run" / "index.html").read_text()
    assert "Ground-truth check skipped" in html and html.count('<img src="data:image/svg+xml;base64,') >= 1


@pytest.mark.slow
def test_one_trace_says_there_is_no_variance_to_measure(tmp_path):
    summary = _run(_chat_subject(tmp_path, [_chat_trace("only", with_tool=False)]), tmp_path / "run")
    assert _metrics(summary)["traces"] == 1
    assert any("(n=1)" in f for f in summary.findings)
    assert not any(c.title.startswith("Share of") for c in summary.charts)
