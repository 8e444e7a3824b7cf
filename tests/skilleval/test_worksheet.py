"""The worksheet page as HTML: what a reviewer sees per case, which comparisons it offers, what it hides."""

from __future__ import annotations

import json
import re

import pytest

from evalkit.errors import InputError
from evalkit.skilleval.worksheet import SHOWN_CHARS, allowed_comparisons, render_worksheet, worksheet_key

from .worksheet_stage import evidence_for, make_stage, run, sample_cases, sample_policy

XSS = "</pre><script>window.__xss=1</script><img src=x onerror=alert(1)>"


def _page(arms=None, *, transcript=None, cases=None, exit_codes=None):
    defs = sample_cases()
    stage = make_stage(defs, arms or {})
    evidence = {(c.case_id, arm): evidence_for(defs[c.case_id], arm, transcript=transcript, exit_codes=exit_codes)
                for c in stage.report.cases for arm in ("candidate", "baseline") if getattr(c, arm) is not None}
    return stage, render_worksheet(stage, evidence, cases=defs if cases is None else cases, policy=sample_policy())


def _data(html: str) -> dict:
    block = re.search(r'<script id="worksheet-data" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(block.group(1))


def _section(html: str, case_id: str) -> str:
    start = html.index(f'<section class="card case" id="case-{case_id}"')
    return html[start:html.index("</section>", start)]


def test_each_case_shows_prompt_expectation_assertions_and_both_arms():
    stage, html = _page()
    capture = _section(html, "notes-capture-committed")
    assert 'Record the decision "Ship 0.2 on Friday"' in capture.replace("&#34;", '"')
    assert "tasknote adds the note and returns its id" in capture
    for predicate in ("command-exit-zero", "validation-pass", "git-worktree-clean"):
        assert predicate in capture
    assert capture.count('class="arm candidate"') == 1 and capture.count('class="arm baseline"') == 1
    assert "Did it run tasknote validate before saying the note was recorded?" in capture
    assert "tasknote add &#39;Ship 0.2 on Friday&#39; --json" in capture  # argv shown with its quoting
    assert [c["id"] for c in _data(html)["cases"]] == [c.case_id for c in stage.report.cases]
    assert "Content-Security-Policy" in html and "http://" not in html and "https://" not in html


def test_comparisons_follow_the_resume_rule():
    cand_missing = (None, run("baseline"))
    base_incomplete = (run("candidate"), run("baseline", outcome="incomplete"))
    stage, html = _page({"notes-capture-committed": cand_missing, "notes-capture-local": base_incomplete})
    choices = {c["id"]: c["choices"] for c in _data(html)["cases"]}
    assert choices == {"notes-audit-committed": ["candidate-only"], "notes-audit-local": ["candidate-only"],
                       "notes-capture-committed": ["inconclusive"], "notes-capture-local": ["inconclusive"]}
    assert "required evidence missing or incomplete: candidate arm" in _section(html, "notes-capture-committed")
    assert "incomplete: baseline arm" in _section(html, "notes-capture-local")
    assert "No evidence: this arm did not run" in _section(html, "notes-capture-committed")
    assert 'type="radio"' not in html  # no case here leaves the reviewer a choice

    stage, html = _page()
    assert _data(html)["cases"][2]["choices"] == ["same", "better", "worse"]
    assert _section(html, "notes-capture-committed").count('type="radio"') == 3
    assert allowed_comparisons(stage.report.cases[0]) == (
        ["candidate-only"], "the skill is new in the candidate: there is no prior release to compare with")


def test_stage_text_is_escaped_and_long_output_is_cut_with_a_count():
    long = "x" * (SHOWN_CHARS + 123)
    _, html = _page(transcript=XSS + long)
    assert "<script>window.__xss" not in html
    assert "&lt;/pre&gt;&lt;script&gt;window.__xss=1&lt;/script&gt;" in html
    assert f"{len(XSS) + 123} more characters in the raw evidence." in html
    assert "x" * (SHOWN_CHARS + 1) not in html


def test_a_failed_command_is_marked_and_its_output_shown():
    _, html = _page(exit_codes={"validate-notes-store": 1})
    section = _section(html, "notes-capture-local")
    assert section.count('<tr class="bad">') == 2  # the failed validation in both arms
    assert "invalid" in section
    assert "{&#34;valid&#34;: false}" in section
    # graded by the runner's predicates: validation fails in both arms, the other two assertions pass
    assert section.count('<span class="badge fail">fail</span> <span class="muted">exited 1</span>') == 2
    assert section.count('<span class="badge pass">pass</span>') == 4
    assert "exited 0 and git status unchanged" in section


def test_without_definitions_the_page_says_how_to_get_them():
    _, html = _page(cases={})
    assert "4 cases shown without prompt, expected observation and assertions" in html
    assert "registry copy has no definition" in html
    assert "Deterministic assertions" not in html


def test_a_registry_that_disagrees_with_the_stage_is_refused():
    defs = sample_cases()
    stage = make_stage(defs, {})
    other = dict(defs)
    other["notes-audit-local"] = defs["notes-audit-local"].model_copy(update={"storage_mode": "committed"})
    with pytest.raises(InputError, match="notes-audit-local.*storage_mode 'committed'.*'local'"):
        render_worksheet(stage, {}, cases=other)


def test_the_storage_key_follows_the_seal():
    stage, html = _page()
    assert _data(html)["storageKey"] == worksheet_key(stage.seal)
    changed = make_stage(sample_cases(), {}, questions={"notes-audit-local": ["A different question?"]})
    assert worksheet_key(changed.seal) != worksheet_key(stage.seal)


def test_the_skill_each_arm_ran_is_shown_and_opened_where_the_arms_differ():
    defs = sample_cases()
    stage = make_stage(defs, {})
    skills = {("notes-capture-committed", "candidate"): "---\nname: notes-capture\n---\nrun tasknote validate\n",
              ("notes-capture-committed", "baseline"): "---\nname: notes-capture\n---\nadd the note\n",
              ("notes-capture-local", "candidate"): "same text\n", ("notes-capture-local", "baseline"): "same text\n"}
    html = render_worksheet(stage, {}, cases=defs, skills=skills)
    changed, unchanged = _section(html, "notes-capture-committed"), _section(html, "notes-capture-local")
    assert changed.count('<details class="skill" open>') == 2 and changed.count("differs between the arms") == 2
    assert "run tasknote validate" in changed and "add the note" in changed
    assert unchanged.count('<details class="skill">') == 2 and "differs between the arms" not in unchanged
    assert '<details class="skill"' not in _section(html, "notes-audit-local")  # no text given, none shown
