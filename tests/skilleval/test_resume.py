"""Resuming into the report: the comparison rules, the outcome and waiver tables, safe summaries, rendering."""

from __future__ import annotations

import hashlib
import json

import pytest

from evalkit.contracts.skilleval import (
    CaseAnswer,
    SkillEvalAnswers,
    SkillEvalReport,
    SkillEvalStage,
    Waiver,
    stage_seal,
)
from evalkit.errors import InputError
from evalkit.skilleval import bind_all, build_report, render_report, resume, run_stage

from .arms_world import GIT, world, write_tool

EXE = hashlib.sha256(b"tool").hexdigest()
GATES = ["command", "cross-platform", "lifecycle", "machine-api", "parity", "security"]  # as written, not imported


def arm(outcome="pass", grade=None):
    return {"outcome": outcome, "deterministic_grade": grade or ("fail" if outcome == "fail" else "pass"),
            "skill_sha256": "1" * 64, "executable_sha256": EXE, "raw_sha256": "2" * 64}


def make_stage(cases, *, checks="pass", evidence=("registry",)):
    """A sealed stage; ``cases`` is [(case_id, skill, baseline_required, candidate, baseline)]."""
    report_cases = [{"case_id": cid, "skill": skill, "storage_mode": "committed", "fixture_sha256": "3" * 64,
                     "baseline_required": required, "candidate": cand, "baseline": base,
                     "comparison": "inconclusive", "human_review": None}
                    for cid, skill, required, cand, base in cases]
    failed = checks == "fail" or any(c[3] is not None and "fail" in c[3].values() for c in cases)
    report = {"schema_version": 1, "session_id": "s", "generated_at": "2026-01-31T12:00:00Z", "tested_head": "a" * 40,
              "candidate_executable_sha256": EXE, "baseline_executable_sha256": EXE, "product_sha256": "4" * 64,
              "outcome": "fail" if failed else "incomplete",
              "candidate": {"version": "v2", "skills_sha256": "5" * 64},
              "baseline": {"version": "v1", "skills_sha256": "6" * 64}, "fixtures_sha256": "7" * 64,
              "adapter": {"name": "script", "version": "1", "observed": any(c[3] or c[4] for c in cases)},
              "model": {}, "cases": report_cases,
              "deterministic_checks": {"outcome": checks, "evidence": sorted(evidence)},
              "human_review": None, "waiver": None}
    worksheet = [{"case_id": c["case_id"], "skill": c["skill"], "human_review_questions": ["Was it right?"],
                  "candidate": c["candidate"], "baseline": c["baseline"]} for c in report_cases]
    body = {"schema_version": 1, "report": report, "worksheet": worksheet}
    return SkillEvalStage.model_validate({**body, "seal": stage_seal(body)})


def answers(*pairs, review="Reviewed every case."):
    return SkillEvalAnswers.model_validate({"schema_version": 1, "human_review": review, "cases": [
        {"case_id": cid, "comparison": comparison, "human_review": f"Notes on {cid}."} for cid, comparison in pairs]})


PAIRED = ("a-committed", "a", True)
NEW = ("b-committed", "b", False)

OUTCOMES = [
    # (cases, answers, deterministic checks, expected outcome)
    ([(*PAIRED, arm(), arm()), (*NEW, arm(), None)], [("a-committed", "same"), ("b-committed", "candidate-only")],
     "pass", "pass"),
    ([(*PAIRED, arm(), arm())], [("a-committed", "better")], "pass", "pass"),
    ([(*PAIRED, arm(), arm()), (*NEW, arm(), None)], [("a-committed", "worse"), ("b-committed", "candidate-only")],
     "pass", "fail"),
    ([(*PAIRED, arm("fail"), arm())], [("a-committed", "same")], "pass", "fail"),
    ([(*PAIRED, arm(), arm())], [("a-committed", "same")], "fail", "fail"),
    ([(*PAIRED, arm(), None)], [("a-committed", "inconclusive")], "pass", "incomplete"),
    ([(*PAIRED, None, None)], [("a-committed", "inconclusive")], "pass", "incomplete"),
    ([(*NEW, arm("incomplete", "pass"), None)], [("b-committed", "inconclusive")], "pass", "incomplete"),
    ([(*PAIRED, arm(), arm("incomplete", "pass"))], [("a-committed", "inconclusive")], "pass", "incomplete"),
    # fail beats incomplete: one failed candidate, another case missing its baseline
    ([(*PAIRED, arm(), None), (*NEW, arm("fail"), None)], [("a-committed", "inconclusive"),
                                                            ("b-committed", "candidate-only")], "pass", "fail"),
    # a failed baseline is evidence, not a failure of the candidate
    ([(*PAIRED, arm(), arm("fail"))], [("a-committed", "better")], "pass", "pass"),
]


