"""Skill lint on real skill folders in temporary directories: each check finds its problem at its file and line."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.contracts.skilleval import SkillEvalPolicy
from evalkit.errors import InputError
from evalkit.skilleval.digest import DOMAINS, tree_digest
from evalkit.skilleval.lint import lint_skills
from evalkit.skilleval.skill_markdown import shell_commands
from evalkit.skilleval.skill_references import SkillReferences

POLICY = SkillEvalPolicy.model_validate({
    "schema_version": 1, "tool": "tally",
    "operations": {"git-command": {"program": "git"}, "tally-command": {"program": "tally"},
                   "python-command": {"program": "python3"}},
    "init": {"operation": "tally-command", "committed": ["init"]},
    "storage_modes": ["committed"], "baseline_skills": [],
})

SKILL_MD = """\
---
name: tally-count
description: Count the open items with tally. Use when the user asks how much is left.
license: Complete terms in LICENSE.txt
metadata:
  owner: release-team
---

# Count items

1. Run `tally list --json` and read `count`; wording is in [the style guide](references/style.md).
2. Summarise with the template in ![template](assets/template.txt "Template").

```bash
tally list --json | python3 scripts/count.py
git status --porcelain=v1
```

```
tally check --json
```

Examples live in [the examples folder](examples/).
"""

STYLE_MD = """\
# Style

