"""Several reviewers in Chromium: blind labelling, judge verdicts overridden, the disagreement queue adjudicated."""

from __future__ import annotations

import json

import pytest
from analysis_builders import make_trace, note

from evalkit.analysis import append_annotations, read_store, write_review
from evalkit.calibration import read_labels
from evalkit.cli.main import main
from evalkit.contracts import CriterionVerdict, Taxonomy

TAXONOMY = Taxonomy.model_validate({"subject": "shop", "version": 1, "modes": [
    {"id": "made-up-policy", "name": "Made-up policy", "definition": "A policy no article holds."}]})
AT = "2026-03-10T09:00:00+00:00"


def _export(page, tmp_path, name):
    with page.expect_download() as download:
        page.keyboard.press("e")
    path = tmp_path / name
    download.value.save_as(path)
    return path


@pytest.mark.slow
def test_blind_review_overrides_a_verdict_and_an_adjudicator_works_the_disagreement_queue(offline_page, tmp_path):
    page = offline_page
    traces = [make_trace(f"t{i}") for i in range(1, 5)]
    ana = tmp_path / "ana.jsonl"
    append_annotations(ana, [note("t1", "fail", ("made-up-policy",), annotator="ana"),
                             note("t2", "pass", annotator="ana", minute=1),
                             note("t3", "fail", ("made-up-policy",), annotator="ana", minute=2),
                             note("t4", "pass", annotator="ana", minute=3)])
    verdicts = [CriterionVerdict.model_validate({"criterionId": "grounded", "traceId": "t1", "result": "pass",
                                                 "confidence": 0.8, "critique": "Policy <b>quoted</b> from KB-101."})]

    # ben labels blind: ana's labels are not on his page at all
    blind = write_review(tmp_path / "ben.html", traces, taxonomy=TAXONOMY, others=read_store(ana).annotations,
                         blind=True, verdicts=verdicts, annotator="ben")
    assert '"others":{}' in blind.read_text().replace(" ", "")
    page.goto(blind.as_uri())
    page.wait_for_selector("details.obs")
    assert page.is_hidden("#others-card")
    assert "Policy <b>quoted</b> from KB-101." in page.inner_text("#verdicts")  # shown as text
    page.keyboard.press("f")
    page.keyboard.press("1")
    page.keyboard.press("o")  # the judge said pass; ben overrides it
    assert "you: fail (override)" in page.inner_text("#verdicts")
    for key in ("j", "f", "1", "j", "p", "j", "p"):  # t2 fail (ana: pass), t3 pass (ana: fail), t4 pass
        page.keyboard.press(key)
    export = _export(page, tmp_path, "ben-export.json")
    ben, ben_labels = tmp_path / "ben.jsonl", tmp_path / "ben-labels.jsonl"
    assert main(["labels", "import", str(export), "--into", str(ben), "--labels-into", str(ben_labels)]) == 0
    [override] = read_labels(ben_labels)
    assert (override.criterion_id, override.label, override.annotator) == ("grounded", "fail", "ben")
    assert override.overrides.result == "pass"
    assert {a.annotator for a in read_store(ben).annotations} == {"ben"}

    # the adjudicator sees both and walks the disagreement queue with q
    adjudicator = write_review(tmp_path / "adj.html", traces, taxonomy=TAXONOMY,
                               others=read_store(ana).annotations + read_store(ben).annotations, annotator="cy")
    page.goto(adjudicator.as_uri())
    page.wait_for_selector("details.obs")
    assert "2 traces in the disagreement queue" in page.inner_text("#queue")
    page.keyboard.press("q")
    assert "trace 2 of 4" in page.inner_text("#position")
    assert "ana: pass" in page.inner_text("#others") and "ben: fail (made-up-policy)" in page.inner_text("#others")
    page.keyboard.press("f")
    page.keyboard.press("1")  # cy: t2 shows the mode
    page.keyboard.press("q")
    assert "trace 3 of 4" in page.inner_text("#position")
    page.keyboard.press("p")  # cy: t3 does not
    decisions = tmp_path / "cy.jsonl"
    assert main(["labels", "import", str(_export(page, tmp_path, "cy-export.json")), "--into", str(decisions)]) == 0

    gold = tmp_path / "gold.jsonl"
    assert main(["analysis", "adjudicate", str(ana), str(ben), "--taxonomy", str(_taxonomy(tmp_path)),
                 "--decisions", str(decisions), "--at", AT, "--out", str(gold)]) == 0
    labels = {g.trace_id: g for g in read_labels(gold)}
    assert (labels["t2"].label, labels["t2"].adjudication.how, labels["t2"].adjudication.by) == ("fail", "adjudicated", "cy")
    assert (labels["t3"].label, labels["t1"].adjudication.how) == ("pass", "agreed")
    assert page.console_errors == [] and page.page_errors == [] and page.blocked == []


def _taxonomy(tmp_path):
    path = tmp_path / "failure-modes.json"
    path.write_text(json.dumps(TAXONOMY.to_json_obj()), encoding="utf-8")
    return path
