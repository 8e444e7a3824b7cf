"""The bundled sample (data/skilleval): the tool behaves as its README says, the registry and skills are
what a release evaluation needs, the recorded answers fit, and the whole chain runs to a passing report."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.cli.main import main
from evalkit.contract_files import read_model
from evalkit.contracts.skilleval import SkillEvalAnswers, SkillEvalReport
from evalkit.skilleval import load_registry, tree_digest

from .arms_world import GIT
from .arms_world import git as arms_git

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "skilleval"
TOOL = SAMPLE / "tool" / "tasknote"
REGISTRY = SAMPLE / "registry"
GATES = ("command", "cross-platform", "lifecycle", "machine-api", "parity", "security")


def tasknote(cwd: Path, *args: str) -> tuple[int, dict]:
    done = subprocess.run([sys.executable, str(TOOL), *args], cwd=cwd, capture_output=True, text=True, check=False)
    return done.returncode, json.loads(done.stdout)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def product_args(tmp_path: Path, *, same_baseline: bool = True) -> list[str]:
    """What a run of the sample needs besides its folders: the tool taken from a clean product checkout (a
    repository holding the sample's tool, one commit on main), git, the product and its HEAD."""
    product = tmp_path / "product"
    (product / "tool").mkdir(parents=True)
    shutil.copy2(TOOL, product / "tool" / "tasknote")
    head = product_head(product)
    return ["--bin", f"tasknote={product / 'tool' / 'tasknote'}", "--bin", f"git={GIT}", "--product", str(product),
            "--tested-head", head, *(["--same-baseline-bin"] if same_baseline else [])]


def product_head(product: Path) -> str:
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-q", "-m", "tasknote 0.2.0")):
        arms_git(product, *args)
    return arms_git(product, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path):
    git(tmp_path, "init", "--quiet")
    return tmp_path


def test_the_tool_is_an_executable_script_of_the_standard_library():
    assert os.access(TOOL, os.X_OK)
    assert TOOL.read_text(encoding="utf-8").startswith("#!/usr/bin/env python3\n")
    assert len(TOOL.read_text(encoding="utf-8").splitlines()) < 130


def test_committed_mode_tracks_notes_and_validates(repo):
    assert tasknote(repo, "init", "--json") == (0, {"initialised": True, "mode": "committed",
                                                    "storage": ".tasknote/notes.json"})
    code, out = tasknote(repo, "add", "Ship 0.2 on Friday", "--json")
    assert (code, out["added"]) == (0, {"id": "N-001", "text": "Ship 0.2 on Friday"})
    assert tasknote(repo, "add", "Release branch is main", "--json")[1]["added"]["id"] == "N-002"
    assert tasknote(repo, "validate", "--json") == (0, {"mode": "committed", "problems": [], "valid": True})
    assert "?? .tasknote/" in git(repo, "status", "--porcelain=v1")  # committed mode: Git sees the notes
    first = (repo / ".tasknote" / "notes.json").read_bytes()
    assert tasknote(repo, "init", "--json")[0] == 2  # never re-initialised over existing notes
    assert (repo / ".tasknote" / "notes.json").read_bytes() == first


def test_local_mode_hides_notes_from_git_and_ignores_a_stale_copy(repo):
    stale = {"notes": [{"id": "N-001", "text": "stale"}], "schema": 1}
    (repo / ".tasknote").mkdir()
    (repo / ".tasknote" / "notes.json").write_text(json.dumps(stale), encoding="utf-8")
    git(repo, "add", "--all")
    assert tasknote(repo, "init", "--local", "--json")[1]["storage"] == ".git/tasknote/notes.json"
    assert tasknote(repo, "add", "fresh", "--json")[1]["added"] == {"id": "N-001", "text": "fresh"}
    assert tasknote(repo, "list", "--json") == (0, {"mode": "local", "notes": [{"id": "N-001", "text": "fresh"}]})
    assert json.loads((repo / ".tasknote" / "notes.json").read_text(encoding="utf-8")) == stale
    assert git(repo, "status", "--porcelain=v1") == "A  .tasknote/notes.json\n"  # the local store is invisible


def test_validate_reports_a_broken_store_and_add_refuses_it(repo):
    tasknote(repo, "init", "--local", "--json")
    (repo / ".git" / "tasknote" / "notes.json").write_text('{"schema": 1, "notes": [{"id": "N-007", "text": "x"}]}',
                                                          encoding="utf-8")
    assert tasknote(repo, "validate", "--json") == (
        1, {"mode": "local", "problems": ["notes[0].id: expected N-001, got 'N-007'"], "valid": False})
    assert tasknote(repo, "add", "more", "--json")[0] == 1
    assert tasknote(repo, "add", "more")[0] == 2  # --json is required


def test_the_registry_covers_both_skills_in_both_modes_and_classifies_the_new_one():
    registry = load_registry(REGISTRY)
    assert [(c.case.skill, c.case.storage_mode, c.case.baseline_required) for c in registry.cases] == [
        ("notes-audit", "committed", False), ("notes-audit", "local", False),
        ("notes-capture", "committed", True), ("notes-capture", "local", True)]
    assert registry.policy.baseline_skills == ["notes-capture"]
    assert {c.seed.decoy.path for c in registry.cases if c.seed.storage_mode == "local"} == {".tasknote/notes.json"}
    assert main(["skill-eval", "validate", str(REGISTRY)]) == 0


def test_the_candidate_differs_from_the_baseline_and_both_lint_clean():
    candidate, baseline = SAMPLE / "skills" / "candidate", SAMPLE / "skills" / "baseline"
    assert sorted(p.name for p in candidate.iterdir()) == ["notes-audit", "notes-capture"]
    assert sorted(p.name for p in baseline.iterdir()) == ["notes-capture"]
    new, old = (d / "notes-capture" / "SKILL.md" for d in (candidate, baseline))
    assert "tasknote validate --json" in new.read_text(encoding="utf-8")
    assert "validate" not in old.read_text(encoding="utf-8")
    assert tree_digest(candidate / "notes-capture", "evalkit-skill-eval-skill-v1") != \
        tree_digest(baseline / "notes-capture", "evalkit-skill-eval-skill-v1")
    for skills in (candidate, baseline):
        assert main(["skill-eval", "lint", str(skills), "--policy", str(REGISTRY / "policy.json")]) == 0


def test_the_recorded_answers_answer_exactly_the_registry_cases():
    answers = read_model(SAMPLE / "answers.json", SkillEvalAnswers)
    cases = {c.case.case_id: c.case for c in load_registry(REGISTRY).cases}
    assert [a.case_id for a in answers.cases] == sorted(cases)
    for answer in answers.cases:
        expected = ("same", "better", "worse") if cases[answer.case_id].baseline_required else ("candidate-only",)
        assert answer.comparison in expected


@pytest.mark.slow
def test_the_chain_runs_to_a_passing_report(tmp_path, capsys):
    if shutil.which("git") is None:
        pytest.skip("the sample's fixtures are Git repositories: install git")
    stage, out = tmp_path / "stage", tmp_path / "out"
    assert main(["skill-eval", "run", str(REGISTRY), "--candidate", str(SAMPLE / "skills" / "candidate"),
                 "--baseline", str(SAMPLE / "skills" / "baseline"), "--adapter", "script",
                 "--out", str(stage), "--session-id", "sample-release-0-2",
                 "--generated-at", "2026-11-30T09:00:00Z", *product_args(tmp_path)]) == 0
    assert main(["skill-eval", "worksheet", str(stage), "--out", str(out / "worksheet.html")]) == 0
    assert main(["skill-eval", "resume", str(stage), "--answers", str(SAMPLE / "answers.json"),
                 "--out", str(out / "report.json")]) == 0
    report = read_model(out / "report.json", SkillEvalReport)
    assert report.outcome == "pass"
    assert [(c.case_id, c.comparison, c.baseline is None) for c in report.cases] == [
        ("notes-audit-committed", "candidate-only", True), ("notes-audit-local", "candidate-only", True),
        ("notes-capture-committed", "better", False), ("notes-capture-local", "same", False)]
    assert all(c.candidate.deterministic_grade == "pass" for c in report.cases)
    assert main(["skill-eval", "report-page", str(out / "report.json"), "--out", str(out / "report.html")]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert '<span class="verdict pass">pass</span>' in page and "sample-release-0-2" in page
    worksheet = (out / "worksheet.html").read_text(encoding="utf-8")
    assert worksheet.count('<section class="card case"') == 4
    assert "Record the decision" in worksheet and "exited 0 and validated" in worksheet
    assert worksheet.count("Decoy planted in each arm's sandbox: <code>.tasknote/notes.json</code>") == 2


@pytest.mark.slow
def test_a_baseline_tool_that_cannot_start_leaves_the_paired_cases_inconclusive(tmp_path, capsys):
    broken = tmp_path / "tasknote-0.1"
    broken.write_text("#!/bin/sh\necho '{\"error\": \"cannot start\"}'\nexit 2\n", encoding="utf-8")
    broken.chmod(0o755)
    mirror = shutil.copytree(SAMPLE / "skills" / "candidate", tmp_path / "mirror")  # the committed copy
    stage, out = tmp_path / "stage", tmp_path / "out"
    assert main(["skill-eval", "run", str(REGISTRY), "--candidate", str(SAMPLE / "skills" / "candidate"),
                 "--baseline", str(SAMPLE / "skills" / "baseline"), "--adapter", "script",
                 "--baseline-bin", f"tasknote={broken}", "--out", str(stage),
                 "--session-id", "broken-baseline", "--generated-at", "2026-11-30T09:00:00Z",
                 "--mirror", str(mirror), *product_args(tmp_path, same_baseline=False),
                 *[f"--gate={gate}" for gate in GATES]]) == 0
    assert main(["skill-eval", "worksheet", str(stage), "--out", str(out / "worksheet.html")]) == 0
    page = (out / "worksheet.html").read_text(encoding="utf-8")
    start = page.index('id="case-notes-capture-local"')
    capture = page[start:page.index("</section>", start)]
    assert '<span class="badge fixed" data-fixed="inconclusive">' in capture
    assert "required evidence missing or incomplete: baseline arm" in capture
    assert "No evidence: this arm did not run or its adapter failed" in capture

    recorded = json.loads((SAMPLE / "answers.json").read_text(encoding="utf-8"))
    capsys.readouterr()
    assert main(["skill-eval", "resume", str(stage), "--answers", str(SAMPLE / "answers.json"),
                 "--out", str(out / "report.json")]) == 1  # "better" cannot be claimed without a baseline
    assert "notes-capture-committed" in capsys.readouterr().err
    for answer in recorded["cases"]:
        if answer["case_id"].startswith("notes-capture"):
            answer["comparison"] = "inconclusive"
    (out / "answers.json").write_text(json.dumps(recorded), encoding="utf-8")
    assert main(["skill-eval", "resume", str(stage), "--answers", str(out / "answers.json"),
                 "--out", str(out / "report.json")]) == 3
    report = read_model(out / "report.json", SkillEvalReport)
    assert report.outcome == "incomplete"
    assert [c.baseline for c in report.cases if c.baseline_required] == [None, None]

    waiver = {"approver": "Release maintainer R. Osei", "reason": "The 0.1.0 tool binary no longer starts.",
              "unavailable_capability": "a runnable tasknote 0.1.0", "affected_skills": ["notes-capture"],
              "affected_cases": ["notes-capture-committed", "notes-capture-local"],
              "residual_risk": "A regression in notes-capture against 0.1.0 would go unnoticed.",
              "compensating_evidence": ["both candidate notes-capture arms passed every assertion"],
              "followup": "issue 7: rebuild tasknote 0.1.0 and rerun the notes-capture cases"}
    (out / "waiver.json").write_text(json.dumps(waiver), encoding="utf-8")
    assert main(["skill-eval", "resume", str(stage), "--answers", str(out / "answers.json"),
                 "--waiver", str(out / "waiver.json"), "--out", str(out / "waived.json")]) == 0
    waived = read_model(out / "waived.json", SkillEvalReport)
    assert waived.outcome == "waived"
    assert main(["skill-eval", "report-page", str(out / "waived.json"), "--out", str(out / "waived.html")]) == 0
    page = (out / "waived.html").read_text(encoding="utf-8")
    assert "Waived by Release maintainer R. Osei: the evidence alone gives &#39;incomplete&#39;" in page
    assert "issue 7: rebuild tasknote 0.1.0" in page and page.count('<span class="cell missing">missing</span>') == 2


@pytest.mark.slow
def test_the_stand_in_agent_follows_each_arms_skill_through_the_command_adapter(tmp_path):
    agent = SAMPLE / "agent" / "follow-skill"
    assert os.access(agent, os.X_OK)
    stage = tmp_path / "stage"
    assert main(["skill-eval", "run", str(REGISTRY), "--candidate", str(SAMPLE / "skills" / "candidate"),
                 "--baseline", str(SAMPLE / "skills" / "baseline"), "--adapter", "command",
                 "--agent-command", f"{agent} {{prompt}}", "--out", str(stage),
                 "--session-id", "stand-in-agent", "--generated-at", "2026-11-30T09:00:00Z",
                 *product_args(tmp_path)]) == 0
    raw = stage / "raw" / "notes-capture-local"
    candidate = (raw / "candidate" / "transcript.txt").read_text(encoding="utf-8")
    baseline = (raw / "baseline" / "transcript.txt").read_text(encoding="utf-8")
    assert [line for line in candidate.splitlines() if line.startswith("$ ")] == [
        "$ tasknote list --json", "$ tasknote add 'Ship 0.2 on Friday' --json", "$ tasknote validate --json"]
    assert [line for line in baseline.splitlines() if line.startswith("$ ")] == [
        "$ tasknote add 'Ship 0.2 on Friday' --json"]
    assert candidate.endswith("answer: recorded as N-001.\n") and baseline.endswith("answer: recorded as N-001.\n")
    assert main(["skill-eval", "worksheet", str(stage), "--out", str(tmp_path / "worksheet.html")]) == 0
    page = (tmp_path / "worksheet.html").read_text(encoding="utf-8")
    assert page.count("$ tasknote validate --json") == 2 + 2  # candidate arms of both capture cases, both audits
    assert main(["skill-eval", "resume", str(stage), "--answers", str(SAMPLE / "answers.json"),
                 "--out", str(tmp_path / "report.json")]) == 0
    assert read_model(tmp_path / "report.json", SkillEvalReport).outcome == "pass"


@pytest.mark.slow
def test_a_file_changed_in_a_sandbox_after_the_run_is_refused_by_name(tmp_path, capsys):
    stage = tmp_path / "stage"
    assert main(["skill-eval", "run", str(REGISTRY), "--candidate", str(SAMPLE / "skills" / "candidate"),
                 "--baseline", str(SAMPLE / "skills" / "baseline"), "--adapter", "script",
                 "--out", str(stage), *product_args(tmp_path)]) == 0
    installed = stage / "raw" / "notes-capture-local" / "baseline" / "sandbox" / ".agents" / "skills" / "notes-capture"
    (installed / "SKILL.md").write_text("---\nname: notes-capture\n---\nrewritten after the run\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["skill-eval", "worksheet", str(stage), "--out", str(tmp_path / "worksheet.html")]) == 1
    err = capsys.readouterr().err
    assert "raw evidence in raw/notes-capture-local/baseline changed since the stage was sealed " \
           "(sandbox/.agents/skills/notes-capture/SKILL.md changed); refusing to resume" in err
    assert not (tmp_path / "worksheet.html").exists()
