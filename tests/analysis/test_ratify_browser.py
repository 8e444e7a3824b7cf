"""Ratify a drafted taxonomy in headless Chromium with the keyboard, then build the taxonomy from the export."""

from __future__ import annotations

import json

import pytest
from analysis_builders import make_trace, note

from evalkit.analysis import draft_yaml, latest, read_store, read_taxonomy, write_review
from evalkit.cli.main import main
from evalkit.contracts import DraftTaxonomy

XSS = "<img src=x onerror=\"window.__xss=1\">\u202eevil"


def _draft() -> DraftTaxonomy:
    mode = lambda i, name, ex: {"id": i, "name": name, "definition": f"{name} in the answer.",  # noqa: E731
                                "include": [f"{name} rule"], "exclude": [], "examples": ex}
    return DraftTaxonomy.model_validate({
        "format": "evalkit-draft-modes", "version": 1, "subject": "leasing",
        "draftedBy": {"provider": "replay", "model": "m", "temperature": 0, "promptDigest": "sha256:abc",
                      "notes": 6, "notesDigest": "sha256:def"},
        "modes": [mode("no-handoff", "No handoff", ["t1", "t2"]), mode("missed-transfer", "Missed transfer", ["t3"]),
                  mode("tour-problems", "Tour problems", ["t4", "t5"]), mode("test-calls", XSS, ["t6"])],
        "unplaced": [{"traceId": "t6", "annotator": "z", "note": "Levi testing", "reason": "not a failure"}]})


@pytest.mark.slow
def test_ratify_every_drafted_mode_with_the_keyboard_and_build_the_taxonomy(offline_page, tmp_path):
    page = offline_page
    traces = [make_trace(f"t{i}") for i in range(1, 7)]
    notes = [note(f"t{i}", "fail", annotator="z", text=text, minute=i) for i, text in enumerate(
        ["should have handed off", "no handoff", "did not transfer the call", "rescheduled wrongly",
         "two tours booked", "Levi testing"], start=1)]
    draft = _draft()
    (tmp_path / "draft.yaml").write_text(draft_yaml(draft), encoding="utf-8")
    html = write_review(tmp_path / "ratify.html", traces, annotations=notes, draft=draft)
    page.goto(html.as_uri())
    page.wait_for_selector("#draft-list li")
    assert page.is_visible("#ratify") and not page.is_visible("#strip")
    assert "0 / 4 decided" in page.inner_text("#ratify-progress")
    assert "should have handed off" in page.inner_text("#draft-mode")
    assert "Levi testing" in page.inner_text("#unplaced")

    page.fill("#annotator", "kim")
    page.keyboard.press("Escape")
    page.keyboard.press("e")  # nothing decided yet: no export
    assert "4 drafted modes still undecided" in page.inner_text("#status")

    page.keyboard.press("r")  # No handoff -> renamed
    page.fill("#ratify-input", "Handoff not triggered")
    page.keyboard.press("Enter")
    page.keyboard.press("m")  # Missed transfer -> merged into the first mode
    page.keyboard.press("1")
    page.keyboard.press("s")  # Tour problems -> split in two, the second note moved to the second part
    page.fill("#ratify-input", "Wrong reschedule; Double booking: two tours booked for one visit")
    page.keyboard.press("Enter")
    page.keyboard.press("k")
    page.select_option('select[aria-label="part for t5"]', "1")
    page.keyboard.press("j")
    assert page.evaluate("window.__xss") is None and XSS.replace("\u202e", "") not in page.inner_text("#draft-list")
    page.keyboard.press("x")  # the test calls: rejected
    shown = page.eval_on_selector_all("#draft-list li", "ls => ls.map(l => getComputedStyle(l).display)")
    assert shown == ["list-item"] * 4  # a decided mode stays a numbered row (a split one once became a grid)
    assert "4 / 4 decided" in page.inner_text("#ratify-progress")

    page.reload()  # decisions survive a reload
    page.wait_for_selector("#draft-list li")
    assert "4 / 4 decided" in page.inner_text("#ratify-progress")
    with page.expect_download() as download:
        page.keyboard.press("e")
    export = tmp_path / "ratification.json"
    download.value.save_as(export)
    record = json.loads(export.read_text(encoding="utf-8"))
    assert [d["action"] for d in record["decisions"]] == ["rename", "merge", "split", "reject"]
    assert {d["reviewer"] for d in record["decisions"]} == {"kim"}

    store = tmp_path / "coded.jsonl"
    assert main(["analysis", "ratify", str(tmp_path / "draft.yaml"), str(export), "--out",
                 str(tmp_path / "failure-modes.yaml"), "--into", str(store)]) == 0
    taxonomy = read_taxonomy(tmp_path / "failure-modes.yaml")
    assert [(m.id, m.examples) for m in taxonomy.modes] == [
        ("handoff-not-triggered", ["t1", "t2", "t3"]), ("wrong-reschedule", ["t4"]), ("double-booking", ["t5"])]
    wrong, double = taxonomy.modes[1:]  # a part named alone keeps the drafted definition and rules; one defined, its own
    assert (wrong.definition, wrong.include) == ("Tour problems in the answer.", ["Tour problems rule"])
    assert (double.definition, double.include, double.exclude) == ("two tours booked for one visit", None, None)
    coded = {a.trace_id: a.modes for a in latest(read_store(store).annotations)}
    assert coded == {"t1": ["handoff-not-triggered"], "t2": ["handoff-not-triggered"],
                     "t3": ["handoff-not-triggered"], "t4": ["wrong-reschedule"], "t5": ["double-booking"]}
    assert page.console_errors == [] and page.page_errors == [] and page.blocked == []
