"""Running arms for real: facts, receipts, grades, adapters, the stage, reruns and the CLI."""

from __future__ import annotations

import hashlib
import json
import os
import shutil

import pytest

from evalkit.cli.main import main
from evalkit.contracts.skilleval import SkillEvalStage
from evalkit.errors import InputError
from evalkit.skilleval import arm_evidence, bind, read_stage, run_stage
from evalkit.skilleval.adapters import CommandAdapter, ScriptAdapter
from evalkit.skilleval.facts import render_receipt

from .arms_world import GIT, TOOL, case_doc, git, world, write_skills, write_tool


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    """One real run of the default world, shared read-only by the tests below."""
    tmp = tmp_path_factory.mktemp("runner")
    plan = world(tmp)
    lines: list[str] = []
    path = run_stage(plan, lines.append)
    return tmp, plan, path, lines


@pytest.mark.slow
def test_every_required_arm_runs_once_with_one_progress_line_each(staged):
    tmp, plan, path, lines = staged
    assert lines == [
        "deterministic checks: pass (cross-platform, lifecycle, machine-api, registry, security, skill-lint; "
        "0 lint problem(s)); command not run: the policy has no command table for git-command, notekeep-command "
        "(operations.<operation>.commands); parity not run: no --mirror given: nothing to compare the candidate "
        "skills with",
        "jot-committed candidate: pass, grade pass, 5 commands",
        "jot-committed baseline: pass, grade pass, 5 commands",
        "jot-local candidate: pass, grade pass, 5 commands",
        "jot-local baseline: pass, grade pass, 5 commands",
        "tally-committed candidate: pass, grade pass, 5 commands",
        "tally-local candidate: pass, grade pass, 5 commands",
    ]
    stage = read_stage(path.parent)
    assert [(c.case_id, c.candidate is not None, c.baseline is not None) for c in stage.report.cases] == [
        ("jot-committed", True, True), ("jot-local", True, True),
        ("tally-committed", True, False), ("tally-local", True, False)]
    assert stage.report.outcome == "incomplete"  # nothing reviewed yet
    assert {c.comparison for c in stage.report.cases} == {"inconclusive"}
    assert not (tmp / "stage" / "raw" / "tally-local" / "baseline").exists()


def test_facts_record_what_the_commands_did(staged):
    tmp, _, path, _ = staged
    raw = path.parent / "raw" / "jot-local" / "candidate"
    facts = json.loads((raw / "facts.json").read_text())
    assert [f["action"] for f in facts] == ["setup-1", "setup-2", "add-a-note", "validate-store", "inspect-status"]
    assert [f["operation"] for f in facts] == ["git-command"] * 2 + ["notekeep-command"] * 2 + ["git-command"]
    add, validate, status = facts[2:]
    assert add["command"] == ["notekeep", "add", "buy milk", "--json"]  # the program's name, never its path
    assert add["storage_paths"] == [".git/notekeep/notes.json"]  # local mode writes under .git
    assert add["before_sha256"] != add["after_sha256"]
    stdout = (raw / "commands" / "03-add-a-note.stdout").read_bytes()
    assert json.loads(stdout) == {"added": "buy milk", "count": 1}
    assert add["stdout_sha256"] == hashlib.sha256(stdout).hexdigest()
    assert validate["validation_passed"] is True and add["validation_passed"] is None
    assert status["git_before_sha256"] == status["git_after_sha256"] and status["storage_paths"] == []
    # the decoy was planted and left alone; the skill is installed where agents look for it
    sandbox = raw / "sandbox"
    assert (sandbox / ".notekeep" / "notes.json").read_text() == '{"notes": ["stale"]}\n'
    assert "(v2)" in (sandbox / ".agents" / "skills" / "jot" / "SKILL.md").read_text()
    assert "(v1)" in (path.parent / "raw/jot-local/baseline/sandbox/.agents/skills/jot/SKILL.md").read_text()
    assert not (sandbox / "seed.json").exists() and (sandbox / "README.md").is_file()
    # the receipt is the canonical rendering: seed field order, indent 2, final newline
    assert (raw / "facts.json").read_text() == render_receipt(facts)
    assert list(facts[0]) == ["action", "operation", "command", "exit_code", "stdout_sha256", "stderr_sha256",
                              "before_sha256", "after_sha256", "git_before_sha256", "git_after_sha256",
                              "validation_passed", "storage_paths"]


