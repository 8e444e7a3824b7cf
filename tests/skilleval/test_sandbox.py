"""Sandboxes and executables: escapes refused, no shell, a scrubbed environment, timeouts, bound binaries."""

from __future__ import annotations

import json
import os

import pytest

from evalkit.errors import InputError, RegistryInvalid
from evalkit.skilleval import bind, read_stage, run_stage
from evalkit.skilleval.executables import parse_bindings, run_bound, scrubbed_env
from evalkit.skilleval.sandbox import check_argv_paths, check_relative, copy_fixture, plant

from .arms_world import case_doc, world, write_tool


@pytest.mark.parametrize("path", ["../up", "a/../../b", "/etc/passwd", "~/x", "C:\\x", "c:/x", "a\\b", "", "./a",
                                  "a//b", "a/."])
def test_relative_paths_that_escape_are_refused(path):
    with pytest.raises(InputError, match="must be a relative path inside the sandbox"):
        check_relative(path, "decoy.path")


def test_relative_paths_inside_are_fine():
    assert str(check_relative(".notekeep/notes.json", "decoy.path")) == ".notekeep/notes.json"


@pytest.mark.parametrize("arg", ["/etc/passwd", "../outside", "notes/../../x", "--file=/etc/shadow", "~/.ssh/id",
                                 "--out=../x", "C:\\Windows", "..", "~"])
def test_command_arguments_that_reach_outside_are_refused(arg):
    with pytest.raises(InputError, match=r"reaches outside the sandbox") as err:
        check_argv_paths(["notekeep", "add", arg], "scenario.actions[0].command")
    assert err.value.message.startswith("scenario.actions[0].command[2]: ")


@pytest.mark.parametrize("arg", ["HEAD..main", "notes/today.md", "a; rm -rf ~", "$(id)", "--porcelain=v1", "x|y",
                                 "Release branch is main"])
def test_ordinary_arguments_pass(arg):
    check_argv_paths(["git", "log", arg], "cmd")


