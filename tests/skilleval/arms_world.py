"""A tiny world for running arms for real: a tool written here, a registry, candidate and baseline skills.

The tool (``notekeep``) is a Python script whose ``#!`` line is this interpreter, made executable; the
registry's policy allows it and ``git``. Every case, seed and skill is written into a tmp folder, and the
registry is loaded by the real validator, so a run here is what ``evalkit skill-eval run`` does.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from evalkit.skilleval import bind_all, load_registry
from evalkit.skilleval.adapters import ScriptAdapter
from evalkit.skilleval.runner import RunPlan

TOOL = r'''
"""notekeep: notes in .notekeep/notes.json (committed) or .git/notekeep/notes.json (local)."""
import json, os, sys, time
from pathlib import Path

def out(obj, code=0):
    print(json.dumps(obj, sort_keys=True))
    return code

def store():
    for p in (Path(".git/notekeep/notes.json"), Path(".notekeep/notes.json")):
        if p.is_file():
            return p
    return None

def main(argv):
    args = [a for a in argv if a != "--json"]
    cmd, rest = (args[0], args[1:]) if args else ("", [])
    if cmd == "init":
        p = Path(".git/notekeep/notes.json") if rest == ["--local"] else Path(".notekeep/notes.json")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps({"notes": []}) + "\n")
        return out({"storage": p.as_posix()})
    if cmd == "add":
        p = store()
        doc = json.loads(p.read_text())
        doc["notes"].append(rest[0])
        p.write_text(json.dumps(doc) + "\n")
        return out({"added": rest[0], "count": len(doc["notes"])})
    if cmd == "validate":
        p = store()
        valid = p is not None and isinstance(json.loads(p.read_text()).get("notes"), list)
        if os.path.exists("BREAK-VALIDATION"):
            valid = "yes"
        return out({"valid": valid}, 0 if valid else 1)
    if cmd == "echo":
        return out({"args": rest})
    if cmd == "env":
        return out({"env": dict(os.environ)})
    if cmd == "sleep":
        time.sleep(float(rest[0]))
        return out({"slept": True})
    if cmd == "fail":
        print("failing on purpose", file=sys.stderr)
        return 3
    if cmd == "link":
        os.symlink(rest[0], rest[1])
        return out({"linked": rest[1]})
    return out({"error": "unknown command"}, 2)

sys.exit(main(sys.argv[1:]))
'''

POLICY = {
    "schema_version": 1,
    "tool": "notekeep",
    "operations": {
        "git-command": {"program": "git"},
        "notekeep-command": {"program": "notekeep", "validation": {"argv": ["validate", "--json"], "pointer": "/valid"}},
    },
    "init": {"operation": "notekeep-command", "committed": ["init", "--json"], "local": ["init", "--local", "--json"]},
    "storage_modes": ["committed", "local"],
    "baseline_skills": ["jot"],
}


def write_tool(folder: Path, name: str = "notekeep", body: str = TOOL) -> Path:
    """An executable Python script run by this interpreter."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    os.chmod(path, 0o755)
    return path


def case_doc(skill: str, mode: str, *, actions: list[dict[str, Any]] | None = None,
             setup: list[Any] | None = None, baseline: bool | None = None) -> dict[str, Any]:
    """A valid case.json: add a note, validate, check git status (each with its assertion)."""
    case_id = f"{skill}-{mode}"
    actions = actions if actions is not None else [
        {"id": "add-a-note", "operation": "notekeep-command", "command": ["notekeep", "add", "buy milk", "--json"]},
        {"id": "validate-store", "operation": "notekeep-command", "command": ["notekeep", "validate", "--json"]},
        {"id": "inspect-status", "operation": "git-command", "command": ["git", "status", "--porcelain=v1"]},
    ]
    predicates = {"add-a-note": "command-exit-zero", "validate-store": "validation-pass",
                  "inspect-status": "git-worktree-clean"}
    assertions = [f"{a['id']} holds" for a in actions]
    return {
        "schema_version": 1, "case_id": case_id, "skill": skill, "storage_mode": mode,
        "baseline_required": skill in POLICY["baseline_skills"] if baseline is None else baseline,
        "prompt": f"Use the {skill} skill to add a note.",
        "expected_observation": "A note is added and the store validates.",
        "assertions": assertions,
        "human_review_questions": ["Did the agent say which note it added?"],
        "scenario": {"fixture": "fixture", "sandbox": case_id,
                     "setup": setup if setup is not None else [["git", "add", "--all"],
                                                               ["git", "commit", "--quiet", "--message", "seed"]],
                     "actions": actions},
        "oracle": {"assertions": [{"assertion": f"{a['id']} holds", "action": a["id"],
                                   "predicate": predicates.get(a["id"], "command-exit-zero")} for a in actions]},
    }


def seed_doc(mode: str) -> dict[str, Any]:
    seed: dict[str, Any] = {"schema_version": 1, "storage_mode": mode, "git_init": True,
                            "tool_init": POLICY["init"][mode]}
    if mode == "local":
        seed["decoy"] = {"path": ".notekeep/notes.json", "contents": '{"notes": ["stale"]}\n'}
        seed["provenance"] = "notekeep-test-fixture-v1"
    return seed


