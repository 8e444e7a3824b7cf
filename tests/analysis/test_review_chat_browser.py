
"""review.html on chat-shaped traces, in headless Chromium: a transcript beside the tree, folds, long values."""

from __future__ import annotations

import pytest
from analysis_builders import make_trace
from chat_builders import openai_chat_trace

from evalkit.analysis import write_review
from evalkit.contracts.trace import Observation, Trace

BIG = "row of a huge export; " * 240_000  # about 5 MB


def _open(page, tmp_path, traces):
    html = write_review(tmp_path / "review.html", traces)
    page.goto(html.as_uri())
    page.wait_for_selector("#trace .convo")
    return page


def _visible_count(page, text: str) -> int:
    return page.inner_text("#trace").count(text)


@pytest.mark.slow
def test_chat_trace_reads_as_a_transcript_each_message_once(offline_page, tmp_path):
    page = _open(offline_page, tmp_path, [openai_chat_trace(), make_trace("t2")])
    roles = page.eval_on_selector_all(".convo > .bubble .role > span:first-child", "els => els.map(e => e.textContent)")
    assert roles == ["system", "user", "assistant", "tool \u00b7 get_availability", "assistant", "user", "assistant"]
    assert _visible_count(page, "Any 1 bedroom lofts?") == 1  # three calls carry it; it is shown once
    assert "get_availability({\"beds\":1})" in page.inner_text(".convo")  # the tool call with its arguments
    # Tool schemas in the metadata stay folded behind a one-line summary; short fields are chips.
    assert "Looks things up." not in page.inner_text("#trace")
    assert "tools (6)" in page.inner_text(".meta-fold > summary")
    assert "channel: voice" in page.inner_text(".chips")
    # Collapsed tree rows say what each step produced in one line.
    previews = page.eval_on_selector_all("details.obs:not([open]) > summary > .preview", "els => els.map(e => e.textContent)")
    assert "Friday works: you are booked at 10am." in previews
    assert len(previews) == 4
    # Expanding every row still shows each user message once: the repeated history stays folded.
    page.click("text=expand all")
    assert _visible_count(page, "Any 1 bedroom lofts?") == 1
    assert page.evaluate("document.documentElement.scrollHeight") < 2500
    # A message links to its step in the tree.
    page.click(".convo .bubble.tool .obslink")
    assert page.eval_on_selector('details.obs[data-obs="t1"]', "d => d.open")
    page.click(".meta-fold > summary")
    page.wait_for_selector(".meta-fold pre")  # built when first opened
    assert "Looks things up." in page.inner_text("#trace")
    page.keyboard.press("p")
    assert page.inner_text("#progress").startswith("1 / 2 labelled")
    assert page.console_errors == [] and page.page_errors == [] and page.blocked == []


@pytest.mark.slow
def test_a_5mb_value_opens_at_once_and_shows_in_full_on_request(offline_page, tmp_path):
    page = _open(offline_page, tmp_path, [make_trace("first"), openai_chat_trace("big", tool_output=BIG)])
    took = page.evaluate("""() => {
        const t0 = performance.now();
        document.dispatchEvent(new KeyboardEvent('keydown', {key: 'j', bubbles: true}));
        document.querySelectorAll('#trace details').forEach(d => d.open = true);
        document.body.getBoundingClientRect();
        return performance.now() - t0;
    }""")
    assert took < 1500, f"opening the trace took {took:.0f} ms"
    assert len(page.inner_text("#trace")) < 100_000  # cut, not laid out whole
    page.wait_for_selector(".convo .bubble.tool button.more")
    more = page.locator(".convo .bubble.tool button.more")
    assert "show all (5.0 MB)" in more.inner_text()
    more.click()
    assert page.eval_on_selector(".convo .bubble.tool", "b => b.textContent.length") > len(BIG)
    assert page.page_errors == []


@pytest.mark.slow
def test_bidi_overrides_in_names_are_shown_escaped(offline_page, tmp_path):
    trace = openai_chat_trace("invoice\u202Egpj.exe", tool_name="refund\u202Eever")
    page = _open(offline_page, tmp_path, [trace])
    assert page.inner_text(".tid") == "invoice\\u202Egpj.exe"
    convo = page.eval_on_selector(".convo", "e => e.textContent")
    assert "tool \u00b7 refund\\u202Eever" in convo and "refund\\u202Eever({" in convo
    assert "\u202E" not in page.inner_text("#trace")


def test_a_trace_without_chat_messages_says_so_and_shows_its_tree(offline_page, tmp_path):
    spans = Trace(id="otel-1", input={"query": "status of A1"}, output="shipped", observations=[
        Observation(id="root", type="SPAN", name="run"),
        Observation(id="llm", type="GENERATION", parent_id="root", input={"temperature": 0.2}, output={"tokens": 9}),
        Observation(id="db", type="TOOL", parent_id="root", name="orders", input={"id": "A1"}, output="shipped")])
    page = _open(offline_page, tmp_path, [spans])
    assert "No chat transcript" in page.inner_text(".convo")
    assert "status of A1" in page.inner_text(".convo")
    assert page.eval_on_selector_all("details.obs", "els => els.length") == 3
    assert page.is_visible('details.obs[data-obs="db"] > summary')
    assert page.page_errors == []


def test_a_long_unbroken_step_name_wraps_inside_the_tree(offline_page, tmp_path):
    # OpenTelemetry span names are often dotted paths with no space to break at.
    name = "a2a.server.request_handlers.default_request_handler.on_message_send_stream.handle"
    steps = [Observation(id=f"s{i}", type="SPAN", name=name, start_time=f"2026-01-01T00:00:0{i}Z") for i in range(3)]
    page = _open(offline_page, tmp_path, [Trace(id="spans", observations=steps), make_trace("t2")])
    assert page.eval_on_selector(".steps", "e => e.scrollWidth <= e.clientWidth"), "the tree scrolls sideways"
