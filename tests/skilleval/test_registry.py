"""Registry validation on real folders: a good registry loads, and each rule breaks it with one located problem.

Every malformed registry is the good fixture (tests/skilleval/fixtures/registry) copied to a temporary
folder with one edit; the test asserts the one problem it causes names the right file and member path.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalkit.cli import main
from evalkit.errors import InputError, RegistryInvalid
from evalkit.skilleval import load_registry, registry_problems

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "registry"
CAP = "cases/tally-count/tally-count-committed"
CAL = "cases/tally-count/tally-count-local"
RPC = "cases/tally-report/tally-report-committed"
RPL = "cases/tally-report/tally-report-local"


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    root = tmp_path / "registry"
    shutil.copytree(FIXTURE, root)
    return root


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def write(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


def edit(root: Path, rel: str, change: Callable[[Any], None]) -> None:
    value = read(root / rel)
    change(value)
    write(root / rel, value)


def problems(root: Path) -> list[InputError]:
    registry, found = registry_problems(root)
    assert registry is None, "the registry should be invalid"
    return found


def rendered(found: list[InputError]) -> list[str]:
    return [p.render() for p in found]


def test_good_registry_loads_sorted_with_paths(registry: Path) -> None:
    loaded = load_registry(registry)
    assert [c.case.case_id for c in loaded.cases] == [
        "tally-count-committed", "tally-count-local", "tally-report-committed", "tally-report-local"]
    assert loaded.skills() == ["tally-count", "tally-report"]
    assert loaded.policy.tool == "tally"
    first = loaded.cases[1]
    assert first.case_dir == registry / CAL
    assert first.fixture_dir == registry / CAL / "fixture"
    assert first.seed.decoy is not None and first.seed.decoy.path == ".tally/items.json"


def test_registry_invalid_carries_every_problem(registry: Path) -> None:
    edit(registry, f"{CAP}/case.json", lambda v: v.update(prompt=""))
    edit(registry, f"{RPL}/case.json", lambda v: v.update(baseline_required=True))
    with pytest.raises(RegistryInvalid) as info:
        load_registry(registry)
    found = info.value.problems
    assert [(p.file, p.path) for p in found] == [
        (str(registry / CAP / "case.json"), "prompt"),
        (str(registry / RPL / "case.json"), "baseline_required"),
    ]
    text = str(info.value)
    assert text.startswith(f"{registry}: 2 problems in the skill-eval registry")
    assert all(line in text for line in rendered(found))


def _bytes(rel: str, data: bytes) -> Callable[[Path], None]:
    return lambda root: (root / rel).write_bytes(data)


def _case(rel: str, change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    return lambda root: edit(root, rel, change)


def _set(**values: Any) -> Callable[[dict[str, Any]], None]:
    return lambda v: v.update(values)


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda v: v.pop(key)


def _action(i: int, **values: Any) -> Callable[[dict[str, Any]], None]:
    return lambda v: v["scenario"]["actions"][i].update(values)


def _rename_case(root: Path, old: str, new: str) -> None:
    os.rename(root / old, root / new)


def _duplicate_id(root: Path) -> None:
    shutil.copytree(root / CAL, root / "cases/tally-report/tally-count-local")
    edit(root, "cases/tally-report/tally-count-local/case.json", _set(skill="tally-report", baseline_required=False))


def _long_id(root: Path) -> None:
    long_id = "tally-" + "x" * 59
    _rename_case(root, CAP, f"cases/tally-count/{long_id}")
    edit(root, f"cases/tally-count/{long_id}/case.json", _set(case_id=long_id))


def _policy_without_validation(root: Path) -> None:
    edit(root, "policy.json", lambda v: v["operations"]["tally-command"].pop("validation"))


SEED_CAL = f"{CAL}/fixture/seed.json"

CORPUS: list[tuple[str, Callable[[Path], None], str, str | None, str]] = [
    # strict JSON
    ("bom", _bytes(f"{CAP}/case.json", b"\xef\xbb\xbf" + (FIXTURE / CAP / "case.json").read_bytes()),
     f"{CAP}/case.json", None, "byte-order mark"),
    ("not-utf8", _bytes(SEED_CAL, b'{"schema_version": 1, "storage_mode": "loc\xe9l"}'), SEED_CAL, None,
     "not valid UTF-8"),
    ("duplicate-key", _bytes(f"{CAP}/case.json", b'{"case_id": "a", "case_id": "b"}\n'), f"{CAP}/case.json", None,
     "duplicate key 'case_id'"),
    ("trailing-value", _bytes(SEED_CAL, (FIXTURE / SEED_CAL).read_bytes() + b"{}\n"), SEED_CAL, None,
     "trailing data"),
    # exact member sets
    ("extra-member", _case(f"{CAP}/case.json", _set(notes="x")), f"{CAP}/case.json", "notes", "unknown field"),
    ("missing-member", _case(f"{CAP}/case.json", _drop("expected_observation")), f"{CAP}/case.json",
     "expected_observation", "required"),
    ("seed-extra-member", _case(SEED_CAL, _set(taskrail_init=["init"])), SEED_CAL, "taskrail_init", "unknown field"),
    # case ids, folders
    ("case-id-pattern", _case(f"{CAP}/case.json", _set(case_id="Tally_Count")), f"{CAP}/case.json", "case_id",
     "pattern"),
    ("case-id-long", _long_id, f"cases/tally-count/tally-{'x' * 59}/case.json", "case_id", "at most 64"),
    ("case-id-folder", _case(f"{CAP}/case.json", lambda v: (v.update(case_id="tally-count-main"),
                                                              v["scenario"].update(sandbox="tally-count-main"))),
     f"{CAP}/case.json", "case_id", "must equal its folder name 'tally-count-committed'"),
    ("case-id-duplicate", _duplicate_id, "cases/tally-report/tally-count-local/case.json", "case_id",
     "duplicates the case_id of"),
    ("skill-parent", _case(f"{CAP}/case.json", _set(skill="tally-counter")), f"{CAP}/case.json", "skill",
     "must equal its parent folder name 'tally-count'"),
    # coverage and baseline classification
    ("coverage", lambda root: shutil.rmtree(root / RPL), "cases/tally-report", None,
     "no case in storage mode 'local'"),
    ("baseline-new-skill", _case(f"{RPC}/case.json", _set(baseline_required=True)), f"{RPC}/case.json",
     "baseline_required", "must be false"),
    ("baseline-shipped-skill", _case(f"{CAL}/case.json", _set(baseline_required=False)), f"{CAL}/case.json",
     "baseline_required", "must be true"),
    ("baseline-unknown-skill", _case("policy.json", lambda v: v["baseline_skills"].append("tally-undo")),
     "policy.json", "baseline_skills[1]", "'tally-undo' has no cases"),
    ("mode-outside-policy", lambda root: (_case("policy.json", lambda v: (v.update(storage_modes=["committed"]),
                                                                          v["init"].pop("local")))(root),
                                          shutil.rmtree(root / RPL)),
     f"{CAL}/case.json", "storage_mode", "not one of the policy's storage_modes"),
    # complete fixture
    ("missing-seed", lambda root: (root / SEED_CAL).unlink(), SEED_CAL, None, "missing"),
    ("missing-fixture", lambda root: shutil.rmtree(root / CAP / "fixture"), f"{CAP}/fixture", None, "missing folder"),
    ("missing-case", lambda root: (root / CAP / "case.json").unlink(), f"{CAP}/case.json", None, "missing"),
    ("tool-init", _case(SEED_CAL, _set(tool_init=["init", "--json"])), SEED_CAL, "tool_init",
     "must be the policy's init.local ['init', '--local', '--json']"),
    ("seed-mode", _case(f"{CAP}/fixture/seed.json", _set(storage_mode="local", tool_init=["init", "--local", "--json"],
                                                         decoy={"path": "x.json", "contents": "{}"},
                                                         provenance="p")),
     f"{CAP}/fixture/seed.json", "storage_mode", "must equal the case's storage_mode 'committed'"),
    ("local-decoy", _case(SEED_CAL, _drop("decoy")), SEED_CAL, "decoy", "required for storage_mode 'local'"),
    ("local-provenance", _case(SEED_CAL, _drop("provenance")), SEED_CAL, "provenance", "required"),
    ("decoy-exists", _case(SEED_CAL, lambda v: v["decoy"].update(path="README.md")), SEED_CAL, "decoy.path",
     "already exists in the fixture"),
    ("decoy-under-file", _case(SEED_CAL, lambda v: v["decoy"].update(path="README.md/x")), SEED_CAL, "decoy.path",
     "cannot be planted below it"),
    ("decoy-in-git", _case(SEED_CAL, lambda v: v["decoy"].update(path=".git/tally/items.json")), SEED_CAL,
     "decoy.path", "must not be inside .git/"),
    ("fixture-git", lambda root: (root / CAP / "fixture/.git").mkdir(), f"{CAP}/fixture/.git", None,
     "the runner creates the Git repository"),
    ("case-folder-extra", lambda root: (root / CAP / "notes.txt").write_text("x"), f"{CAP}/notes.txt", None,
     "a case folder holds case.json and fixture/ only"),
    # the oracle, action ids, programs and operations
    ("oracle-bijection", _case(f"{CAP}/case.json", lambda v: v["oracle"]["assertions"][1].update(
        action="list-open-items")), f"{CAP}/case.json", "oracle.assertions[1].action", "already checked"),
    ("generic-action-id", _case(f"{CAP}/case.json", lambda v: (v["scenario"]["actions"][0].update(id="positive"),
                                                                 v["oracle"]["assertions"][0].update(action="positive"))),
     f"{CAP}/case.json", "scenario.actions[0].id", "generic label"),
    ("argv-program", _case(f"{CAP}/case.json", _action(0, command=["git", "list", "--json"])), f"{CAP}/case.json",
     "scenario.actions[0].command[0]", "must be 'tally', the program of operation 'tally-command'"),
    ("unknown-operation", _case(f"{CAP}/case.json", _action(0, operation="make-command")), f"{CAP}/case.json",
     "scenario.actions[0].operation", "'make-command' is not one of the policy's operations"),
    ("setup-program", _case(f"{CAP}/case.json", lambda v: v["scenario"]["setup"].__setitem__(0, ["make", "all"])),
     f"{CAP}/case.json", "scenario.setup[0][0]", "'make' is not a program the policy allows"),
    ("setup-action-program", _case(f"{CAP}/case.json", lambda v: v["scenario"]["setup"][1].update(
        command=["tally", "commit"])), f"{CAP}/case.json", "scenario.setup[1].command[0]", "must be 'git'"),
    ("argv-escape", _case(f"{CAP}/case.json", _action(0, command=["tally", "list", "--store=../../etc"])),
     f"{CAP}/case.json", "scenario.actions[0].command[2]", "reaches outside the sandbox"),
    ("setup-escape", _case(f"{CAP}/case.json", lambda v: v["scenario"]["setup"].__setitem__(0, ["git", "add", "/etc"])),
     f"{CAP}/case.json", "scenario.setup[0][2]", "reaches outside the sandbox"),
    ("validation-not-declared", _policy_without_validation, None, "oracle.assertions[1].predicate",
     "declares none"),
    ("validation-wrong-command", _case(f"{CAP}/case.json", _action(1, command=["tally", "list", "--all"])),
     f"{CAP}/case.json", "oracle.assertions[1].predicate", "must start with tally-command's validation argv"),
    # policy
    ("policy-missing", lambda root: (root / "policy.json").unlink(), "policy.json", None, "missing"),
    ("policy-no-git", _case("policy.json", lambda v: v["operations"].pop("git-command")), "policy.json",
     "operations", "must declare 'git-command'"),
]


@pytest.mark.parametrize(("break_it", "file", "member", "words"), [c[1:] for c in CORPUS], ids=[c[0] for c in CORPUS])
def test_each_rule_reports_its_file_and_member(registry: Path, break_it: Callable[[Path], None], file: str | None,
                                               member: str | None, words: str) -> None:
    break_it(registry)
    found = problems(registry)
    hits = [p for p in found if words in p.message]
    assert hits, rendered(found)
    if file is None:  # one problem per case using the rule
        assert {p.path for p in hits} == {member}
        assert len(hits) == 4, rendered(found)
        return
    assert [(p.file, p.path) for p in hits] == [(str(registry / file), member)], rendered(found)


def test_validation_not_declared_is_reported_per_case(registry: Path) -> None:
    _policy_without_validation(registry)
    found = problems(registry)
    assert sorted(p.file for p in found) == sorted(str(registry / rel / "case.json") for rel in (CAP, CAL, RPC, RPL))


def test_a_broken_policy_still_reports_case_problems(registry: Path) -> None:
    edit(registry, "policy.json", lambda v: v.update(tool="Tally"))
    edit(registry, f"{CAP}/case.json", _set(notes="x"))
    found = problems(registry)
    assert [(p.file, p.path) for p in found] == [(str(registry / "policy.json"), "tool"),
                                                 (str(registry / CAP / "case.json"), "notes")]


def test_two_broken_cases_give_two_problems(registry: Path) -> None:
    edit(registry, f"{CAP}/case.json", _action(0, command=["git", "list", "--json"]))
    edit(registry, f"{RPL}/fixture/seed.json", _set(tool_init=["init"]))
    found = problems(registry)
    assert [(p.file, p.path) for p in found] == [
        (str(registry / CAP / "case.json"), "scenario.actions[0].command[0]"),
        (str(registry / RPL / "fixture/seed.json"), "tool_init"),
    ], rendered(found)


def test_duplicate_key_names_its_line(registry: Path) -> None:
    path = registry / CAP / "case.json"
    lines = path.read_text(encoding="utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if '"action": "list-open-items"' in line)
    lines.insert(at, '        "action": "check-store",')
    path.write_text("\n".join(lines), encoding="utf-8")
    (problem,) = problems(registry)
    assert problem.file == str(path)
    assert problem.line == at  # the line (1-based) of the object holding the duplicate: the one before
    assert "duplicate key 'action'" in problem.message


# -- files a registry may not hold ------------------------------------------------------------------

def test_symlink_is_refused_and_not_followed(registry: Path) -> None:
    link = registry / CAP / "fixture" / "linked.md"
    link.symlink_to(registry / CAP / "fixture" / "README.md")
    (problem,) = problems(registry)
    assert problem.file == str(link) and "a symlink" in problem.message


def test_symlinked_case_json_is_refused(registry: Path) -> None:
    target = registry.parent / "outside.json"
    shutil.move(registry / CAP / "case.json", target)
    (registry / CAP / "case.json").symlink_to(target)
    (problem,) = problems(registry)
    assert problem.file == str(registry / CAP / "case.json") and "a symlink" in problem.message


def test_fifo_is_refused(registry: Path) -> None:
    fifo = registry / CAP / "fixture" / "pipe"
    os.mkfifo(fifo)
    (problem,) = problems(registry)
    assert problem.file == str(fifo) and "FIFO" in problem.message


def test_hardlink_alias_inside_the_registry(registry: Path) -> None:
    first = registry / CAP / "fixture" / "README.md"
    alias = registry / CAP / "fixture" / "ALIAS.md"
    os.link(first, alias)
    found = problems(registry)
    assert sorted(p.file for p in found) == sorted([str(first), str(alias)]), rendered(found)
    assert all("hardlink alias" in p.message for p in found)


def test_hardlink_to_a_file_outside(registry: Path) -> None:
    inside = registry / CAP / "fixture" / "README.md"
    os.link(inside, registry.parent / "elsewhere.md")
    (problem,) = problems(registry)
    assert problem.file == str(inside) and "2 names for one file" in problem.message


def test_non_utf8_name_is_refused(registry: Path) -> None:
    bad = os.path.join(os.fsencode(registry / CAP / "fixture"), b"caf\xe9.md")
    with open(bad, "wb") as fh:
        fh.write(b"x")
    (problem,) = problems(registry)
    assert problem.file == str(registry / CAP / "fixture") + "/caf\\xe9.md"
    assert "not valid UTF-8" in problem.message


def test_not_a_folder(tmp_path: Path) -> None:
    (problem,) = problems(tmp_path / "missing")
    assert problem.file == str(tmp_path / "missing") and "not a folder" in problem.message


# -- the command line ----------------------------------------------------------------------------------

def test_cli_validate_ok(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["skill-eval", "validate", str(registry)]) == 0
    assert capsys.readouterr().out == (f"{registry}: ok (4 cases, 2 skills, storage modes committed, local; "
                                       "programs git, tally)\n")


def test_cli_validate_lists_every_problem(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(registry, f"{CAP}/case.json", _set(skill="tally-counter"))
    edit(registry, f"{RPC}/case.json", _set(baseline_required=True))
    assert main(["skill-eval", "validate", str(registry)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"{registry / CAP / 'case.json'}: skill: must equal its parent folder name 'tally-count', got 'tally-counter'",
        f"{registry / RPC / 'case.json'}: baseline_required: must be false: 'tally-report' is not in the policy's "
        "baseline_skills (a new skill has no baseline arm)",
        "2 problems",
    ]


def test_cli_validate_json(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(registry, f"{CAP}/case.json", _set(notes="x"))
    assert main(["skill-eval", "validate", "--json", str(registry)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and out["cases"] == []
    assert out["problems"] == [{"file": str(registry / CAP / "case.json"), "line": None, "path": "notes",
                                "message": "unknown field (this shape is closed)"}]
    shutil.rmtree(registry)
    shutil.copytree(FIXTURE, registry)
    assert main(["skill-eval", "validate", "--json", str(registry)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is True and out["problems"] == []
    assert out["cases"][0] == {"caseId": "tally-count-committed", "skill": "tally-count",
                               "storageMode": "committed", "baselineRequired": True}


def test_one_file_breaking_two_rules_gives_two_problems(registry: Path) -> None:
    def change(v: dict[str, Any]) -> None:
        v["scenario"]["sandbox"] = "tally-count-elsewhere"
        v["scenario"]["actions"][1]["command"][1] = ""

    edit(registry, f"{CAP}/case.json", change)
    edit(registry, SEED_CAL, lambda v: (v.pop("provenance"), v["decoy"].update(path="../escape.json")))
    found = problems(registry)
    assert [(p.file, p.path) for p in found] == [
        (str(registry / CAP / "case.json"), "scenario.sandbox"),
        (str(registry / CAP / "case.json"), "scenario.actions[1].command[1]"),
        (str(registry / SEED_CAL), "provenance"),
        (str(registry / SEED_CAL), "decoy.path"),
    ], rendered(found)


def test_tree_problems_are_listed_in_path_order(registry: Path) -> None:
    for rel in (RPL, CAP, CAL):
        (registry / rel / "fixture" / "link.md").symlink_to("README.md")
    found = problems(registry)
    assert [p.file for p in found] == [str(registry / rel / "fixture" / "link.md") for rel in (CAP, CAL, RPL)]


def test_cases_must_be_a_folder(tmp_path: Path) -> None:
    root = tmp_path / "registry"
    root.mkdir()
    shutil.copy(FIXTURE / "policy.json", root / "policy.json")
    (root / "cases").write_text("x", encoding="utf-8")
    found = problems(root)
    assert [(p.file, p.path) for p in found] == [(str(root / "cases"), None),
                                                 (str(root / "policy.json"), "baseline_skills[0]")]
    assert found[0].message.startswith("must be a folder")
    assert found[1].message.startswith("'tally-count' has no cases under cases/")