def test_stage_holds_no_local_path(staged):
    tmp, _, path, _ = staged
    text = path.read_text()
    assert str(tmp) not in text and "/tmp" not in text and "raw/" not in text
    assert text.endswith("}\n") and json.loads(text)["seal"]


def test_arm_evidence_for_the_worksheet(staged):
    _, _, path, _ = staged
    evidence = arm_evidence(path.parent, "jot-committed", "candidate")
    assert [f["action"] for f in evidence.facts][-1] == "inspect-status"
    assert json.loads(evidence.outputs["add-a-note.stdout"]) == {"added": "buy milk", "count": 1}
    assert evidence.outputs["add-a-note.stderr"] == ""
    assert "$ notekeep add 'buy milk' --json\nexit 0" in evidence.transcript
    with pytest.raises(InputError, match="no receipt"):
        arm_evidence(path.parent, "tally-local", "baseline")


@pytest.mark.slow
def test_rerun_with_the_same_injected_time_is_byte_identical(staged, tmp_path):
    _, plan, path, _ = staged
    plan.out = tmp_path / "again"
    again = run_stage(plan)
    assert again.read_bytes() == path.read_bytes()


def test_stage_folder_must_be_new(staged):
    _, plan, path, _ = staged
    plan.out = path.parent
    with pytest.raises(InputError, match="must be new or empty"):
        run_stage(plan)


def test_failing_action_fails_the_candidate_and_the_stage(tmp_path):
    actions = [{"id": "break-on-purpose", "operation": "notekeep-command", "command": ["notekeep", "fail", "--json"]}]
    plan = world(tmp_path, [case_doc("tally", m, actions=actions) for m in ("committed", "local")])
    lines: list[str] = []
    stage = read_stage(run_stage(plan, lines.append).parent)
    assert lines[1] == "tally-committed candidate: fail, grade fail, 3 commands; failed: break-on-purpose holds"
    assert stage.report.outcome == "fail"
    assert stage.report.cases[0].candidate.deterministic_grade == "fail"


@pytest.mark.slow
def test_validation_reads_the_boolean_at_the_pointer(tmp_path):
    # `valid` is the string "yes" when BREAK-VALIDATION exists: not a boolean, so validation fails
    setup = [["notekeep", "add", "BREAK-VALIDATION", "--json"]]
    plan = world(tmp_path, [case_doc("tally", m, setup=setup) for m in ("committed", "local")])
    plan.registry.cases[0].fixture_dir.joinpath("BREAK-VALIDATION").write_text("x")
    lines: list[str] = []
    stage = read_stage(run_stage(plan, lines.append).parent)
    assert "failed: validate-store holds" in lines[1] and lines[2].startswith("tally-local candidate: pass")
    facts = json.loads((plan.out / "raw/tally-committed/candidate/facts.json").read_text())
    assert facts[2]["validation_passed"] is False and facts[2]["exit_code"] == 0
    assert stage.report.outcome == "fail"


class _Tampering(ScriptAdapter):
    """An adapter that runs for real, then breaks its own evidence the way ``tamper`` says."""

    def __init__(self, tamper):
        self.tamper = tamper

    def run(self, request):
        result = super().run(request)
        self.tamper(request.arm_dir, result.facts)
        return result


def _rewrite(folder, facts):
    (folder / "facts.json").write_text(render_receipt(facts))


TAMPERS = {
    "missing receipt": (lambda d, f: (d / "facts.json").unlink(), "missing receipt"),
    "not canonical": (lambda d, f: (d / "facts.json").write_text(json.dumps(f, sort_keys=True)),
                      "does not round-trip"),
    "differs from returned": (lambda d, f: _rewrite(d, [*f[:-1], {**f[-1], "exit_code": 0, "action": "x"}]),
                              "differs from the facts the adapter returned"),
    "extra fact": (lambda d, f: (f.append({**f[-1], "action": "sneaky-extra"}), _rewrite(d, f)), "extra fact"),
    "missing fact": (lambda d, f: (f.pop(), _rewrite(d, f)), "missing fact"),
    "fabricated fact": (lambda d, f: (f[2].update(command=["notekeep", "list", "--json"]), _rewrite(d, f)),
                        "fabricated fact"),
    "stdout mismatch": (lambda d, f: (d / "commands" / "03-add-a-note.stdout").write_text("{}\n"),
                        "stdout_sha256 does not match the kept commands/03-add-a-note.stdout"),
    "validation claimed": (lambda d, f: (f[3].update(validation_passed=None), _rewrite(d, f)),
                           "validation_passed is None but the kept stdout gives True"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TAMPERS))
