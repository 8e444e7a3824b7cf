"""Drive review.html in headless Chromium, offline: label with the keyboard, reload, export, import."""

from __future__ import annotations

import argparse
import json

from analysis_builders import make_trace, note

from evalkit.analysis import append_annotations, latest, read_store, read_taxonomy, write_review
from evalkit.cli.labels import add_labels_parser

XSS = "<script>window.__xss=1</script><img src=x onerror=\"window.__xss=2\">"
TAXONOMY = """subject: support-agent
version: 1
modes:
- id: hallucinated-policy
  name: Hallucinated policy
  definition: The answer states a policy the knowledge base does not.
- id: wrong-tool-args
  name: Wrong tool arguments
  definition: A tool was called with arguments that do not match the request.
"""


def _import(export, store, taxonomy) -> int:
    parser = argparse.ArgumentParser(prog="evalkit")
    add_labels_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["labels", "import", str(export), "--into", str(store), "--taxonomy", str(taxonomy)])
    return args.func(args)


def _progress(page) -> str:
    return page.inner_text("#progress")


def _on(page, selector: str) -> bool:
    return page.eval_on_selector(selector, "e => e.classList.contains('on')")


def test_label_with_keys_reload_export_and_import(offline_page, tmp_path):
    page = offline_page
    taxonomy = tmp_path / "failure-modes.yaml"
    taxonomy.write_text(TAXONOMY, encoding="utf-8")
    traces = [make_trace("t1", failed_tools=1, answer=XSS, metadata={"intent": XSS}),
              make_trace("t2"), make_trace("t3"), make_trace("t4"), make_trace("t5")]
    store = tmp_path / "annotations.jsonl"
    append_annotations(store, [note("t5", "pass", annotator="tess", text="fine before")])
    before = store.read_bytes()
    html = write_review(tmp_path / "review.html", traces, annotations=read_store(store).annotations,
                        taxonomy=read_taxonomy(taxonomy),
                        annotator="tess")

    page.goto(html.as_uri())
    page.wait_for_selector("details.obs")
    assert _progress(page).startswith("1 / 5 labelled")  # t5 preloaded from the store
    assert page.evaluate("window.__xss") is None  # trace text is shown, never run
    assert XSS in page.inner_text("#trace")
    assert page.eval_on_selector_all("details.obs.err", "els => els.length") == 1  # the failed tool stands out

    # t1: fail, tag the second mode, write a note, mark the failed tool as the first failure
    page.keyboard.press("f")
    page.keyboard.press("2")
    page.keyboard.press("n")
    page.keyboard.type("Looked up the wrong order; p and f typed here are text")
    page.keyboard.press("Escape")
    page.click("details.obs.err > summary > .mark")
    # t2: pass; t3: defer
    page.keyboard.press("j")
    page.keyboard.press("p")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("d")
    assert _progress(page) == "4 / 5 labelled \u00b7 2 pass, 1 fail, 1 defer"

    page.reload()
    page.wait_for_selector("details.obs")
    assert "4 / 5 labelled" in _progress(page)
    assert "trace 3 of 5" in page.inner_text("#position")  # the cursor survived too
    assert _on(page, '.labels button[data-label="defer"]')
    page.keyboard.press("k")
    page.keyboard.press("ArrowLeft")
    assert "trace 1 of 5" in page.inner_text("#position")
    assert _on(page, '.labels button[data-label="fail"]')
    assert _on(page, '#tags button[data-mode="wrong-tool-args"]')
    assert not _on(page, '#tags button[data-mode="hallucinated-policy"]')
    assert page.input_value("#note") == "Looked up the wrong order; p and f typed here are text"
    assert "first failing observation: t1-tool0" in page.inner_text("#first")

    with page.expect_download() as download:
        page.keyboard.press("e")
    export = tmp_path / "export.json"
    download.value.save_as(export)
    exported = json.loads(export.read_text(encoding="utf-8"))
    assert (exported["format"], exported["version"], exported["annotator"]) == ("evalkit-review-export", 1, "tess")
    assert [a["traceId"] for a in exported["annotations"]] == ["t1", "t2", "t3"]  # t5 was not touched

    assert _import(export, store, taxonomy) == 0
    assert store.read_bytes().startswith(before)  # appended, nothing rewritten
    records = read_store(store).annotations
    assert len(records) == 4
    current = {a.trace_id: a for a in latest(store, "tess")}
    assert (current["t1"].label, current["t1"].modes, current["t1"].first_failing_obs) == \
        ("fail", ["wrong-tool-args"], "t1-tool0")
    assert current["t1"].note == "Looked up the wrong order; p and f typed here are text"
    assert (current["t2"].label, current["t2"].modes, current["t3"].label) == ("pass", [], "defer")
    assert (current["t5"].label, current["t5"].note) == ("pass", "fine before")
    assert _import(export, store, taxonomy) == 0 and len(read_store(store).annotations) == 4  # idempotent

    assert page.console_errors == [] and page.page_errors == []
    assert page.blocked == []  # nothing tried to leave the file