def write_registry(root: Path, cases: list[dict[str, Any]], policy: dict[str, Any] | None = None) -> Path:
    """Write policy.json and each case with its fixture (a README and seed.json)."""
    root.mkdir(parents=True, exist_ok=True)
    if policy is None:  # only skills with cases may be listed as in the prior release
        skills = {c["skill"] for c in cases}
        policy = {**POLICY, "baseline_skills": [s for s in POLICY["baseline_skills"] if s in skills]}
    (root / "policy.json").write_text(json.dumps(policy, indent=2) + "\n", encoding="utf-8")
    for case in cases:
        folder = root / "cases" / case["skill"] / case["case_id"]
        (folder / "fixture").mkdir(parents=True, exist_ok=True)
        (folder / "case.json").write_text(json.dumps(case, indent=2) + "\n", encoding="utf-8")
        (folder / "fixture" / "seed.json").write_text(json.dumps(seed_doc(case["storage_mode"]), indent=2) + "\n",
                                                      encoding="utf-8")
        (folder / "fixture" / "README.md").write_text(f"# fixture of {case['case_id']}\n", encoding="utf-8")
    return root


def write_skills(root: Path, version: str, skills: list[str]) -> Path:
    for skill in skills:
        folder = root / skill
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(f"---\nname: {skill}\ndescription: Keep notes ({version}).\n---\n\n"
                                         f"Run `notekeep add TEXT --json` ({version}).\n", encoding="utf-8")
    return root


def default_cases() -> list[dict[str, Any]]:
    """Skill ``jot`` (in the prior release: needs a baseline) and ``tally`` (new), in both modes."""
    return [case_doc(skill, mode) for skill in ("jot", "tally") for mode in ("committed", "local")]


GIT = shutil.which("git") or "/usr/bin/git"
"""The test machine's git, given explicitly as every run must (evalkit never looks programs up on PATH)."""

_GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
            "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def git(folder: Path, *args: str) -> str:
    """Run the test machine's git in ``folder`` with a fixed identity; its stdout."""
    return subprocess.run([GIT, *args], cwd=folder, env={**_GIT_ENV, "HOME": str(folder), "PATH": os.environ["PATH"]},
                          check=True, capture_output=True, text=True).stdout.strip()


def product_repo(folder: Path) -> tuple[Path, str]:
    """A clean product worktree on branch main with one commit, and its HEAD."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "main.c").write_text("int main(void) { return 0; }\n")
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "product")
    return folder, git(folder, "rev-parse", "HEAD")


COMMAND_TABLES = {
    "notekeep-command": {"": ["--json"], "init": ["--local", "--json"], "add": ["--json"], "validate": ["--json"],
                         "echo": ["--json"], "env": ["--json"], "sleep": ["--json"], "fail": ["--json"],
                         "link": ["--json"]},
    "git-command": {"add": ["--all"], "commit": ["--quiet", "--message"], "status": ["--porcelain=v1"]},
}
"""Documented commands of notekeep and git, for a world whose every gate must run (``gates=GATES``)."""


def documented(policy: dict[str, Any]) -> dict[str, Any]:
    """The policy with :data:`COMMAND_TABLES` (and ``--json`` as notekeep's JSON flag)."""
    policy = copy.deepcopy(policy)
    for name, table in COMMAND_TABLES.items():
        policy["operations"][name]["commands"] = table
    policy["operations"]["notekeep-command"]["json_flag"] = "--json"
    return policy


def world(tmp: Path, cases: list[dict[str, Any]] | None = None, *, out: str = "stage",
          adapter: Any = None, **plan: Any) -> RunPlan:
    """A ready RunPlan over a fresh registry, tool, skills and clean product repository in ``tmp``.

    Both arms run the same tool, declared so (``same_baseline_binary``); the stage goes to ``tmp/out``.
    With ``gates`` naming every gate, the policy documents its commands and a mirror of the candidate is given.
    """
    tool = write_tool(tmp / "bin")
    cases = copy.deepcopy(cases or default_cases())
    every_gate = set(plan.get("gates", ())) >= {"command", "parity"}
    policy = None
    if every_gate:
        skills_with_cases = {c["skill"] for c in cases}
        policy = documented({**POLICY, "baseline_skills": [s for s in POLICY["baseline_skills"]
                                                           if s in skills_with_cases]})
    registry = load_registry(write_registry(tmp / "registry", cases, policy))
    skills = sorted({c.case.skill for c in registry.cases})
    candidate = write_skills(tmp / "candidate", "v2", skills)
    if every_gate and "mirror" not in plan:
        plan["mirror"] = write_skills(tmp / "mirror", "v2", skills)
    baseline = write_skills(tmp / "baseline", "v1", skills)
    bound = bind_all(registry.policy.programs(), {"notekeep": str(tool), "git": GIT})
    defaults: dict[str, Any] = {"timeout": 20.0, "generated_at": "2026-01-31T12:00:00Z", "session_id": "test-session",
                                "same_baseline_binary": True}
    if "product_dir" not in plan:
        defaults["product_dir"], defaults["tested_head"] = product_repo(tmp / "product")
    defaults.update(plan)
    return RunPlan(registry, candidate, baseline, tmp / out, adapter or ScriptAdapter(),
                   {"candidate": bound, "baseline": bound}, **defaults)