def test_fixture_copy_refuses_symlinks_and_skips_the_seed(tmp_path):
    fixture = tmp_path / "fixture"
    (fixture / "docs").mkdir(parents=True)
    (fixture / "seed.json").write_text("{}")
    (fixture / "docs" / "a.md").write_text("a")
    (fixture / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(fixture / "run.sh", 0o700)
    assert copy_fixture(fixture, tmp_path / "sb") == ["docs/a.md", "run.sh"]
    assert not (tmp_path / "sb" / "seed.json").exists()
    assert os.stat(tmp_path / "sb" / "run.sh").st_mode & 0o777 == 0o755
    with pytest.raises(InputError, match="exists already"):
        copy_fixture(fixture, tmp_path / "sb")
    (fixture / "docs" / "escape").symlink_to("/etc/passwd")
    with pytest.raises(InputError, match="symlink") as err:
        copy_fixture(fixture, tmp_path / "sb2")
    assert err.value.file.endswith("docs/escape")


def test_decoy_cannot_be_written_through_a_symlinked_folder(tmp_path):
    sandbox = tmp_path / "sb"
    outside = tmp_path / "outside"
    sandbox.mkdir()
    outside.mkdir()
    (sandbox / "state").symlink_to(outside, target_is_directory=True)
    with pytest.raises(InputError, match="resolves outside the sandbox"):
        plant(sandbox, "state/notes.json", b"x", "decoy.path")
    assert list(outside.iterdir()) == []
    with pytest.raises(InputError, match="relative path inside the sandbox"):
        plant(sandbox, "../outside/notes.json", b"x", "decoy.path")
    plant(sandbox, "ok/notes.json", b"x", "decoy.path")
    assert (sandbox / "ok" / "notes.json").read_bytes() == b"x"


def _one_case(tmp_path, actions, **plan):
    """A world whose two cases (committed, local) run ``actions``; the registry validator sees them first."""
    return world(tmp_path, [case_doc("tally", m, actions=actions) for m in ("committed", "local")], **plan)


def test_shell_metacharacters_are_refused_in_cases_and_stay_literal_when_run(tmp_path):
    literal = ["a; touch pwned", "$(touch pwned2)", "`id`", "x | tee pwned3", "*", "&&", ">pwned4"]
    actions = [{"id": "echo-arguments", "operation": "notekeep-command",
                "command": ["notekeep", "echo", *literal, "--json"]}]
    with pytest.raises(RegistryInvalid) as caught:
        _one_case(tmp_path, actions)
    found = [p.render() for p in caught.value.problems if "tally-committed" in (p.file or "")]
    assert len(found) == 6  # every argument but '*', each named by its index
    assert found[0].endswith("case.json: scenario.actions[0].command: security gate: argument 2 'a; touch pwned' "
                             "holds a shell metacharacter; commands run as argv without a shell, so write one "
                             "command per step")
    # and a command that holds them anyway (an agent's) is still run without a shell
    tool = bind("notekeep", str(write_tool(tmp_path / "bin")))
    work = tmp_path / "work"
    work.mkdir()
    result = run_bound(tool, ["notekeep", "echo", *literal, "--json"], cwd=work, env=scrubbed_env([tool], work),
                       timeout=20)
    assert json.loads(result.stdout) == {"args": literal}
    assert not list(work.iterdir())


def test_symlink_out_of_the_sandbox_made_by_a_command_makes_the_arm_missing(tmp_path):
    actions = [{"id": "link-outside", "operation": "notekeep-command",
                "command": ["notekeep", "link", "secret-target", "escape", "--json"]}]
    plan = _one_case(tmp_path, actions)
    lines: list[str] = []
    stage = read_stage(run_stage(plan, lines.append).parent)
    assert lines[1].startswith("tally-committed candidate: missing (adapter error: ")
    assert "escape: cannot digest: a symlink is not allowed" in lines[1]
    assert stage.report.cases[0].candidate is None


def test_escaping_argument_makes_the_arm_missing_before_it_runs(tmp_path, monkeypatch):
    # The registry validator may refuse such an argv too; the runner does not rely on it.
    plan = _one_case(tmp_path, None)
    action = plan.registry.cases[0].case.scenario.actions[0]
    monkeypatch.setattr(action, "command", ["notekeep", "add", "../../outside", "--json"])
    lines: list[str] = []
    run_stage(plan, lines.append)
    assert "add-a-note (command 3)[2]: '../../outside' reaches outside the sandbox" in lines[1]
    assert "missing" in lines[1]


def test_environment_is_scrubbed_to_the_allow_list(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "leak")
    monkeypatch.setenv("GIT_DIR", "/somewhere/else")
    actions = [{"id": "show-environment", "operation": "notekeep-command", "command": ["notekeep", "env", "--json"]}]
    plan = _one_case(tmp_path, actions)
    run_stage(plan)
    raw = plan.out / "raw" / "tally-committed" / "candidate"
    env = json.loads((raw / "commands" / "03-show-environment.stdout").read_text())["env"]
    env.pop("LC_CTYPE", None)  # Python may set it itself for the C.UTF-8 locale
    assert "AWS_SECRET_ACCESS_KEY" not in env and "GIT_DIR" not in env
    assert env["HOME"] == str(raw / "sandbox")
    bound = plan.executables["candidate"]
    assert env["PATH"] == os.pathsep.join([str(bound["git"].path.parent), str(bound["notekeep"].path.parent)])
    assert (env["LANG"], env["LC_ALL"], env["TZ"]) == ("C.UTF-8", "C.UTF-8", "UTC")
    assert env["GIT_AUTHOR_DATE"] == env["GIT_COMMITTER_DATE"] == "2000-01-01T00:00:00+00:00"
    assert set(env) == set(scrubbed_env(plan.executables["candidate"].values(), raw / "sandbox"))


@pytest.mark.slow
def test_timeout_kills_the_command_and_the_arm_is_missing(tmp_path):
    actions = [{"id": "wait-forever", "operation": "notekeep-command", "command": ["notekeep", "sleep", "30", "--json"]}]
    plan = _one_case(tmp_path, actions, timeout=1.0)
    lines: list[str] = []
    run_stage(plan, lines.append)
    assert "wait-forever (command 3): notekeep sleep 30 --json timed out after 1 s" in lines[1]


def test_a_changed_executable_is_refused_before_it_runs(tmp_path):
    tool = write_tool(tmp_path / "bin")
    bound = bind("notekeep", str(tool))
    result = run_bound(bound, ["notekeep", "echo", "x", "--json"], cwd=tmp_path, env={}, timeout=20)
    assert json.loads(result.stdout) == {"args": ["x"]}
    tool.write_text(tool.read_text() + "\n# swapped\n")
    with pytest.raises(InputError, match="changed since it was bound"):
        run_bound(bound, ["notekeep", "echo", "x", "--json"], cwd=tmp_path, env={}, timeout=20)


def test_binding_resolves_symlinks_and_refuses_non_executables(tmp_path):
    tool = write_tool(tmp_path / "bin")
    (tmp_path / "alias").symlink_to(tool)
    assert bind("notekeep", str(tmp_path / "alias")).path == tool
    (tmp_path / "plain.txt").write_text("x")
    with pytest.raises(InputError, match="not an executable regular file"):
        bind("plain", str(tmp_path / "plain.txt"))
    with pytest.raises(InputError, match="evalkit never looks a program up on PATH"):
        bind("no-such-program-anywhere", None)
    with pytest.raises(InputError, match="expected NAME=PATH"):
        parse_bindings(["notekeep"])
    with pytest.raises(InputError, match="given twice"):
        parse_bindings(["a=/x", "a=/y"])


def test_a_script_run_through_env_finds_its_interpreter_wherever_it_is_installed(tmp_path, monkeypatch):
    """``#!/usr/bin/env NAME`` is resolved when the script is bound, so a scrubbed PATH still holds NAME's folder
    (python3 lives in /usr/local/bin on some machines, /usr/bin on others)."""
    interp_dir, tool_dir, home = tmp_path / "interp", tmp_path / "tool", tmp_path / "home"
    for d in (interp_dir, tool_dir, home):
        d.mkdir()
    interp = interp_dir / "myinterp"
    interp.write_text("#!/bin/sh\necho \"interpreted $1\"\n")
    tool = tool_dir / "mytool"
    tool.write_text("#!/usr/bin/env myinterp\n")
    for f in (interp, tool):
        f.chmod(0o755)
    monkeypatch.setenv("PATH", f"{interp_dir}{os.pathsep}{os.environ['PATH']}")
    bound = bind("mytool", str(tool))
    assert bound.interpreter == interp_dir.resolve()
    env = scrubbed_env([bound], home)
    assert env["PATH"].split(os.pathsep) == [str(tool_dir.resolve()), str(interp_dir.resolve())]
    result = run_bound(bound, ["mytool", "x"], cwd=home, env=env, timeout=20)
    assert result.returncode == 0 and result.stdout.decode().startswith("interpreted")


def test_git_in_a_sandbox_never_collects_garbage_on_its_own(tmp_path):
    """A detached auto gc would repack the sandbox while its evidence is digested and outlive the arm."""
    git = bind("git", "/usr/bin/git")
    env = scrubbed_env([git], tmp_path)
    (tmp_path / ".gitconfig").write_text("[gc]\n\tauto = 1\n[maintenance]\n\tauto = true\n")  # what an action may write
    run_bound(git, ["git", "init", "-q"], cwd=tmp_path, env=env, timeout=20)
    for key, value in (("gc.auto", "0"), ("maintenance.auto", "false")):
        result = run_bound(git, ["git", "config", "--get", key], cwd=tmp_path, env=env, timeout=20)
        assert result.stdout.decode().strip() == value
