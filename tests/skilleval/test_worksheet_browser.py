
"""Drive worksheet.html in headless Chromium, offline: answer, reload (autosave kept), export, validate, resume."""

from __future__ import annotations

import json

import pytest

from evalkit.cli.main import main
from evalkit.contract_files import read_model
from evalkit.contracts.skilleval import SkillEvalAnswers, SkillEvalReport
from evalkit.io.atomic import atomic_write_text
from evalkit.io.canonical import canonical_dumps
from evalkit.skilleval.worksheet import render_worksheet

from .test_sample import product_args
from .worksheet_stage import REGISTRY, evidence_for, make_stage, sample_cases, sample_policy

pytestmark = pytest.mark.slow

XSS = "<script>window.__xss=1</script><img src=x onerror=\"window.__xss=2\">"
NOTES = {
    "notes-audit-committed": "Listed one note, committed mode, validation passed; changed nothing.",
    "notes-audit-local": "Counted the note from tasknote, not the stale copy.",
    "notes-capture-committed": "Only the candidate ran validate before reporting N-001.",
    "notes-capture-local": "Both arms used the local store.",
}


def write_page(tmp_path, transcript=None):
    defs = sample_cases()
    stage = make_stage(defs, {})
    evidence = {(c.case_id, arm): evidence_for(defs[c.case_id], arm, transcript=transcript)
                for c in stage.report.cases for arm in ("candidate", "baseline") if getattr(c, arm) is not None}
    path = tmp_path / "worksheet.html"
    atomic_write_text(path, render_worksheet(stage, evidence, cases=defs, policy=sample_policy()))
    return path


def answer(page, overall: str, comparisons: dict[str, str], notes: dict[str, str]) -> None:
    """Fill the page the way a reviewer does: click a comparison, type a note, type the overall review."""
    page.fill("#overall", overall)
    for case_id, comparison in comparisons.items():
        page.check(f'input[name="cmp-{case_id}"][value="{comparison}"]')
    for case_id, text in notes.items():
        page.fill(f'textarea.note[data-case="{case_id}"]', text)


def export(page, tmp_path):
    with page.expect_download() as download:
        page.click("#export")
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    return path


def test_answer_reload_export_and_validate(offline_page, tmp_path):
    page = offline_page
    page.goto(write_page(tmp_path, transcript=XSS).as_uri())
    assert page.inner_text("#progress") == "0 / 4 answered"
    assert page.evaluate("window.__xss") is None  # transcript text is shown, never run
    assert XSS in page.inner_text("#case-notes-capture-local")
    fixed = page.eval_on_selector_all("[data-fixed]", "els => els.map(e => e.textContent)")
    assert fixed == ["candidate-only", "candidate-only"]

    answer(page, "Candidate capture validates before reporting; audit is new and read-only.",
           {"notes-capture-committed": "better", "notes-capture-local": "same"},
           {**NOTES, "notes-capture-local": "Both arms wrote to /home/me/repo"})
    assert page.inner_text("#progress").startswith("3 / 4 answered")  # the unsafe note does not count

    page.click("#export")  # refused: the local path would leak into the committed report
    assert "notes-capture-local: note contains a local absolute or home path" in page.inner_text("#status")
    assert page.eval_on_selector('textarea.note[data-case="notes-capture-local"]',
                                 "e => e.classList.contains('problem')")
    page.fill('textarea.note[data-case="notes-capture-local"]', NOTES["notes-capture-local"])
    assert page.inner_text("#progress") == "4 / 4 answered \u00b7 overall review written"

    page.reload()
    page.wait_for_selector("#progress")
    assert page.inner_text("#progress") == "4 / 4 answered \u00b7 overall review written"
    assert "answers restored" in page.inner_text("#status")
    assert page.is_checked('input[name="cmp-notes-capture-committed"][value="better"]')
    assert page.is_checked('input[name="cmp-notes-capture-local"][value="same"]')
    assert page.input_value('textarea.note[data-case="notes-audit-local"]') == NOTES["notes-audit-local"]
    page.check('input[name="cmp-notes-capture-local"][value="worse"]')  # a change after the reload counts
    page.check('input[name="cmp-notes-capture-local"][value="same"]')

    path = export(page, tmp_path)
    assert path.name == "answers-sample-release-0-2.json"
    answers = read_model(path, SkillEvalAnswers)
    assert [(c.case_id, c.comparison, c.human_review) for c in answers.cases] == [
        ("notes-audit-committed", "candidate-only", NOTES["notes-audit-committed"]),
        ("notes-audit-local", "candidate-only", NOTES["notes-audit-local"]),
        ("notes-capture-committed", "better", NOTES["notes-capture-committed"]),
        ("notes-capture-local", "same", NOTES["notes-capture-local"]),
    ]
    assert answers.human_review == "Candidate capture validates before reporting; audit is new and read-only."
    assert path.read_text(encoding="utf-8") == canonical_dumps(json.loads(path.read_text(encoding="utf-8")))

    assert page.console_errors == [] and page.page_errors == []
    assert page.blocked == []  # nothing tried to leave the file


def test_export_is_refused_until_every_case_is_answered(offline_page, tmp_path):
    page = offline_page
    page.goto(write_page(tmp_path).as_uri())
    downloads = []
    page.on("download", lambda d: downloads.append(d))
    answer(page, "", {"notes-capture-committed": "worse"}, {"notes-audit-local": "fine"})
    page.click("#export")
    status = page.inner_text("#status")
    assert "overall review is empty" in status
    assert "notes-capture-local: choose a comparison" in status
    assert "notes-capture-committed: note is empty" in status
    assert "notes-audit-local" not in status  # answered: a fixed comparison and a note
    page.wait_for_timeout(300)
    assert downloads == []


def test_a_real_run_reviewed_in_the_browser_resumes_to_the_recorded_report(offline_page, tmp_path):
    """Run the sample, answer its worksheet as data/skilleval/answers.json records, export, resume."""
    sample = REGISTRY.parent
    stage = tmp_path / "stage"
    assert main(["skill-eval", "run", str(REGISTRY), "--candidate", str(sample / "skills" / "candidate"),
                 "--baseline", str(sample / "skills" / "baseline"), "--adapter", "script",
                 "--out", str(stage), "--session-id", "sample-release-0-2",
                 "--generated-at", "2026-11-30T09:00:00Z", *product_args(tmp_path)]) == 0
    assert main(["skill-eval", "worksheet", str(stage), "--out", str(tmp_path / "worksheet.html")]) == 0
    recorded = read_model(sample / "answers.json", SkillEvalAnswers)

    page = offline_page
    page.goto((tmp_path / "worksheet.html").as_uri())
    answer(page, recorded.human_review,
           {a.case_id: a.comparison for a in recorded.cases if a.comparison in ("same", "better", "worse")},
           {a.case_id: a.human_review for a in recorded.cases})
    exported = export(page, tmp_path)
    assert exported.read_bytes() == (sample / "answers.json").read_bytes()  # the sample is a real export

    assert main(["skill-eval", "resume", str(stage), "--answers", str(exported),
                 "--out", str(tmp_path / "report.json")]) == 0
    report = read_model(tmp_path / "report.json", SkillEvalReport)
    assert report.outcome == "pass"
    assert [c.human_review for c in report.cases] == [a.human_review for a in recorded.cases]
    assert page.console_errors == [] and page.page_errors == [] and page.blocked == []