@pytest.mark.parametrize(("cases", "given", "checks", "expected"), OUTCOMES)
def test_outcome_table(cases, given, checks, expected):
    report = build_report(make_stage(cases, checks=checks), answers(*given), None)
    assert report["outcome"] == expected
    assert [c["comparison"] for c in report["cases"]] == [comparison for _, comparison in given]
    assert report["waiver"] is None and report["human_review"] == "Reviewed every case."


@pytest.mark.parametrize(("case", "given", "allowed"), [
    ((*PAIRED, arm(), arm()), "candidate-only", "'same' or 'better' or 'worse'"),
    ((*PAIRED, arm(), arm()), "inconclusive", "'same' or 'better' or 'worse'"),
    ((*NEW, arm(), None), "same", "'candidate-only'"),
    ((*PAIRED, arm(), None), "better", "'inconclusive'"),
    ((*NEW, None, None), "candidate-only", "'inconclusive'"),
])
def test_comparison_must_be_what_the_evidence_allows(case, given, allowed):
    with pytest.raises(InputError, match="the evidence allows only " + allowed) as err:
        build_report(make_stage([case]), answers((case[0], given)), None, answers_file="a.json")
    assert (err.value.file, err.value.path) == ("a.json", "cases[0].comparison")


def test_every_staged_case_needs_exactly_one_answer():
    stage = make_stage([(*PAIRED, arm(), arm()), (*NEW, arm(), None)])
    with pytest.raises(InputError, match="no answer for staged case\\(s\\) b-committed"):
        build_report(stage, answers(("a-committed", "same")), None)
    with pytest.raises(InputError, match="'c-committed' is not a staged case"):
        build_report(stage, answers(("a-committed", "same"), ("b-committed", "candidate-only"),
                                    ("c-committed", "same")), None)


def waiver(**changes):
    base = {"approver": "Release Maintainer", "reason": "no model credentials on the release machine",
            "unavailable_capability": "behavioural agent runs", "affected_skills": ["a"],
            "affected_cases": ["a-committed"], "residual_risk": "the baseline comparison is unknown",
            "compensating_evidence": ["script adapter run passed", "skill lint passed"],
            "followup": "issue 42"}
    return Waiver.model_validate({**base, **changes})


INCOMPLETE = [(*PAIRED, arm(), None), (*NEW, arm(), None)]
INCOMPLETE_ANSWERS = [("a-committed", "inconclusive"), ("b-committed", "candidate-only")]


def test_waiver_turns_exactly_covered_incomplete_evidence_into_waived():
    report = build_report(make_stage(INCOMPLETE, evidence=GATES), answers(*INCOMPLETE_ANSWERS), waiver())
    assert report["outcome"] == "waived"
    assert report["waiver"]["affected_cases"] == ["a-committed"]


@pytest.mark.parametrize(("cases", "given", "stage_args", "changes", "message"), [
    ([(*PAIRED, arm(), arm())], [("a-committed", "same")], {"evidence": GATES}, {},
     "'waived' only replaces 'incomplete', but the evidence gives 'pass'"),
    ([(*PAIRED, arm("fail"), None)], [("a-committed", "inconclusive")], {"evidence": GATES}, {},
     "'waived' only replaces 'incomplete', but the evidence gives 'fail'"),
    (INCOMPLETE, INCOMPLETE_ANSWERS, {"evidence": ["registry"]}, {}, "must name every credential-free gate"),
    (INCOMPLETE, INCOMPLETE_ANSWERS, {"evidence": GATES}, {"affected_cases": ["a-committed", "b-committed"]},
     "must be exactly the inconclusive cases ['a-committed']"),
    (INCOMPLETE, INCOMPLETE_ANSWERS, {"evidence": GATES}, {"affected_skills": ["a", "b"]},
     "must be exactly the skills of the inconclusive cases ['a']"),
    (INCOMPLETE, INCOMPLETE_ANSWERS, {"evidence": GATES},
     {"compensating_evidence": ["skill lint passed", "script adapter run passed"]}, "not sorted"),
    (INCOMPLETE, INCOMPLETE_ANSWERS, {"evidence": GATES}, {"followup": "see /home/me/notes.txt"},
     "producer-local absolute or home path"),
])
def test_waiver_rules(cases, given, stage_args, changes, message):
    with pytest.raises(InputError, match=message.replace("[", "\\[").replace("]", "\\]").replace("(", "\\(")) as err:
        build_report(make_stage(cases, **stage_args), answers(*given), waiver(**changes), waiver_file="w.json")
    assert err.value.file == "w.json"


@pytest.mark.parametrize("text", ["see /etc/passwd", "look in raw/a-committed/candidate", "C:\\Users\\me",
                                  "at ~/work", "(/tmp/x)", "nul\x00byte", "UNC \\\\server\\share", "key=/var/x"])
