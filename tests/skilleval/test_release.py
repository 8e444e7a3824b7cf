"""A release from run to report: the provenance sentinel, resume's fresh snapshot, the final case set,
exit codes a pipeline reads, and step 5 (an agent's proposal, written as a diff, applied never)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from evalkit.cli.main import main
from evalkit.errors import InputError
from evalkit.skilleval import bind, read_stage, run_stage
from evalkit.skilleval.adapters import CommandAdapter
from evalkit.skilleval.confine import confinement

from .arms_world import GIT, case_doc, world, write_tool

ANSWERS = {"schema_version": 1, "human_review": "Looked at every arm.",
           "cases": [{"case_id": f"tally-{m}", "human_review": "Fine.", "comparison": "candidate-only"}
                     for m in ("committed", "local")]}


def _tally(tmp_path, **plan):
    return world(tmp_path, [case_doc("tally", m) for m in ("committed", "local")], **plan)


def _answers(tmp_path):
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(ANSWERS))
    return path


@pytest.mark.slow
def test_an_arm_that_replaces_the_fixture_repository_loses_its_provenance(tmp_path):
    agent = write_tool(tmp_path / "agentbin", "agent",
                       "import os, sys\nos.remove('.git/skill-eval-provenance') if 'local' in sys.argv[1] else None\n")
    plan = _tally(tmp_path, adapter=CommandAdapter(bind("agent", str(agent)), ["agent", "{sandbox}"], 20.0))
    lines: list[str] = []
    stage = read_stage(run_stage(plan, lines.append).parent)
    assert lines[1].startswith("tally-committed candidate: pass")  # a committed fixture has no sentinel
    assert lines[2].startswith("tally-local candidate: missing (adapter error: ")
    assert "provenance: the Git provenance sentinel .git/skill-eval-provenance is gone after the arm" in lines[2]
    assert stage.report.cases[1].candidate is None
    sentinel = plan.out / "raw" / "tally-committed" / "candidate" / "sandbox" / ".git" / "skill-eval-provenance"
    assert not sentinel.exists()
    kept = plan.out / "raw" / "tally-local" / "candidate" / "log.txt"
    assert "planted the Git provenance sentinel .git/skill-eval-provenance" in kept.read_text()


@pytest.mark.slow
def test_resume_digests_the_inputs_again_and_refuses_a_change(tmp_path, capsys):
    plan = _tally(tmp_path)
    run_stage(plan)
    args = ["skill-eval", "resume", str(plan.out), "--answers", str(_answers(tmp_path)), "--out",
            str(tmp_path / "report.json")]
    assert main(args) == 0
    skill = plan.candidate_dir / "tally" / "SKILL.md"
    skill.write_text(skill.read_text() + "\nA late edit.\n")
    assert main(args) == 1
    assert f"{plan.candidate_dir}: the candidate skills changed since the run" in capsys.readouterr().err
    shutil.rmtree(plan.registry.root)
    assert main([*args, "--candidate", str(tmp_path / "candidate")]) == 1
    assert "the registry the run used are gone; give --registry DIR" in capsys.readouterr().err


@pytest.mark.slow
def test_a_final_case_set_is_recorded_and_the_report_page_exits_by_outcome(tmp_path, capsys):
    plan = _tally(tmp_path)
    policy = json.loads((plan.registry.root / "policy.json").read_text())
    (plan.registry.root / "policy.json").write_text(json.dumps({**policy, "final": True}))
    plan = _tally(tmp_path / "again")
    (plan.registry.root / "policy.json").write_text(json.dumps({**policy, "final": True}))
    from evalkit.skilleval import load_registry
    plan.registry = load_registry(plan.registry.root)
    stage = read_stage(run_stage(plan).parent)
    assert stage.report.release.final_case_set
    assert main(["skill-eval", "resume", str(plan.out), "--answers", str(_answers(tmp_path)), "--out",
                 str(tmp_path / "report.json")]) == 0
    assert json.loads((tmp_path / "report.json").read_text())["release"] == {
        "baseline_executable": "unused", "confined": confinement() is not None, "final_case_set": True,
        "provenance_verified": True, "uncovered_skills": [],
        "watched": ["the caller's global Git config", "the caller's Git config folder", "the system Git config",
                    "the registry", "the candidate skills", "the baseline skills", "the product"]}
    assert main(["skill-eval", "report-page", str(tmp_path / "report.json"), "--out", str(tmp_path / "r.html")]) == 0
    value = json.loads((tmp_path / "report.json").read_text())
    value["release"]["provenance_verified"] = False  # as --allow-dirty records it
    (tmp_path / "dirty.json").write_text(json.dumps(value))
    assert main(["skill-eval", "report-page", str(tmp_path / "dirty.json"), "--out", str(tmp_path / "d.html")]) == 4
    page = (tmp_path / "d.html").read_text()
    assert '<span class="cell fail">not releasable</span>: provenance not verified' in page
    assert "final case set, untouched" in page and '<tr data-gate="lifecycle">' in page


FIXER = """\
import pathlib, sys
skills = pathlib.Path(sys.argv[1])
evidence = pathlib.Path(sys.argv[2])
failing = sorted(p.name for p in evidence.iterdir())
skill = skills / "tally" / "SKILL.md"
skill.write_text(skill.read_text() + "Never run `notekeep fail`.\\n")
(skills / "tally" / "NOTES.md").write_text("failing: " + ", ".join(failing) + "\\n")
if len(sys.argv) > 3:
    (pathlib.Path(sys.argv[3]) / "tally" / "SKILL.md").write_text("edited in place\\n")