def test_runner_refuses_bad_receipts_as_a_missing_arm(tmp_path, name):
    tamper, reason = TAMPERS[name]
    plan = world(tmp_path, [case_doc("tally", m) for m in ("committed", "local")], adapter=_Tampering(tamper))
    lines: list[str] = []
    stage = read_stage(run_stage(plan, lines.append).parent)
    assert lines[1].startswith("tally-committed candidate: missing (adapter error: ")
    assert reason in lines[1]
    assert stage.report.cases[0].candidate is None
    assert stage.report.outcome == "incomplete"


@pytest.mark.slow
def test_inputs_changed_during_the_run_are_refused(tmp_path):
    def edit_skill(folder, facts):
        skill = plan.candidate_dir / "tally" / "SKILL.md"
        skill.write_text(skill.read_text() + "edited mid-run\n")

    plan = world(tmp_path, [case_doc("tally", m) for m in ("committed", "local")], adapter=_Tampering(edit_skill))
    with pytest.raises(InputError, match=r"inputs changed while the arms ran \(candidate, candidate/tally\)"):
        run_stage(plan)
    assert not (plan.out / "stage.json").exists()


def test_missing_skill_folders_are_refused_before_anything_runs(tmp_path):
    plan = world(tmp_path)
    shutil.rmtree(plan.baseline_dir / "jot")
    plan.candidate_dir = tmp_path / "nowhere"
    with pytest.raises(InputError) as err:
        run_stage(plan)
    text = err.value.render()
    assert "the candidate skills folder does not exist" in text
    assert "no skill 'jot' (case 'jot-committed' needs a baseline)" in text
    assert not plan.out.exists()


def _agent(tmp_path, body):
    return bind("agent", str(write_tool(tmp_path / "agentbin", "agent", body)))


AGENT = r'''
import os, sys
prompt, sandbox = sys.argv[1], sys.argv[2]
print("agent read:", prompt)
print("token:", os.environ.get("AGENT_TOKEN"), "other:", os.environ.get("OTHER_SECRET"))
open(os.path.join(sandbox, "agent-was-here.txt"), "w").write("hi\n")
sys.exit(int(os.environ.get("AGENT_EXIT", "0")))
'''


@pytest.mark.slow
def test_command_adapter_runs_the_agent_first_and_keeps_its_transcript(tmp_path, monkeypatch):
    monkeypatch.setenv("OTHER_SECRET", "must-not-leak")
    agent = _agent(tmp_path, AGENT)
    adapter = CommandAdapter(agent, ["agent", "{prompt}", "{sandbox}"], 20.0, {"AGENT_TOKEN": "t0k"})
    plan = world(tmp_path, [case_doc("tally", m) for m in ("committed", "local")], adapter=adapter)
    lines: list[str] = []
    stage = read_stage(run_stage(plan, lines.append).parent)
    assert lines[1] == "tally-committed candidate: pass, grade pass, 5 commands"
    raw = plan.out / "raw" / "tally-committed" / "candidate"
    transcript = (raw / "transcript.txt").read_text()
    assert "agent read: Use the tally skill to add a note." in transcript
    assert "token: t0k other: None" in transcript
    assert (raw / "sandbox" / "agent-was-here.txt").is_file()
    facts = json.loads((raw / "facts.json").read_text())
    assert "agent-was-here.txt" not in facts[1]["storage_paths"]  # the agent ran after setup, before actions
    assert stage.report.adapter.name == "command"


