"""The flow-graph notebook on a freshly generated sample subject: it finds the injected dropped tool results."""

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
    subprocess.run([sys.executable, "-m", "evalkit.sample", "--out", str(out)], check=True, capture_output=True)
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


def test_the_report_holds_the_graph_tables_and_charts(flow_run, sample):
    out, summary = flow_run
    metrics = _metrics(summary)
    assert metrics["traces"] == 300 and metrics["expected flow"] == "given"
    assert metrics["edges"] > 0 and metrics["unthreaded outputs"] > 0
    assert {c.title for c in summary.charts} == {
        "Aggregate flow: traces in which a value of one name reached another",
        "Expected edges: shown, missing, not applicable",
        "Share of traces having each named edge",
        "Distance of each trace from the modal flow",
    }
    unthreaded = {(r["name"], r["slot"]): r for r in _table(summary, "Unthreaded outputs by producer and slot")}
    assert unthreaded["order_lookup", "items"]["traces"] + unthreaded["kb_search", "articles"]["traces"] == 30
    assert unthreaded["respond", "answer"]["share"] == 1.0
    examples = {r["example"]: r for r in _table(summary, "Traces drawn in full in the notebook")}
    assert examples["clean"]["missing"] == "" and examples["dropped"]["missing"]
    for label in examples:
        assert (out / "run" / NAME / f"flow-{label.replace(' ', '-')}.svg").is_file()
    assert (out / "run" / NAME / "flow-aggregate.svg").is_file()
    assert "<svg" in (out / "run" / NAME / "flow-aggregate.svg").read_text()
    assert any("recall 1.00" in f for f in summary.findings)
    assert (out / "run" / "index.html").is_file()


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
