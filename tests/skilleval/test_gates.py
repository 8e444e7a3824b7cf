"""The release gates and coverage, the way a maintainer meets them: lint and validate refuse a broken skill
or case, naming the file and the rule, on a copy of the bundled sample with one thing spoiled each time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.cli.main import main
from evalkit.skilleval.gates import (
    Invocation,
    command_problems,
    cross_platform_problems,
    lifecycle_problems,
    machine_api_problems,
)
from evalkit.skilleval.policy import load_policy

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "skilleval"


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    """A writable copy of the sample's registry and skills."""
    shutil.copytree(SAMPLE / "registry", tmp_path / "registry")
    shutil.copytree(SAMPLE / "skills", tmp_path / "skills")
    return tmp_path


def _lint(sample: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["skill-eval", "lint", str(sample / "skills" / "candidate"), "--policy", str(sample / "registry")])
    return code, capsys.readouterr().err.splitlines()


def _validate(sample: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, list[str]]:
    code = main(["skill-eval", "validate", str(sample / "registry"), *extra])
    return code, capsys.readouterr().err.splitlines()


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_the_sample_passes_every_gate(sample, capsys):
    assert _lint(sample, capsys) == (0, [])
    assert _validate(sample, capsys, "--skills", str(sample / "skills" / "candidate")) == (0, [])


def test_a_skill_without_cases_is_named_by_lint_and_by_validate(sample, capsys):
    new = sample / "skills" / "candidate" / "notes-export"
    new.mkdir()
    (new / "SKILL.md").write_text("---\nname: notes-export\ndescription: Export notes as JSON.\n---\n\n"
                                  "Run `tasknote list --json` and save its output.\n", encoding="utf-8")
    code, lines = _lint(sample, capsys)
    assert code == 1 and lines[0] == (
        f"{new / 'SKILL.md'}: coverage: skill 'notes-export' has no cases in "
        f"{sample / 'registry' / 'cases' / 'notes-export'}; every shipped skill needs its committed and local cases")
    code, lines = _validate(sample, capsys, "--skills", str(sample / "skills" / "candidate"))
    assert code == 1 and lines[0].startswith(f"{new / 'SKILL.md'}: coverage: skill 'notes-export' has no cases")


def test_a_bogus_subcommand_or_flag_is_refused_in_a_skill_and_in_a_case(sample, capsys):
    _append(sample / "skills" / "candidate" / "notes-audit" / "SKILL.md",
            "\n```bash\ntasknote frobnicate --json\ntasknote list --bogus-flag --json\n```\n")
    code, lines = _lint(sample, capsys)
    skill = sample / "skills" / "candidate" / "notes-audit" / "SKILL.md"
    assert code == 1
    assert f"{skill}:34: command gate: 'frobnicate' is not a documented subcommand of tasknote (documented: add, " \
           "init, list, validate)" in lines
    assert f"{skill}:35: command gate: '--bogus-flag' is not a documented flag of 'tasknote list' (documented: " \
           "--json)" in lines
    case = sample / "registry" / "cases" / "notes-capture" / "notes-capture-local" / "case.json"
    value = json.loads(case.read_text())
    value["scenario"]["actions"][0]["command"].insert(2, "--bogus-flag")
    case.write_text(json.dumps(value))
    code, lines = _validate(sample, capsys)
    assert code == 1 and lines[0] == (f"{case}: scenario.actions[0].command: command gate: '--bogus-flag' is not "
                                      "a documented flag of 'tasknote add' (documented: --json)")


def test_init_placed_after_use_breaks_the_lifecycle(sample, capsys):
    _append(sample / "skills" / "candidate" / "notes-audit" / "SKILL.md", "\n```bash\ntasknote init --json\n```\n")
    code, lines = _lint(sample, capsys)
    assert code == 1 and lines[0].endswith(
        "notes-audit/SKILL.md:34: lifecycle gate: 'tasknote init' comes after 'tasknote list' (line 15); the "
        "canonical order is init -> use")


def test_results_are_consumed_as_json_where_the_tool_offers_it(sample, capsys):
    _append(sample / "skills" / "candidate" / "notes-audit" / "SKILL.md", "\nThen run `tasknote list` again.\n")
    code, lines = _lint(sample, capsys)
    assert code == 1 and lines[0].endswith("notes-audit/SKILL.md:33: machine-api gate: 'tasknote list' offers "
                                           "--json; pass it and read the JSON instead of scraping text")


def test_a_provider_specific_instruction_is_refused(sample, capsys):
    _append(sample / "skills" / "candidate" / "notes-audit" / "SKILL.md", "\nAsk Claude via the Anthropic API.\n")
    code, lines = _lint(sample, capsys)
    assert code == 1
    assert [line.split("SKILL.md:")[1] for line in lines[:-1]] == [
        "33: provider independence: 'Claude' names a model provider or model; a skill must work with any agent",
        "33: provider independence: 'Anthropic' names a model provider or model; a skill must work with any agent"]