def test_safe_summary_rule_on_answers(text):
    stage = make_stage([(*PAIRED, arm(), arm())])
    # built without the answers contract's own check, to show the report walk catches every string
    case = {"case_id": "a-committed", "comparison": "same", "human_review": text}
    unchecked = SkillEvalAnswers.model_construct(
        schema_version=1, human_review="Fine.", cases=[CaseAnswer.model_construct(**case)])
    with pytest.raises(InputError, match="unsafe string: cases\\[0\\].human_review: must not") as err:
        build_report(stage, unchecked, None, answers_file="a.json")
    assert err.value.file == "a.json"


def test_report_renders_in_the_seed_field_order():
    report = build_report(make_stage(INCOMPLETE, evidence=GATES), answers(*INCOMPLETE_ANSWERS), waiver())
    text = render_report(report)
    assert text.endswith("}\n") and "\n  \"schema_version\": 1,\n  \"session_id\"" in text
    value = json.loads(text)
    assert list(value) == [f for f in SkillEvalReport.model_fields if f != "schema_uri"]  # no $schema given
    assert list(value["cases"][0]) == ["case_id", "skill", "storage_mode", "fixture_sha256", "baseline_required",
                                       "candidate", "baseline", "comparison", "human_review"]
    assert list(value["waiver"]) == list(Waiver.model_fields)
    assert render_report(value) == text


def _answers_file(tmp_path, name, jot_comparison):
    given = {"schema_version": 1, "human_review": "All arms reviewed.", "cases": [
        {"case_id": "jot-committed", "comparison": jot_comparison, "human_review": "Clearer summary."},
        {"case_id": "jot-local", "comparison": jot_comparison, "human_review": "No difference."},
        {"case_id": "tally-committed", "comparison": "candidate-only", "human_review": "New skill, fine."},
        {"case_id": "tally-local", "comparison": "candidate-only", "human_review": "New skill, fine."}]}
    (tmp_path / name).write_text(json.dumps(given))
    return tmp_path / name, given


@pytest.mark.slow
def test_resume_end_to_end(tmp_path):
    stage_dir = run_stage(world(tmp_path, gates=GATES)).parent
    path, given = _answers_file(tmp_path, "answers.json", "better")
    report = resume(stage_dir, path, tmp_path / "report.json")
    assert report.outcome == "pass"
    assert json.loads((tmp_path / "report.json").read_text())["cases"][0]["comparison"] == "better"
    (tmp_path / "w.json").write_text(json.dumps(waiver().to_json_obj()))
    with pytest.raises(InputError, match="'waived' only replaces 'incomplete', but the evidence gives 'pass'"):
        resume(stage_dir, path, tmp_path / "report2.json", tmp_path / "w.json")
    assert not (tmp_path / "report2.json").exists()
    given["cases"][1]["human_review"] = "compared with /home/me/old-run"
    (tmp_path / "unsafe.json").write_text(json.dumps(given))
    with pytest.raises(InputError, match="must not contain a producer-local absolute or home path") as err:
        resume(stage_dir, tmp_path / "unsafe.json", tmp_path / "report3.json")
    assert err.value.file == str(tmp_path / "unsafe.json")


BROKEN_TOOL = "import sys\nprint('the prior release cannot start here', file=sys.stderr)\nsys.exit(2)\n"


@pytest.mark.slow
def test_missing_baseline_arms_waived_end_to_end(tmp_path):
    plan = world(tmp_path, gates=GATES)
    broken = write_tool(tmp_path / "old-bin", "notekeep", BROKEN_TOOL)
    plan.executables["baseline"] = bind_all(plan.registry.policy.programs(), {"notekeep": str(broken), "git": GIT})
    plan.same_baseline_binary = False
    lines: list[str] = []
    stage_dir = run_stage(plan, lines.append).parent
    assert lines[2].startswith("jot-committed baseline: missing (adapter error: sandbox tool init: notekeep init "
                               "--json exited 2 while creating the sandbox")
    assert "the prior release cannot start here" in (stage_dir / "raw/jot-committed/baseline/log.txt").read_text()
    path, _ = _answers_file(tmp_path, "answers.json", "inconclusive")
    assert resume(stage_dir, path, tmp_path / "report.json").outcome == "incomplete"
    (tmp_path / "w.json").write_text(json.dumps(waiver(affected_skills=["jot"],
                                                       affected_cases=["jot-committed", "jot-local"]).to_json_obj()))
    report = resume(stage_dir, path, tmp_path / "report.json", tmp_path / "w.json")
    assert report.outcome == "waived"
    value = json.loads((tmp_path / "report.json").read_text())
    assert value["outcome"] == "waived" and value["cases"][0]["baseline"] is None
    assert value["baseline_executable_sha256"] != value["candidate_executable_sha256"]
    path, _ = _answers_file(tmp_path, "wrong.json", "same")
    with pytest.raises(InputError, match="jot-committed: the evidence allows only 'inconclusive'"):
        resume(stage_dir, path, tmp_path / "report.json")
