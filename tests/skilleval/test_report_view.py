"""The skill-eval report as HTML: outcome and why, comparisons, arms, checks, waiver; text escaped."""

from __future__ import annotations

from pathlib import Path

from evalkit.cli.main import main
from evalkit.contract_files import read_model
from evalkit.contracts.skilleval import SkillEvalReport
from evalkit.skilleval import render_report_page, report_section

from .worksheet_stage import make_stage, run, sample_cases

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "contracts" / "skill-eval-report.json"
XSS = "<script>alert(1)</script> looked fine"


def _report(arms=None, comparisons=None, outcome="pass") -> SkillEvalReport:
    obj = make_stage(sample_cases(), arms or {}).report.to_json_obj()
    chosen = {"notes-audit-committed": "candidate-only", "notes-audit-local": "candidate-only",
              "notes-capture-committed": "better", "notes-capture-local": "same", **(comparisons or {})}
    for case in obj["cases"]:
        case["comparison"] = chosen[case["case_id"]]
        case["human_review"] = f"{XSS} in {case['case_id']}"
    obj |= {"outcome": outcome, "human_review": "Candidate skills held up."}
    return SkillEvalReport.model_validate(obj)


def _row(html: str, case_id: str) -> str:
    start = html.index(f'<tr data-case="{case_id}">')
    return html[start:html.index("</tr>", start)]


def test_a_passing_report_lists_every_case_and_counts_comparisons():
    html = str(report_section(_report()))
    assert '<span class="verdict pass">pass</span>' in html
    assert "every candidate arm passed, every required baseline ran, no case is worse" in html
    assert "<b>4 / 4</b><span>candidate arms passed</span>" in html
    assert "<b>2</b><span>candidate-only</span>" in html and "<b>1</b><span>better</span>" in html
    assert "inconclusive</span></div>" not in html  # a comparison nobody gave is not counted
    audit = _row(html, "notes-audit-local")
    assert '<span class="cell none">not required</span>' in audit and "candidate-only" in audit
    assert '<span class="cell better">better</span>' in _row(html, "notes-capture-committed")
    assert "<script>" not in html and "<style>" not in html  # the page carries the style sheet, by hash
    assert "&lt;script&gt;alert(1)&lt;/script&gt; looked fine in notes-capture-local" in html
    assert "Waiver" not in html


def test_a_failed_candidate_fails_the_report_and_says_which_case():
    report = _report({"notes-capture-local": (run("candidate", "fail", "fail"), run("baseline"))},
                     comparisons={"notes-capture-local": "same"}, outcome="fail")
    html = str(report_section(report))
    assert '<span class="verdict fail">fail</span>' in html
    assert "Fail: case notes-capture-local.candidate failed." in html
    assert '<span class="cell fail">fail</span>' in _row(html, "notes-capture-local")
    assert "<b>3 / 4</b>" in html


def test_a_missing_baseline_is_incomplete_and_shown_missing():
    report = _report({"notes-capture-committed": (run("candidate"), None)},
                     comparisons={"notes-capture-committed": "inconclusive"}, outcome="incomplete")
    html = str(report_section(report))
    assert "Incomplete: case notes-capture-committed.baseline is missing or incomplete." in html
    assert '<span class="cell missing">missing</span>' in _row(html, "notes-capture-committed")


def test_a_waived_report_shows_the_waiver_in_full(tmp_path, capsys):
    report = read_model(EXAMPLE, SkillEvalReport)
    page = render_report_page(report)
    assert "Waived by Release maintainer A. Rivera" in page
    for text in ("provider access for the v0.4.0 baseline arm", "issue 412: rerun taskrail-repair-local",
                 "committed repair case matched the v0.4.0 baseline", "must disclose this waiver"):
        assert text in page
    assert "<script" not in page and "script-src 'none'" in page  # the page runs nothing

    out = tmp_path / "report.html"
    assert main(["skill-eval", "report-page", str(EXAMPLE), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == page
    assert "Waived by Release maintainer A. Rivera" in capsys.readouterr().out
