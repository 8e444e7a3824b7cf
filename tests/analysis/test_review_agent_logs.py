"""The review page on coding-agent sessions: each history once on the page, thinking folded, never a signature."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.analysis import write_review
from evalkit.analysis.transcript import transcript
from evalkit.traces import load

FIXTURES = Path(__file__).parents[1] / "traces" / "fixtures"


def _claude_session(tmp_path: Path):
    shutil.copytree(FIXTURES / "claude_code", tmp_path / "project")
    (trace,) = load(next((tmp_path / "project").glob("*.jsonl")))
    return trace


def test_reasoning_of_every_agent_log_shape_becomes_the_message_s_thinking(tmp_path):
    said = [m for m in transcript(_claude_session(tmp_path)) if m.get("thinking")]
    assert said[0]["thinking"].startswith("I should look at the test first")
    (codex,) = load(next((FIXTURES / "codex").glob("*.jsonl")))
    assert [m["thinking"] for m in transcript(codex) if m.get("thinking")] == ["**Running the test**"]
    (gemini,) = load(next((FIXTURES / "gemini_cli").glob("*.jsonl")))
    assert [m["role"] for m in transcript(gemini)][:2] == ["user", "assistant"]  # Gemini's "model" reads as such
    (atif,) = load(FIXTURES / "atif" / "trajectory.json")
    assert any(m.get("thinking", "").startswith("The file does not exist yet") for m in transcript(atif))


def test_the_page_holds_each_repeated_history_once(tmp_path):
    trace = _claude_session(tmp_path)
    page = write_review(tmp_path / "review.html", [trace]).read_text()
    assert '"inputRepeats"' in page
    # The trace input, the transcript, and the first two calls' inputs (a one-message history is not worth a
    # reference); the four later calls that repeat it hold it by reference.
    assert page.count("The pagination test fails: find out why and fix it.") == 4
    assert len(page) < len(json.dumps(trace.to_json_obj())) + 150_000


@pytest.mark.slow
def test_thinking_is_folded_and_a_repeated_history_opens_whole(offline_page, tmp_path):
    html = write_review(tmp_path / "review.html", [_claude_session(tmp_path)])
    page = offline_page
    page.goto(html.as_uri())
    page.wait_for_selector("#trace .convo")
    text = page.inner_text("#trace")
    assert "thinking (62 characters)" in text and "I should look at the test first" not in text
    assert "characters left out" not in text
    page.click("text=thinking (62 characters)")
    page.wait_for_selector("#trace .convo >> text=I should look at the test first")  # built when opened
    # The last call's input: its history by reference in the page, whole when opened.
    page.click("text=expand all")
    last = page.locator('details.obs[data-obs="msg_01D"]')
    fold = last.locator("summary", has_text="input: 7 messages")
    fold.click()
    last.locator("text=The pagination test fails").first.wait_for()
    assert page.console_errors == [] and page.page_errors == []