@pytest.mark.slow
def test_failed_agent_leaves_an_incomplete_arm(tmp_path, monkeypatch):
    agent = _agent(tmp_path, AGENT)
    adapter = CommandAdapter(agent, ["agent", "{prompt}", "{sandbox}"], 20.0, {"AGENT_EXIT": "4"})
    plan = world(tmp_path, [case_doc("tally", m) for m in ("committed", "local")], adapter=adapter)
    lines: list[str] = []
    stage = read_stage(run_stage(plan, lines.append).parent)
    assert lines[1] == "tally-committed candidate: incomplete, grade pass, 5 commands (agent command exit 4)"
    assert stage.report.cases[0].candidate.outcome == "incomplete"
    assert stage.report.outcome == "incomplete"


@pytest.mark.slow
def test_cli_run_and_resume(tmp_path, capsys):
    plan = world(tmp_path)  # writes the registry, tool and skills
    tool = plan.executables["candidate"]["notekeep"].path
    args = ["skill-eval", "run", str(plan.registry.root), "--candidate", str(plan.candidate_dir),
            "--baseline", str(plan.baseline_dir), "--adapter", "script", "--out", str(tmp_path / "cli-stage"),
            "--bin", f"notekeep={tool}", "--generated-at", "2026-01-31T12:00:00Z", "--session-id", "cli-test",
            "--tested-head", plan.tested_head, "--product", str(plan.product_dir), "--bin", f"git={GIT}",
            "--same-baseline-bin"]
    assert main([*args, "--gate", "parity"]) == 1
    assert "--gate parity: needs --mirror DIR" in capsys.readouterr().err
    assert main([*args, "--mirror", str(plan.candidate_dir)]) == 0
    out, err = capsys.readouterr()
    assert "stopped for human review: evalkit skill-eval worksheet" in out
    assert f"candidate: notekeep bound to {tool} (sha256 " in err
    assert "candidate: git bound to " in err and "PATH" not in err
    assert sum(line.endswith("5 commands") for line in err.splitlines()) == 6
    stage = SkillEvalStage.model_validate_json((tmp_path / "cli-stage" / "stage.json").read_text())
    assert stage.report.deterministic_checks.evidence == [
        "cross-platform", "lifecycle", "machine-api", "parity", "registry", "security", "skill-lint"]
    answers = {"schema_version": 1, "human_review": "Looked at every arm.", "cases": [
        {"case_id": c.case_id, "human_review": "Fine.",
         "comparison": "same" if c.baseline_required else "candidate-only"} for c in stage.report.cases]}
    (tmp_path / "answers.json").write_text(json.dumps(answers))
    assert main(["skill-eval", "resume", str(tmp_path / "cli-stage"), "--answers", str(tmp_path / "answers.json"),
                 "--out", str(tmp_path / "report.json")]) == 0
    out, _ = capsys.readouterr()
    assert "report: outcome pass (4 cases: 2 candidate-only, 2 same)" in out
    first = (tmp_path / "report.json").read_bytes()
    assert main(["skill-eval", "resume", str(tmp_path / "cli-stage"), "--answers", str(tmp_path / "answers.json"),
                 "--out", str(tmp_path / "report.json")]) == 0
    assert (tmp_path / "report.json").read_bytes() == first


@pytest.mark.slow
def test_cli_command_adapter(tmp_path, capsys):
    plan = world(tmp_path, [case_doc("tally", m) for m in ("committed", "local")])
    agent = write_tool(tmp_path / "agentbin", "agent", AGENT)
    base = ["skill-eval", "run", str(plan.registry.root), "--candidate", str(plan.candidate_dir),
            "--baseline", str(plan.baseline_dir), "--adapter", "command",
            "--bin", f"notekeep={plan.executables['candidate']['notekeep'].path}", "--bin", f"git={GIT}",
            "--tested-head", plan.tested_head, "--product", str(plan.product_dir)]
    assert main([*base, "--out", str(tmp_path / "s1")]) == 1
    assert "--adapter command needs --agent-command" in capsys.readouterr().err
    assert main([*base, "--out", str(tmp_path / "s2"), "--agent-command", f"{agent} {{prompt}} {{sandbox}}",
                 "--adapter-version", "agent 0.1", "--model", "test-model"]) == 0
    err = capsys.readouterr().err
    assert f"agent: agent bound to {agent} (sha256 " in err
    assert "tally-local candidate: pass, grade pass, 5 commands" in err
    stage = read_stage(tmp_path / "s2")
    assert (stage.report.adapter.name, stage.report.adapter.version) == ("command", "agent 0.1")
    assert stage.report.model == {"name": "test-model"}
    assert "agent read: Use the tally skill" in arm_evidence(tmp_path / "s2", "tally-local", "candidate").transcript