def test_platform_only_programs_and_paths_are_refused(sample, capsys):
    _append(sample / "skills" / "candidate" / "notes-audit" / "SKILL.md",
            "\n```bash\ntasknote list --json | pbcopy\n```\n")
    code, lines = _lint(sample, capsys)
    assert code == 1 and any(line.endswith("SKILL.md:34: cross-platform gate: 'pbcopy' exists on one platform only")
                             for line in lines)
    policy = load_policy(sample / "registry" / "policy.json")
    found = cross_platform_problems(Invocation(["tasknote", "add", "C:\\notes\\a.txt", "--json"], "f"), policy)
    assert [p.gate for p in found] == ["cross-platform"]
    assert not cross_platform_problems(Invocation(["tasknote", "add", "notes/a.txt", "--json"], "f"), policy)


def test_eval_definitions_inside_a_skill_are_refused(sample, capsys):
    skill = sample / "skills" / "candidate" / "notes-audit"
    (skill / "evals").mkdir()
    (skill / "evals" / "case.json").write_text("{}\n")
    _append(skill / "SKILL.md", "\nThe checks are in [the evals](evals/case.json).\n")
    code, lines = _lint(sample, capsys)
    assert code == 1 and lines == [f"{skill / 'evals' / 'case.json'}: security gate: eval definitions live outside "
                                   "the skill (in the registry): a skill is installed as it is, evals included",
                                   "1 problem"]


@pytest.mark.parametrize(("name", "content", "message"), [
    (".env", "OPENAI_API_KEY=sk-123\n", "a fixture may not hold a credential file (.env)"),
    ("notes.txt", "key: sk-ant-abcdef\n", "holds a credential (sk-ant-abcde...)"),
    ("transcript.txt", "user: hi\n", "a fixture may not hold a transcript (transcript.txt)"),
    ("raw/facts.json", "[]\n", "a fixture may not hold raw evidence (raw/facts.json)"),
    (".agents/skills/x/SKILL.md", "---\n", "a fixture may not hold installed skill content"),
])
def test_fixtures_may_not_hold_what_the_contract_forbids(sample, capsys, name, content, message):
    fixture = sample / "registry" / "cases" / "notes-audit" / "notes-audit-local" / "fixture"
    (fixture / name).parent.mkdir(parents=True, exist_ok=True)
    (fixture / name).write_text(content)
    code, lines = _validate(sample, capsys)
    assert code == 1
    assert any(line.startswith(f"{fixture / name}: security gate: ") and message in line for line in lines), lines


def test_a_credential_in_a_decoy_is_refused(sample, capsys):
    seed = sample / "registry" / "cases" / "notes-capture" / "notes-capture-local" / "fixture" / "seed.json"
    value = json.loads(seed.read_text())
    value["decoy"]["contents"] = "GITHUB_TOKEN=ghp_" + "a" * 30 + "\n"
    seed.write_text(json.dumps(value))
    code, lines = _validate(sample, capsys)
    assert code == 1 and lines[0] == f"{seed}: decoy.contents: security gate: the decoy holds a credential " \
                                     "(GITHUB_TOKEN...); remove it"


def test_an_unknown_gate_name_is_refused(sample, capsys):
    with pytest.raises(SystemExit):
        main(["skill-eval", "run", str(sample / "registry"), "--candidate", "c", "--baseline", "b", "--adapter",
              "script", "--out", "o", "--gate", "i-made-this-up"])
    assert "argument --gate: invalid choice: 'i-made-this-up'" in capsys.readouterr().err


def test_the_rules_on_single_invocations():
    policy = load_policy(SAMPLE / "registry" / "policy.json")
    at = Invocation(["git", "status", "--porcelain=v1"], "f")
    assert not command_problems(at, policy) and not machine_api_problems(at, policy)
    assert [p.message for p in command_problems(Invocation(["git", "push", "--force"], "f"), policy)] == [
        "command gate: 'push' is not a documented subcommand of git (documented: add, commit, status)"]
    assert command_problems(Invocation(["tasknote", "--version", "--json"], "f"), policy)[0].message == \
        "command gate: 'tasknote --version --json' names no subcommand of tasknote"
    steps = [Invocation(["tasknote", *argv], "f", line) for line, argv in
             enumerate((["init", "--json"], ["add", "x", "--json"], ["init", "--json"]), start=1)]
    assert [p.line for p in lifecycle_problems(steps, policy)] == [3]
    assert not lifecycle_problems(steps[:2], policy)


def test_what_documentation_writes_is_not_a_credential_nor_a_path():
    from evalkit.skilleval.gates import credential_in

    # seen linting public skills: false alarms before these rules were narrowed
    for text in ("use task-budgets-2026-01 headers", "export ANTHROPIC_API_KEY=your_api_key_here",
                 'an empty ANTHROPIC_API_KEY="" still wins', "KEY=sk-...", "token: $GITHUB_TOKEN"):
        assert credential_in(text.encode()) is None, text
    for text in ("OPENAI_API_KEY=sk-123", "key: sk-ant-abcdef", "-----BEGIN RSA PRIVATE KEY-----"):
        assert credential_in(text.encode()) is not None, text
    policy = load_policy(SAMPLE / "registry" / "policy.json")
    assert not cross_platform_problems(Invocation(["printf", "%s\\n", "x"], "f"), policy)
    assert cross_platform_problems(Invocation(["cat", "notes\\today.txt"], "f"), policy)
