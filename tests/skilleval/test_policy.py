"""Reading a registry's policy.json strictly, and the questions the runner asks of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import RegistryInvalid
from evalkit.skilleval import load_policy, read_policy, validation_pointer

FIXTURE_POLICY = Path(__file__).resolve().parent / "fixtures" / "registry" / "policy.json"


def test_fixture_policy_loads() -> None:
    policy = load_policy(FIXTURE_POLICY)
    assert policy.tool == "tally"
    assert policy.programs() == ["git", "tally"]
    assert policy.operation_of_program("tally") == "tally-command"
    assert policy.init.argv_for("local") == ["init", "--local", "--json"]


@pytest.mark.parametrize(("argv", "pointer"), [
    (["tally", "check", "--json"], "/ok"),
    (["tally", "check", "--json", "--strict"], "/ok"),
    (["tally", "check"], None),
    (["tally", "list", "--json"], None),
    (["tally", "--json", "check"], None),
])
def test_validation_pointer_only_for_the_validation_command(argv: list[str], pointer: str | None) -> None:
    policy = load_policy(FIXTURE_POLICY)
    assert validation_pointer(policy, "tally-command", argv) == pointer


def test_git_and_unknown_operations_validate_nothing() -> None:
    policy = load_policy(FIXTURE_POLICY)
    assert validation_pointer(policy, "git-command", ["git", "check", "--json"]) is None
    assert validation_pointer(policy, "make-command", ["tally", "check", "--json"]) is None


def test_every_problem_of_a_policy_at_once(tmp_path: Path) -> None:
    value = json.loads(FIXTURE_POLICY.read_text(encoding="utf-8"))
    value["tool"] = "Tally"
    value["storage_modes"] = ["committed", "shared"]
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    policy, problems = read_policy(path)
    assert policy is None
    assert [(p.file, p.path) for p in problems] == [(str(path), "tool"), (str(path), "storage_modes[1]")]
    with pytest.raises(RegistryInvalid) as info:
        load_policy(path)
    assert len(info.value.problems) == 2


def test_policy_is_strict_json(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_bytes(FIXTURE_POLICY.read_bytes().replace(b'"tool": "tally"', b'"tool": "tally", "tool": "tally"'))
    _, problems = read_policy(path)
    assert len(problems) == 1 and "duplicate key 'tool'" in problems[0].message


def test_evalkit_validate_knows_policy_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "policy.json"
    path.write_bytes(FIXTURE_POLICY.read_bytes())
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: ok (1 skill-eval-policy record)\n"
    value = json.loads(path.read_text(encoding="utf-8"))
    value["operations"]["tally-command"]["program"] = "git"
    path.write_text(json.dumps(value), encoding="utf-8")
    assert main(["validate", str(path)]) == 1
    assert "'git' is already the program of operation 'git-command'" in capsys.readouterr().err