def test_cli_refuses_unknown_binding_and_bad_time(tmp_path, capsys):
    plan = world(tmp_path)
    base = ["skill-eval", "run", str(plan.registry.root), "--candidate", str(plan.candidate_dir),
            "--baseline", str(plan.baseline_dir), "--adapter", "script", "--out", str(tmp_path / "s")]
    assert main([*base, "--bin", "curl=/usr/bin/curl"]) == 1
    assert "--bin: curl is not a program the policy allows (git, notekeep)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*base, "--generated-at", "yesterday"])
    assert "expected an RFC 3339 UTC time" in capsys.readouterr().err


@pytest.mark.slow
def test_lint_problems_fail_the_deterministic_checks(tmp_path):
    plan = world(tmp_path, [case_doc("tally", m) for m in ("committed", "local")])
    skill = plan.candidate_dir / "tally" / "SKILL.md"
    skill.write_text(skill.read_text() + "\nSee [the guide](references/missing.md) and run `curl -s example.org`.\n")
    lines: list[str] = []
    stage = read_stage(run_stage(plan, lines.append).parent)
    assert any("references/missing.md" in line for line in lines if line.startswith("skill lint: "))
    assert any("curl" in line for line in lines if line.startswith("skill lint: "))
    assert lines[2].startswith("deterministic checks: fail (cross-platform, lifecycle, machine-api, registry, "
                               "security, skill-lint; 2 lint problem(s))")
    assert stage.report.deterministic_checks.outcome == "fail"
    assert stage.report.outcome == "fail"  # failed checks beat everything, before any review


def test_cli_help_explains_the_run(capsys):
    with pytest.raises(SystemExit):
        main(["skill-eval", "run", "--help"])
    text = capsys.readouterr().out
    for words in ("--adapter {script,command}", "--bin NAME=PATH", "{prompt}", "byte-identical", "--timeout S"):
        assert words in text


@pytest.mark.slow
def test_product_head_comes_from_git_when_not_given(tmp_path):
    product = tmp_path / "product"
    product.mkdir()
    (product / "main.c").write_text("int main(void) { return 0; }\n")
    plan = world(tmp_path, [case_doc("tally", m) for m in ("committed", "local")], tested_head=None,
                 product_dir=product)
    with pytest.raises(InputError, match="not in a Git worktree with a commit"):
        run_stage(plan)
    assert not plan.out.exists()  # refused before anything was written
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "product"]):
        git(product, *argv)
    stage = read_stage(run_stage(plan).parent)
    assert stage.report.tested_head == git(product, "rev-parse", "HEAD")
    assert stage.report.release.provenance_verified
    # the product digest leaves Git's own state out
    shutil.rmtree(product / ".git")
    from evalkit.skilleval import DOMAINS, tree_digest
    assert stage.report.product_sha256 == tree_digest(product, DOMAINS["product"])


@pytest.mark.slow
@pytest.mark.parametrize(("spoil", "rule"), [
    (lambda product, head: (product / "main.c").write_text("changed\n"), "the worktree is not clean: 1 changed"),
    (lambda product, head: (product / "new.txt").write_text("new\n"), "first 'new.txt'"),
    (lambda product, head: git(product, "checkout", "-q", "--detach"), "HEAD is detached"),
    (lambda product, head: None, "--tested-head 0000000000000000000000000000000000000000 is not the product's HEAD"),
])
def test_the_product_must_be_a_clean_attached_head_equal_to_the_tested_head(tmp_path, spoil, rule):
    plan = world(tmp_path, [case_doc("tally", m) for m in ("committed", "local")])
    spoil(plan.product_dir, plan.tested_head)
    if "tested-head" in rule:
        plan.tested_head = "0" * 40
    with pytest.raises(InputError, match="provenance: the candidate must come from a clean, attached HEAD") as caught:
        run_stage(plan)
    assert rule in caught.value.message and caught.value.file == str(plan.product_dir)
    assert not plan.out.exists()
    plan.allow_dirty = True  # runs, but the report says the provenance was not verified
    lines: list[str] = []
    stage = read_stage(run_stage(plan, lines.append).parent)
    assert not stage.report.release.provenance_verified
    assert any(line.startswith("provenance not verified (--allow-dirty): ") and rule in line for line in lines)


