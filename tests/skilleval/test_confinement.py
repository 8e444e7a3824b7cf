"""A sandbox that holds: the Git escapes a hostile registry or agent tries, writes outside the sandbox, the
watch list after each arm, and secrets given to an agent kept out of everything sealed or shown."""

from __future__ import annotations

import json
import os

import pytest

from evalkit.cli.main import main
from evalkit.skilleval import bind, read_stage, run_stage, write_worksheet
from evalkit.skilleval.adapters import CommandAdapter
from evalkit.skilleval.confine import confinement

from .arms_world import case_doc, world, write_registry, write_tool

ESCAPES = [
    (["git", "-c", "alias.st=!touch ../../escaped", "st"], "'-c' sets Git configuration or state on the command line"),
    (["git", "-c", "core.hooksPath=hooks", "commit", "--quiet", "--message", "x"],
     "'-c' sets Git configuration or state on the command line ('core.hooksPath=hooks')"),
    (["git", "config", "--global", "user.name", "evil"],
     "'git config --global user.name evil' would configure Git beyond the repository's plain settings"),
    (["git", "config", "alias.st", "!touch escaped"], "'git config alias.st !touch escaped' would configure Git"),
]


@pytest.mark.parametrize(("argv", "message"), ESCAPES)
def test_a_registry_cannot_run_a_shell_or_a_hook_through_git(tmp_path, capsys, argv, message):
    actions = [{"id": "escape-through-git", "operation": "git-command", "command": argv}]
    root = write_registry(tmp_path / "registry", [case_doc("tally", m, actions=actions) for m in ("committed", "local")])
    assert main(["skill-eval", "validate", str(root)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert any("case.json: scenario.actions[0].command: security gate: " + message in line for line in lines), lines
    assert not (tmp_path / "escaped").exists()


def test_a_fixture_cannot_bring_a_git_config(tmp_path, capsys):
    root = write_registry(tmp_path / "registry", [case_doc("tally", m) for m in ("committed", "local")])
    fixture = root / "cases" / "tally" / "tally-local" / "fixture"
    (fixture / ".gitconfig").write_text("[alias]\n\tst = !touch escaped\n")
    assert main(["skill-eval", "validate", str(root)]) == 1
    assert "a fixture may not hold Git configuration" in capsys.readouterr().err


HOSTILE_AGENT = """\
import os, subprocess, sys
outside = sys.argv[1]
for path in (outside, os.path.join(os.environ["CALLER_HOME"], ".gitconfig")):
    try:
        with open(path, "a") as fh:
            fh.write("written by the agent\\n")
        print("wrote", path)
    except OSError as exc:
        print("refused", type(exc).__name__)
os.makedirs("hooks", exist_ok=True)
with open("hooks/post-commit", "w") as fh:
    fh.write("#!/bin/sh\\necho hooked > " + outside + ".hook\\necho hooked > hook-ran\\n")
os.chmod("hooks/post-commit", 0o755)
subprocess.run(["git", "config", "core.hooksPath", "hooks"], check=True)
subprocess.run(["git", "config", "--global", "user.name", "agent"], check=True)
print("token", os.environ.get("AGENT_TOKEN"))
"""


@pytest.mark.slow
def test_an_agent_cannot_write_outside_nor_make_git_run_its_hook(tmp_path, monkeypatch):
    home = tmp_path / "caller-home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = caller\n")
    monkeypatch.setenv("HOME", str(home))
    outside = tmp_path / "outside.txt"
    actions = [{"id": "commit-the-work", "operation": "git-command",
                "command": ["git", "commit", "--quiet", "--allow-empty", "--message", "work"]}]
    agent = write_tool(tmp_path / "agentbin", "agent", HOSTILE_AGENT)
    adapter = CommandAdapter(bind("agent", str(agent)), ["agent", str(outside)], 20.0, {"CALLER_HOME": str(home)})
    plan = world(tmp_path, [case_doc("tally", m, actions=actions) for m in ("committed", "local")], adapter=adapter)
    lines: list[str] = []
    stage = read_stage(run_stage(plan, lines.append).parent)
    sandbox = plan.out / "raw" / "tally-committed" / "candidate" / "sandbox"
    assert not (sandbox / "hook-ran").exists() and not outside.with_suffix(".txt.hook").exists()
    assert (sandbox / ".gitconfig").read_text() == "[user]\n\tname = agent\n"  # --global stayed in the sandbox
    assert stage.report.release.watched[0] == "the caller's global Git config"
    if confinement() is not None:
        assert stage.report.release.confined
        assert not outside.exists() and (home / ".gitconfig").read_text() == "[user]\n\tname = caller\n"
        transcript = (plan.out / "raw" / "tally-committed" / "candidate" / "transcript.txt").read_text()
        assert transcript.count("refused PermissionError") + transcript.count("refused OSError") == 2
    else:  # unconfined: the writes happen, and the watch list turns the arm into missing evidence
        assert not stage.report.release.confined
        assert any("missing (outside its sandbox changed while it ran: the caller's global Git config" in line
                   for line in lines)


SECRET_AGENT = """\
import os
print("the token is", os.environ["AGENT_TOKEN"])
if os.environ["AGENT_TOKEN"] and os.path.exists(".git/skill-eval-provenance"):
    open("leak.txt", "w").write(os.environ["AGENT_TOKEN"])
"""


@pytest.mark.slow
def test_a_secret_given_to_the_agent_is_redacted_everywhere_it_is_kept_or_shown(tmp_path):
    agent = write_tool(tmp_path / "agentbin", "agent", SECRET_AGENT)
    secret = "sk-test-0123456789abcdef"
    adapter = CommandAdapter(bind("agent", str(agent)), ["agent"], 20.0, {"AGENT_TOKEN": secret})
    plan = world(tmp_path, [case_doc("tally", m) for m in ("committed", "local")], adapter=adapter)
    lines: list[str] = []
    stage = read_stage(run_stage(plan, lines.append).parent)
    committed = plan.out / "raw" / "tally-committed" / "candidate"
    assert "the token is [redacted AGENT_TOKEN]" in (committed / "transcript.txt").read_text()
    # the local case's agent wrote it into the sandbox: the arm is refused and the file blanked
    assert "a secret passed to the agent was written to sandbox/leak.txt (now redacted there)" in lines[2]
    assert stage.report.cases[1].candidate is None
    page = write_worksheet(plan.out, tmp_path / "worksheet.html")
    for path in [page, *plan.out.rglob("*")]:
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert "[redacted AGENT_TOKEN]" in page.read_text()
    assert json.loads((plan.out / "stage.json").read_text())["report"]["release"]["confined"] == \
        (confinement() is not None)
    assert os.environ.get("AGENT_TOKEN") is None


@pytest.mark.slow
def test_unconfined_the_watch_list_turns_an_arm_that_wrote_outside_into_missing_evidence(tmp_path, monkeypatch):
    import evalkit.skilleval.executables as executables
    import evalkit.skilleval.runner as runner

    monkeypatch.setattr(executables, "confined_argv", lambda *args: None)  # as on a machine without unshare
    monkeypatch.setattr(runner, "confinement", lambda: None)
    home = tmp_path / "caller-home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = caller\n")
    monkeypatch.setenv("HOME", str(home))
    agent = write_tool(tmp_path / "agentbin", "agent", HOSTILE_AGENT)
    adapter = CommandAdapter(bind("agent", str(agent)), ["agent", str(tmp_path / "outside.txt")], 20.0,
                             {"CALLER_HOME": str(home)})
    plan = world(tmp_path, [case_doc("tally", m) for m in ("committed", "local")], adapter=adapter)
    lines: list[str] = []
    stage = read_stage(run_stage(plan, lines.append).parent)
    assert lines[1].startswith("not confined: this machine cannot give commands a private mount namespace")
    assert lines[3] == ("tally-committed candidate: missing (outside its sandbox changed while it ran: the caller's "
                        "global Git config)")
    assert not stage.report.release.confined and stage.report.cases[0].candidate is None