"""


@pytest.mark.slow
def test_propose_writes_the_agents_change_as_a_diff_and_applies_nothing(tmp_path, capsys):
    actions = [{"id": "break-on-purpose", "operation": "notekeep-command", "command": ["notekeep", "fail", "--json"]}]
    plan = world(tmp_path, [case_doc("tally", m, actions=actions) for m in ("committed", "local")])
    run_stage(plan)
    before = (plan.candidate_dir / "tally" / "SKILL.md").read_bytes()
    agent = write_tool(tmp_path / "agentbin", "fixer", FIXER)
    args = ["skill-eval", "propose", str(plan.out), "--candidate", str(plan.candidate_dir), "--out",
            str(tmp_path / "proposal.diff")]
    assert main([*args, "--agent-command", f"{agent} {{skills}} {{evidence}}"]) == 0
    out = capsys.readouterr().out
    assert "2 file(s) changed by the agent (exit 0); nothing was applied" in out
    patch = (tmp_path / "proposal.diff").read_text()
    assert "--- a/tally/SKILL.md\n+++ b/tally/SKILL.md\n" in patch and "+Never run `notekeep fail`.\n" in patch
    assert "--- /dev/null\n+++ b/tally/NOTES.md\n@@ -0,0 +1 @@\n+failing: tally-committed, tally-local\n" in patch
    applied = shutil.copytree(plan.candidate_dir, tmp_path / "applied")  # what a maintainer would do
    subprocess.run([GIT, "apply", str(tmp_path / "proposal.diff")], cwd=applied, check=True)
    assert (applied / "tally" / "SKILL.md").read_text().endswith("Never run `notekeep fail`.\n")
    assert (plan.candidate_dir / "tally" / "SKILL.md").read_bytes() == before
    assert not (plan.candidate_dir / "tally" / "NOTES.md").exists()
    # an agent that edits the shipped skills in place: confined, the file system refuses the write; unconfined,
    # the digests taken before and after catch it, and nothing is written
    code = main([*args[:-1], str(tmp_path / "second.diff"), "--agent-command",
                 f"{agent} {{skills}} {{evidence}} {plan.candidate_dir}"])
    if confinement() is not None:
        assert code == 0 and "(exit 1)" in capsys.readouterr().out
        assert (plan.candidate_dir / "tally" / "SKILL.md").read_bytes() == before
    else:
        assert code == 1
        assert "the candidate skills changed while the agent ran: a proposal never edits them" in \
            capsys.readouterr().err
        assert not (tmp_path / "second.diff").exists()
    (plan.candidate_dir / "tally" / "SKILL.md").write_bytes(before)
    with pytest.raises(InputError, match="must start with the agent's path"):
        from evalkit.skilleval import propose_patch
        propose_patch(plan.out, plan.candidate_dir, "fixer {skills}", tmp_path / "x.diff")


def test_the_report_contract_keeps_uncovered_skills_and_gates_honest():
    from pathlib import Path

    from pydantic import ValidationError

    from evalkit.contracts.skilleval import SkillEvalReport

    example = Path(__file__).resolve().parents[2] / "examples" / "contracts" / "skill-eval-report.json"
    waived = json.loads(example.read_text())
    assert waived["outcome"] == "waived"
    release = {"provenance_verified": True, "baseline_executable": "distinct", "final_case_set": False,
               "uncovered_skills": [], "confined": True, "watched": ["the registry"]}
    SkillEvalReport.model_validate({**waived, "release": release})
    with pytest.raises(ValidationError, match="a waiver never covers skills without cases"):
        SkillEvalReport.model_validate({**waived, "release": {**release, "uncovered_skills": ["notes-export"]}})
    checks = waived["deterministic_checks"]
    gates = [{"name": n, "outcome": "pass", "checked": "all", "problems": []} for n in checks["evidence"]]
    SkillEvalReport.model_validate({**waived, "deterministic_checks": {**checks, "gates": gates}})
    gates[0]["outcome"] = "not-run"  # a gate that did not run is no evidence
    with pytest.raises(ValidationError, match="deterministic_checks.evidence: must be the gates that ran"):
        SkillEvalReport.model_validate({**waived, "deterministic_checks": {**checks, "gates": gates}})
    gates[0]["outcome"] = "fail"
    with pytest.raises(ValidationError, match="deterministic_checks.outcome: must be 'fail' by its gates"):
        SkillEvalReport.model_validate({**waived, "deterministic_checks": {**checks, "gates": gates}})



@pytest.mark.slow
def test_run_exits_1_when_the_outcome_is_already_fail_and_refuses_an_unknown_gate(tmp_path, capsys):
    actions = [{"id": "break-on-purpose", "operation": "notekeep-command", "command": ["notekeep", "fail", "--json"]}]
    plan = world(tmp_path, [case_doc("tally", m, actions=actions) for m in ("committed", "local")])
    args = ["skill-eval", "run", str(plan.registry.root), "--candidate", str(plan.candidate_dir), "--baseline",
            str(plan.baseline_dir), "--adapter", "script", "--out", str(plan.out), "--bin",
            f"notekeep={plan.executables['candidate']['notekeep'].path}", "--bin", f"git={GIT}",
            "--product", str(plan.product_dir), "--tested-head", plan.tested_head]
    assert main(args) == 1
    assert f"stage sealed: {plan.out / 'stage.json'} (outcome so far: fail)" in capsys.readouterr().out
    plan.gates, plan.out = ["i-made-this-up"], tmp_path / "stage2"
    with pytest.raises(InputError, match="--gate: unknown gate\\(s\\) i-made-this-up; evalkit runs the gates"):
        run_stage(plan)
