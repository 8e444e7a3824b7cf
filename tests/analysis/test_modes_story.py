"""The failure-mode story notebook 01 draws: draft, ratification, LLM vs person, reviewers, saturation."""

from __future__ import annotations

from evalkit.analysis import modes_story
from evalkit.contracts import CriterionVerdict, DraftTaxonomy, Ratification, Taxonomy
from tests.analysis.analysis_builders import note

AT = "2026-03-09T10:00:00+00:00"
DRAFT = DraftTaxonomy.model_validate({
    "format": "evalkit-draft-modes", "version": 1, "subject": "shop",
    "draftedBy": {"provider": "replay", "model": "sim", "temperature": 0, "promptDigest": "sha256:0123456789abcdef",
                  "notes": 3, "notesDigest": "sha256:2"},
    "modes": [{"id": "ignores-result", "name": "Ignores result", "definition": "d.", "examples": ["t1", "t2"]},
              {"id": "testing", "name": "Testing", "definition": "d.", "examples": ["t3"]}],
    "unplaced": []})


def test_notes_alone_say_what_to_do_next():
    story = modes_story([note("t1", "fail", text="ignores the result")])
    assert story.findings == ["1 notes and no draft yet: `evalkit analysis draft-modes` proposes failure modes "
                              "from them, for a person to ratify."]
    assert story.saturation is None


def test_a_ratified_draft_coded_by_the_llm_gives_the_tables_and_findings():
    ratification = Ratification.model_validate({
        "format": "evalkit-ratification", "version": 1, "reviewer": "kim", "at": AT, "draftDigest": "sha256:x",
        "decisions": [{"draftMode": "ignores-result", "action": "accept", "reviewer": "kim", "at": AT,
                       "parts": [{"id": "ignores-result", "name": "Ignores result", "definition": "d."}]},
                      {"draftMode": "testing", "action": "reject", "reviewer": "kim", "at": AT}]})
    taxonomy = Taxonomy.model_validate({"subject": "shop", "version": 1, "modes": [
        {"id": "ignores-result", "name": "Ignores result", "definition": "d."}]})
    open_coding = [note(f"t{i}", "fail" if i < 6 else "pass", minute=i, text="ignores it" if i < 6 else None)
                   for i in range(12)]
    coding = [note(f"t{i}", "fail", ("ignores-result",), annotator="kim", minute=30 + i) for i in range(6)]
    verdicts = [CriterionVerdict.model_validate({"criterionId": "ignores-result", "traceId": f"t{i}", "confidence": 1,
                                                 "critique": "c", "result": "fail" if i < 6 else "pass"})
                for i in range(12)]
    story = modes_story(open_coding + coding, draft=DRAFT, ratification=ratification, taxonomy=taxonomy,
                        coded=verdicts, batch_size=4)
    assert [(r["drafted mode"], r["decision"], r["became"]) for r in story.draft_rows] == [
        ("Ignores result", "accept", "ignores-result"), ("Testing", "reject", "rejected")]
    assert "kim ratified the draft: 1 accept, 1 reject." in story.findings
    [row] = story.agreement_rows
    assert (row["both"], row["neither"], row["offered"]) == (6, 6, True)
    assert any("ignores-result may be LLM-coded on unreviewed traces" in f for f in story.findings)
    assert [b.new for b in story.saturation.batches] == [["ignores-result"], [], []]
    assert story.saturation.flat and any("has saturated" in f for f in story.findings)


def test_the_annotators_of_one_store_are_compared_as_reviewers():
    store = [note("t1", "fail", ("a",)), note("t2", "pass", minute=1), note("t1", "fail", ("a",), annotator="ben"),
             note("t2", "fail", ("a",), annotator="ben", minute=2)]
    story = modes_story(store)
    assert story.reviewer_rows == [{"question": "mode a", "statistic": "cohen-kappa", "value": 0.0, "items": 2}]
    assert story.disagreements == 1
