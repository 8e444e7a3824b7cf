"""The overview and error analysis on traces that lack timing, tokens, levels and an ``intent`` field."""

import pytest

from evalkit.contracts.summary import NotebookSummary
from evalkit.pipeline import run_subject

from .chat_subject import CHANNELS, write_chat_subject
from .conftest import RUN_AT


@pytest.fixture(scope="module")
def chat_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chat")
    subject = write_chat_subject(folder / "subject")
    out = folder / "run"
    manifest = run_subject(subject, out, at=RUN_AT)
    assert [n.status for n in manifest.notebooks] == ["ok", "ok"], manifest.notebooks
    return out


def _summary(run, name) -> NotebookSummary:
    return NotebookSummary.model_validate_json((run / name / "summary.json").read_text())


@pytest.mark.slow
def test_overview_says_what_the_traces_lack_and_draws_nothing_blank(chat_run):
    summary = _summary(chat_run, "00_overview")
    metrics = {m.name: m.value for m in summary.metrics}
    assert metrics == {"traces": len(CHANNELS), "observations": 3 * len(CHANNELS), "tool calls": len(CHANNELS)}
    assert {
        "No observation has start and end times: latency and trace duration are left out.",
        "No generation records token usage: token counts are left out.",
        "No observation has a level (DEFAULT, WARNING, ERROR): errors cannot be counted from the traces alone.",
    } <= set(summary.findings)
    assert not any("ERROR-level" in f for f in summary.findings)  # no "0.0% of traces logged errors"
    assert {c.title for c in summary.charts} == {"Observations per type", "Tool calls"}
    tables = {t.title: t for t in summary.tables}
    assert "Slowest traces" not in tables and "Errors" not in tables
    assert tables["Longest traces (most observations)"].columns == ["trace_id", "observations", "tool_calls"]
    assert "Nothing recorded here (errors, timing)" in summary.conclusion


@pytest.mark.slow
def test_overview_report_shows_no_zero_tokens_and_no_unknown_durations(chat_run):
    html = (chat_run / "index.html").read_text()
    overview = html.split('<section id="00_overview">', 1)[1].split("</section>", 1)[0]
    assert "n/a" not in overview and "0.0" not in overview and "median trace duration" not in overview


@pytest.mark.slow
def test_error_analysis_without_the_breakdown_field_skips_it_with_a_note(chat_run):
    summary = _summary(chat_run, "01_error_analysis")
    (note,) = [f for f in summary.findings if "metadata field 'intent'" in f]
    assert "channel (8)" in note and "parameters: {01_error_analysis: {by: FIELD}}" in note
    assert not any(c.title.startswith("Failure rate by") for c in summary.charts)
    assert "Failure rate per mode" in {c.title for c in summary.charts}
    (drawn,) = [t for t in summary.tables if t.title.startswith("Traces drawn for review")]
    assert "intent" not in drawn.columns and "tools" in drawn.columns