@pytest.mark.slow
def test_the_baseline_arm_needs_the_prior_release_binary_unless_declared_identical(tmp_path):
    plan = world(tmp_path, same_baseline_binary=False)
    with pytest.raises(InputError, match=r"--baseline-bin: the baseline arm would run the candidate's notekeep"):
        run_stage(plan)
    prior = write_tool(tmp_path / "prior", "notekeep", "# the prior release\n" + TOOL)
    plan.executables["baseline"] = {**plan.executables["baseline"], "notekeep": bind("notekeep", str(prior))}
    stage = read_stage(run_stage(plan).parent)
    assert stage.report.release.baseline_executable == "distinct"
    assert stage.report.baseline_executable_sha256 != stage.report.candidate_executable_sha256
    plan.same_baseline_binary, plan.out = True, tmp_path / "stage2"
    with pytest.raises(InputError, match="--same-baseline-bin: the baseline's notekeep is not the candidate's"):
        run_stage(plan)


def test_no_program_is_looked_up_on_path(tmp_path, monkeypatch, capsys):
    plan = world(tmp_path, [case_doc("tally", m) for m in ("committed", "local")])
    impostor = write_tool(tmp_path / "impostor", "notekeep", "import sys; sys.exit(0)\n")
    monkeypatch.setenv("PATH", f"{impostor.parent}{os.pathsep}{os.environ['PATH']}")
    args = ["skill-eval", "run", str(plan.registry.root), "--candidate", str(plan.candidate_dir), "--baseline",
            str(plan.baseline_dir), "--adapter", "script", "--out", str(tmp_path / "s"), "--bin", f"git={GIT}"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "no file given for notekeep; evalkit never looks a program up on PATH" in err
    assert str(impostor) not in err and not (tmp_path / "s").exists()
    with pytest.raises(InputError, match="never looks a program up on PATH"):
        bind("notekeep", None)


@pytest.mark.slow
def test_a_skill_without_cases_is_refused_or_makes_the_outcome_incomplete(tmp_path, capsys):
    plan = world(tmp_path, [case_doc("tally", m) for m in ("committed", "local")])
    write_skills(plan.candidate_dir, "v2", ["notes-export"])
    with pytest.raises(InputError, match=r"coverage: skill\(s\) notes-export have no cases"):
        run_stage(plan)
    plan.allow_uncovered = True
    stage = read_stage(run_stage(plan).parent)
    assert stage.report.release.uncovered_skills == ["notes-export"]
    answers = {"schema_version": 1, "human_review": "Looked at every arm.", "cases": [
        {"case_id": c.case_id, "human_review": "Fine.", "comparison": "candidate-only"} for c in stage.report.cases]}
    (tmp_path / "answers.json").write_text(json.dumps(answers))
    assert main(["skill-eval", "resume", str(plan.out), "--answers", str(tmp_path / "answers.json"),
                 "--out", str(tmp_path / "report.json")]) == 3
    assert "report: outcome incomplete (2 cases: 2 candidate-only)" in capsys.readouterr().out


@pytest.mark.slow
def test_a_git_command_that_changes_the_status_fails_git_worktree_clean(tmp_path):
    actions = [{"id": "add-a-note", "operation": "notekeep-command", "command": ["notekeep", "add", "x", "--json"]},
               {"id": "inspect-status", "operation": "git-command",
                "command": ["git", "rm", "--cached", "--quiet", "README.md"]}]
    plan = world(tmp_path, [case_doc("tally", m, actions=actions) for m in ("committed", "local")])
    lines: list[str] = []
    stage = read_stage(run_stage(plan, lines.append).parent)
    assert lines[1] == "tally-committed candidate: fail, grade fail, 4 commands; failed: inspect-status holds"
    assert stage.report.cases[0].candidate.deterministic_grade == "fail"
