"""The report's trace viewer in headless Chromium, offline: a table row opens its trace, refs are highlighted,
search filters by text, tool, failure mode and verdict, and no trace text runs as script."""

from __future__ import annotations

import pytest

from evalkit.io import canonical_line
from evalkit.pipeline import run_subject
from tests.viewer.conftest import XSS

pytestmark = pytest.mark.slow


@pytest.fixture
def report(viewer_subject, tmp_path):
    out = tmp_path / "run"
    manifest = run_subject(viewer_subject, out, at="2026-01-01T00:00:00Z")
    assert [n.status for n in manifest.notebooks] == ["ok"], manifest.notebooks
    return out / "index.html"


def test_a_table_row_opens_its_trace_with_the_cited_evidence_highlighted(report, offline_page):
    page = offline_page
    page.goto(report.as_uri())
    page.wait_for_selector("html[data-traces-ready]", timeout=20_000)
    linked = page.eval_on_selector_all("main section:not(#traces) a.tv-link", "as => as.map(a => a.textContent)")
    assert linked, "no table cell of the report was linked to a trace"
    row = page.locator("tr.tv-row").first
    name = row.locator("a.tv-link").first.inner_text()
    row.locator("td").last.click()  # anywhere on the row
    page.wait_for_selector("#tv-viewer:not([hidden]) .tv-panel")
    assert page.evaluate("location.hash") == f"#trace={name}"
    assert page.inner_text("#tv-viewer .tid") == name
    roles = page.eval_on_selector_all("#tv-viewer .convo .bubble .role > span:first-child", "s => s.map(e => e.textContent)")
    assert roles == ["user", "assistant", "tool \u00b7 order_lookup", "assistant"]
    assert "120 tokens" in page.inner_text("#tv-viewer .steps") and "400 ms" in page.inner_text("#tv-viewer .steps")
    page.keyboard.press("Escape")
    page.wait_for_selector("#tv-viewer", state="hidden")

    page.evaluate("location.hash = 'trace=t1&criterion=grounded'")
    page.wait_for_selector("#tv-viewer .tv-verdict.focus.fail")
    assert XSS in page.inner_text("#tv-viewer .tv-verdict.focus .tv-critique")  # shown as text
    # the ref's value is marked where the trace holds it: the tool's result in the tree and in the conversation
    marked = page.eval_on_selector_all("#tv-viewer .steps mark.tv-ref, #tv-viewer .convo mark.tv-ref",
                                       "ms => ms.map(m => m.textContent)")
    assert marked and all(m == f"shipped Monday {XSS}" for m in marked)
    assert page.eval_on_selector_all("#tv-viewer .steps details.obs.cited", "ds => ds.map(d => d.dataset.obs)") == ["t1-x1"]
    assert "Flow graph: 3 values passed on" in page.inner_text("#tv-viewer .tv-flow summary")
    assert page.evaluate("window.__xss") is None
    assert page.console_errors == [] and page.page_errors == [] and page.blocked == []


def test_search_filters_the_embedded_traces_by_text_tool_mode_and_verdict(report, offline_page):
    page = offline_page
    page.goto(report.as_uri())
    page.wait_for_selector("html[data-traces-ready]", timeout=20_000)

    def listed():
        return page.eval_on_selector_all("#tv-results li", "ls => ls.map(l => l.dataset.trace)")

    everything = listed()
    page.fill("#tv-query", "ord-0003")
    assert listed() == ["t3"]
    page.fill("#tv-query", "")
    page.select_option("#tv-tool", "order_lookup")
    assert listed() == everything
    page.select_option("#tv-mode", "wrong-order")
    assert sorted(listed()) == ["t1", "t3"]
    page.select_option("#tv-mode", "")
    page.select_option("#tv-verdict", "grounded:fail")
    assert listed() and all(int(t[1:]) % 2 == 1 for t in listed())
    page.click("#tv-results li >> nth=0")  # opened on the verdict it was listed for, its refs marked
    page.wait_for_selector("#tv-viewer .tv-verdict.focus.fail[data-criterion='grounded']")
    assert page.evaluate("location.hash") == f"#trace={listed()[0]}&criterion=grounded"
    assert page.eval_on_selector_all("#tv-viewer .steps mark.tv-ref", "ms => ms.length") > 0
    page.keyboard.press("Escape")
    page.evaluate("location.hash = 'traces&mode=wrong-order'")
    page.wait_for_function("document.querySelectorAll('#tv-results li').length === 2")
    page.click("#tv-results li >> nth=0")
    page.wait_for_selector("#tv-viewer:not([hidden]) .tv-panel")
    assert "Wrong order" in page.inner_text("#tv-viewer .tv-badge.mode")
    assert page.evaluate("window.__xss") is None
    assert page.console_errors == [] and page.page_errors == [] and page.blocked == []


def test_a_cited_message_is_marked_but_not_the_others_named_by_the_same_step(viewer_subject, tmp_path, offline_page):
    # The question and the reply both come from step t1-g1 (its input and its output): a ref to the reply
    # must not mark the question as cited.
    verdicts = viewer_subject.parent / "verdicts.jsonl"
    with verdicts.open("a", encoding="utf-8") as out:
        out.write(canonical_line({"criterionId": "announces", "traceId": "t1", "result": "fail", "confidence": 0.8,
                                  "critique": "Says it looks the order up.",
                                  "refs": [{"obs": "t1-g1", "path": "output.content", "value": "Looking it up."}]}))
    run_subject(viewer_subject, tmp_path / "run", at="2026-01-01T00:00:00Z")
    page = offline_page
    page.goto((tmp_path / "run" / "index.html").as_uri() + "#trace=t1&criterion=announces")
    page.wait_for_selector("#tv-viewer .tv-verdict.focus.fail[data-criterion='announces']")
    cited = page.eval_on_selector_all("#tv-viewer .convo .bubble.cited .role > span:first-child",
                                      "s => s.map(e => e.textContent)")
    assert cited == ["assistant", "tool \u00b7 order_lookup"]  # the reply, and the tool result grounded cites
    assert "Looking it up." in page.inner_text("#tv-viewer .convo .bubble.cited >> nth=0")
    assert page.console_errors == [] and page.page_errors == [] and page.blocked == []