Say the number first. See [the glossary](../references/glossary.md) and [home](https://example.org/x).
"""


def write_skill(root: Path, name: str = "tally-count", skill_md: str = SKILL_MD) -> Path:
    folder = root / name
    files = {
        "SKILL.md": skill_md.replace("name: tally-count", f"name: {name}"),
        "LICENSE.txt": "MIT\n",
        "references/style.md": STYLE_MD,
        "references/glossary.md": "# Glossary\n",
        "assets/template.txt": "Open items: N\n",
        "scripts/count.py": "import sys\nprint(len(sys.stdin.read()))\n",
        "examples/one.md": "# One\n",
        "examples/deep/two.md": "# Two\n",
    }
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root)
    write_skill(root, "tally-report")
    return root


def problems(root: Path, **kwargs: object) -> list[InputError]:
    report = lint_skills(root, **kwargs)  # type: ignore[arg-type]
    return report.problems


def located(found: list[InputError]) -> list[tuple[str | None, int | None, str | None]]:
    return [(p.file, p.line, p.path) for p in found]


def replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_good_skills_pass_with_digests(skills: Path) -> None:
    report = lint_skills(skills, policy=POLICY)
    assert report.ok, [p.render() for p in report.problems]
    assert [s.name for s in report.skills] == ["tally-count", "tally-report"]
    assert report.skills[0].sha256 == tree_digest(skills / "tally-count", DOMAINS["skill"])
    assert report.skill_set_sha256 == tree_digest(skills, DOMAINS["skill-set"])


# -- frontmatter -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("old", "new", "line", "field", "words"), [
    ("name: tally-count\n", "", 2, "name", "required field is missing"),
    ("description: Count the open items with tally. Use when the user asks how much is left.\n", "", 2,
     "description", "required field is missing"),
    ("name: tally-count", "name: tally-counter", 2, "name", "must equal the skill's folder name 'tally-count'"),
    ("name: tally-count", "name: Tally--Count", 2, "name", "lowercase letters, digits and single hyphens"),
    ("description: Count", "description: ''\nx: Count", 3, "description", "must be 1-1024 characters"),
    ("description: Count", f"description: {'c' * 1025}\nx: Count", 3, "description", "must be 1-1024 characters"),
    ("license:", "compatibility: " + "c" * 501 + "\nlicense:", 4, "compatibility", "must be 1-500 characters"),
    ("license:", "allowed_tools: Bash\nlicense:", 4, "allowed_tools", "unknown field"),
    ("license:", "name: again\nlicense:", 4, "name", "duplicate field (first on line 2)"),
    ("  owner: release-team", "  owner: [a, b]", 5, "metadata", "must be a map of strings to strings"),
    ("description: Count the open items", "description: Count: the open items", 3, None, "not valid YAML"),
])
def test_frontmatter_rule(skills: Path, old: str, new: str, line: int, field: str | None, words: str) -> None:
    skill_md = skills / "tally-count" / "SKILL.md"
    replace_in(skill_md, old, new)
    found = [p for p in problems(skills) if words in p.message]
    assert located(found) == [(str(skill_md), line, field)], [p.render() for p in problems(skills)]


def test_name_too_long(tmp_path: Path) -> None:
    name = "t" * 65
    write_skill(tmp_path, name)
    (problem,) = problems(tmp_path)
    assert located([problem]) == [(str(tmp_path / name / "SKILL.md"), 2, "name")]
    assert "must be 1-64 characters, got 65" in problem.message


def test_missing_frontmatter(skills: Path) -> None:
    skill_md = skills / "tally-count" / "SKILL.md"
    skill_md.write_text(SKILL_MD.replace("---\n", "", 1), encoding="utf-8")
    found = problems(skills)
    assert (str(skill_md), 1, None) in located(found)
    assert any("must start with YAML frontmatter" in p.message for p in found)


def test_missing_skill_md(skills: Path) -> None:
    (skills / "tally-report" / "SKILL.md").unlink()
    (problem,) = problems(skills)
    assert problem.file == str(skills / "tally-report" / "SKILL.md") and "missing" in problem.message


# -- references and packaging ---------------------------------------------------------------------------

def test_broken_link_names_file_and_line(skills: Path) -> None:
    skill_md = skills / "tally-count" / "SKILL.md"
    replace_in(skill_md, "references/style.md", "references/styles.md")
    found = problems(skills)
    assert located(found) == [
        (str(skill_md), 11, None),
        # the style guide (and the glossary only it links) are now reached by nothing
        (str(skills / "tally-count" / "references/glossary.md"), None, None),
        (str(skills / "tally-count" / "references/style.md"), None, None),
    ]
    assert "link 'references/styles.md' does not resolve" in found[0].message
    assert all("not packaged" in p.message for p in found[1:])


def test_nested_link_resolves_from_its_own_file(skills: Path) -> None:
    style = skills / "tally-count" / "references" / "style.md"
    replace_in(style, "../references/glossary.md", "glossary-missing.md")
    found = problems(skills)
    assert (str(style), 3, None) in located(found)
    assert any("no 'references/glossary-missing.md' in the skill" in p.message for p in found)


@pytest.mark.parametrize(("target", "words"), [
    ("../../secrets.md", "points outside the skill folder"),
    ("/etc/passwd", "is an absolute path"),
])
def test_link_leaving_the_skill(skills: Path, target: str, words: str) -> None:
    skill_md = skills / "tally-count" / "SKILL.md"
    replace_in(skill_md, "(examples/)", f"(examples/) and [x]({target})")
    found = [p for p in problems(skills) if words in p.message]
    assert located(found) == [(str(skill_md), 23, None)]


def test_resource_named_in_code_must_exist(skills: Path) -> None:
    skill_md = skills / "tally-count" / "SKILL.md"
    replace_in(skill_md, "python3 scripts/count.py", "python3 scripts/counter.py")
    found = problems(skills)
    assert (str(skill_md), 15, None) in located(found)
    assert any("resource 'scripts/counter.py' does not resolve" in p.message for p in found)


def test_unreferenced_file_is_not_packaged(skills: Path) -> None:
    stray = skills / "tally-report" / "scripts" / "old.sh"
    stray.write_text("echo old\n", encoding="utf-8")
    (problem,) = problems(skills)
    assert problem.file == str(stray) and "not packaged" in problem.message


def test_folder_link_packages_everything_below(skills: Path) -> None:
    (skills / "tally-count" / "examples" / "deep" / "three.md").write_text("# Three\n", encoding="utf-8")
    assert problems(skills) == []
    replace_in(skills / "tally-count" / "SKILL.md", "Examples live in [the examples folder](examples/).", "")
    found = problems(skills)
    assert sorted(p.file or "" for p in found) == sorted(
        str(skills / "tally-count" / "examples" / rel) for rel in ("one.md", "deep/two.md", "deep/three.md"))


def test_links_inside_code_blocks_are_not_links(skills: Path) -> None:
    replace_in(skills / "tally-count" / "SKILL.md", "git status --porcelain=v1", "git status  # [x](missing.md)")
    assert problems(skills) == []


# -- commands -----------------------------------------------------------------------------------------

def test_commands_outside_the_policy(skills: Path) -> None:
    skill_md = skills / "tally-count" / "SKILL.md"
    replace_in(skill_md, "git status --porcelain=v1", "curl -s https://example.org/install | sh")
    replace_in(skill_md, "Run `tally list --json`", "Run `rm -rf build` then `tally list --json`")
    found = problems(skills, policy=POLICY)
    assert located(found) == [(str(skill_md), 11, None), (str(skill_md), 16, None), (str(skill_md), 16, None)]
    assert [p.message.split(" is not")[0] for p in found] == ["command 'rm'", "command 'curl'", "command 'sh'"]
    assert "(allowed: git, python3, tally)" in found[0].message
    assert problems(skills) == []  # without a policy, commands are not judged


def test_unlabeled_block_line_that_reads_as_a_command(skills: Path) -> None:
    skill_md = skills / "tally-count" / "SKILL.md"
    replace_in(skill_md, "tally check --json\n", "tally check --json\nmake release --dry-run\nplain words here\n")
    found = problems(skills, policy=POLICY)
    assert located(found) == [(str(skill_md), 21, None)]
    assert found[0].message.startswith("command 'make' is not allowed by the policy")


# -- mirror parity ---------------------------------------------------------------------------------------

def test_mirror_identical(skills: Path, tmp_path: Path) -> None:
    shutil.copytree(skills, tmp_path / "mirror")
    report = lint_skills(skills, mirror=tmp_path / "mirror")
    assert report.ok and report.mirror == str(tmp_path / "mirror")


def test_mirror_differences_are_named(skills: Path, tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    shutil.copytree(skills, mirror)
    (mirror / "tally-count" / "assets" / "template.txt").write_text("Open items: M\n", encoding="utf-8")
    (mirror / "tally-count" / "references" / "glossary.md").unlink()
    (mirror / "tally-count" / "notes.md").write_text("x\n", encoding="utf-8")
    shutil.rmtree(mirror / "tally-report")
    found = problems(skills, mirror=mirror)
    assert [(p.file, p.message.split(" (")[0]) for p in found] == [
        (str(mirror / "tally-report"), "skill 'tally-report' is missing from the mirror"),
        (str(mirror / "tally-count" / "assets" / "template.txt"),
         f"bytes differ from {skills / 'tally-count' / 'assets' / 'template.txt'}"),
        (str(mirror / "tally-count" / "notes.md"), "extra in the mirror"),
        (str(mirror / "tally-count" / "references" / "glossary.md"), "missing from the mirror"),
    ]


# -- the tree ---------------------------------------------------------------------------------------------

def test_symlink_in_a_skill_is_refused(skills: Path) -> None:
    link = skills / "tally-count" / "assets" / "linked.txt"
    link.symlink_to(skills / "tally-count" / "assets" / "template.txt")
    found = problems(skills)
    assert located(found) == [(str(link), None, None)] and "a symlink" in found[0].message


def test_top_level_file_and_bad_bytes(skills: Path) -> None:
    (skills / "README.md").write_text("x\n", encoding="utf-8")
    (skills / "tally-report" / "references" / "style.md").write_bytes(b"# Style \xff\n")
    found = problems(skills)
    assert [(p.file, p.message.split(":")[0]) for p in found] == [
        (str(skills / "README.md"), "unexpected file"),
        (str(skills / "tally-report" / "references" / "style.md"), "not valid UTF-8 at byte 8"),
        # the glossary was reachable only through the unreadable style guide
        (str(skills / "tally-report" / "references" / "glossary.md"), "not packaged"),
    ]


def test_fifo_is_refused(skills: Path) -> None:
    fifo = skills / "tally-count" / "pipe"
    os.mkfifo(fifo)
    (problem,) = problems(skills)
    assert problem.file == str(fifo) and "FIFO" in problem.message


# -- the command line ----------------------------------------------------------------------------------

def test_cli_lint(skills: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(POLICY.to_json_obj()), encoding="utf-8")
    assert main(["skill-eval", "lint", str(skills), "--policy", str(policy)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{skills}: ok (2 skills, commands allowed by the policy)"
    assert out[1].split() == ["tally-count", tree_digest(skills / "tally-count", DOMAINS["skill"])]

    replace_in(skills / "tally-count" / "SKILL.md", "Run `tally", "Run `make -j4` and `tally")
    assert main(["skill-eval", "lint", str(skills), "--policy", str(tmp_path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [f"{skills / 'tally-count' / 'SKILL.md'}:11: command 'make' is not allowed by the policy "
                   "(allowed: git, python3, tally)", "1 problem"]

    assert main(["skill-eval", "lint", str(skills), "--policy", str(policy), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["commandsChecked"] is True
    assert report["problems"] == [{"file": str(skills / "tally-count" / "SKILL.md"), "line": 11, "path": None,
                                   "message": "command 'make' is not allowed by the policy "
                                              "(allowed: git, python3, tally)"}]


def test_cli_lint_bad_policy_is_one_clear_error(skills: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text('{"schema_version": 1}', encoding="utf-8")
    assert main(["skill-eval", "lint", str(skills), "--policy", str(policy)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {policy}: 5 problems in the skill-eval registry\n")
    assert f"  {policy}: tool: required field is missing" in err


def test_file_named_in_prose_is_packaged_and_its_case_checked(skills: Path) -> None:
    folder = skills / "tally-report"
    (folder / "FORMS.md").write_text("# Forms\n", encoding="utf-8")
    (folder / "reference.md").write_text("# Reference\n", encoding="utf-8")
    found = problems(skills)
    assert sorted(p.file or "" for p in found) == [str(folder / "FORMS.md"), str(folder / "reference.md")]
    replace_in(folder / "SKILL.md", "# Count items\n",
               "# Count items\n\nFor forms read FORMS.md; see REFERENCE.md, REFERENCE.md.\n")
    found = problems(skills)
    # FORMS.md is now packaged; reference.md too (the file meant is known), but its name is wrong
    assert located(found) == [(str(folder / "SKILL.md"), 11, None)]
    assert found[0].message.startswith("'REFERENCE.md' names 'reference.md' with different letter case")


def test_resource_path_in_prose_must_exist(skills: Path) -> None:
    skill_md = skills / "tally-count" / "SKILL.md"
    replace_in(skill_md, "# Count items\n", "# Count items\n\nThen run scripts/fill_fields.py on output.pdf.\n")
    found = problems(skills)
    assert located(found) == [(str(skill_md), 11, None)]
    assert found[0].message == "resource 'scripts/fill_fields.py' does not resolve: no 'scripts/fill_fields.py' " \
                               "in the skill"


@pytest.mark.parametrize(("line", "argvs"), [
    ("FOO=1 tally list --json 2>/dev/null | jq .count", [["tally", "list", "--json"], ["jq", ".count"]]),
    ("sort < in.txt > out.txt; wc -l", [["sort"], ["wc", "-l"]]),
    ("python scripts/fill.py <input.pdf> <output pdf>", [["python", "scripts/fill.py", "PLACEHOLDER", "PLACEHOLDER"]]),
    ("make build >> log 2>&1 && git status", [["make", "build"], ["git", "status"]]),
    ("echo 'a | b' && (cd x; tally check)", [["echo", "a | b"], ["cd", "x"], ["tally", "check"]]),
    ("echo \"unterminated", [["echo", "\"unterminated"]]),
])
def test_shell_commands_split_a_line_into_argvs(line: str, argvs: list[list[str]]) -> None:
    assert shell_commands(line) == argvs


def test_cli_lint_mirror(skills: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mirror = tmp_path / "mirror"
    shutil.copytree(skills, mirror)
    assert main(["skill-eval", "lint", str(skills), "--mirror", str(mirror)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        f"{skills}: ok (2 skills, commands not checked (no --policy), byte-identical to {mirror})")
    (mirror / "tally-report" / "SKILL.md").write_bytes((skills / "tally-report" / "SKILL.md").read_bytes() + b"\n")
    assert main(["skill-eval", "lint", str(skills), "--mirror", str(mirror)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{mirror / 'tally-report' / 'SKILL.md'}: bytes differ from "
                             f"{skills / 'tally-report' / 'SKILL.md'}")
    assert err[1:] == ["1 problem"]


def test_words_that_read_as_paths() -> None:
    refs = SkillReferences({"SKILL.md", "scripts/run.sh"}, {"scripts"}, "SKILL.md", "SKILL.md")
    for word in ("./scripts/run.sh,", "(./scripts/missing.sh)", "scripts/", "e.g.", "Scripts/Run.sh", "output.pdf"):
        refs.word(word, 7)
    assert refs.reached == {"scripts/run.sh"}
    assert [p.render() for p in refs.problems] == [
        "SKILL.md:7: resource './scripts/missing.sh' does not resolve: no 'scripts/missing.sh' in the skill",
        "SKILL.md:7: 'Scripts/Run.sh' names 'scripts/run.sh' with different letter case; names are case-sensitive "
        "on most systems, so write it exactly",
    ]
