"""Step 5 of the release method: an agent proposes a patch to the candidate skills; a human decides.

:func:`propose_patch` reads a verified stage, picks the cases whose candidate arm did not pass, and
lays out a workspace of its own (a temporary folder, removed afterwards)::

    WORKSPACE/skills/<skill>/...       a copy of the candidate skills: the only thing the agent may change
    WORKSPACE/evidence/<case_id>/      each failing case: case.json, facts.json, the commands' outputs,
                                       the transcript and failures.md (what failed, in words)
    WORKSPACE/TASK.md                  what is asked: change the skills so the failures go away

It then runs the user's agent command there (``{task}``, ``{skills}``, ``{evidence}`` and
``{workspace}`` replaced in its argv; no shell; the environment scrubbed; a timeout), and writes what
the agent changed under ``skills/`` as a unified diff (``patch -p1 -d CANDIDATE < PATCH`` applies it).
Nothing is applied: the candidate skills, the fixtures and the stage are digested before and after,
and a change to any of them is an error. The agent never sees a fixture or the shipped sources.
"""

from __future__ import annotations

import difflib
import shlex
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import InputError
from evalkit.io import atomic_write_text, canonical_dumps
from evalkit.skilleval.digest import DOMAINS, tree_digest, tree_files
from evalkit.skilleval.executables import bind, run_bound, scrubbed_env
from evalkit.skilleval.stage import REGISTRY_COPY, arm_evidence, read_stage, stage_inputs

_PLACEHOLDERS = ("task", "skills", "evidence", "workspace")

TASK = """\
# Propose a change to the candidate skills

The cases in evidence/ failed with the candidate skills in skills/. Each evidence/<case_id>/ holds the
case (case.json), what each command did (facts.json, the *.stdout and *.stderr files), the agent
transcript and failures.md.

If the failures reveal a general problem of a skill (not of one case), change the files under skills/
to fix it. Change nothing else: the cases and their fixtures are the yardstick, not the patient. Your
change is shown to a maintainer as a diff; nothing is applied without them.
"""


@dataclass(frozen=True)
class Proposal:
    """What :func:`propose_patch` did: the failing cases given, the files the patch changes, the agent's exit."""

    cases: list[str]
    changed: list[str]
    exit_code: int | None
    timed_out: bool
    patch: Path | None


def failing_cases(stage_dir: str | Path) -> list[str]:
    """The ids of staged cases whose candidate arm is missing or did not pass (outcome and grade)."""
    stage = read_stage(stage_dir)
    return [case.case_id for case in stage.report.cases
            if case.candidate is None or (case.candidate.outcome, case.candidate.deterministic_grade) != ("pass", "pass")]


def _write_evidence(stage_dir: Path, case_id: str, folder: Path) -> None:
    inputs = stage_inputs(stage_dir)
    case = inputs.cases[case_id]
    folder.mkdir(parents=True)
    (folder / "case.json").write_text(canonical_dumps(case.to_json_obj()), encoding="utf-8")
    lines = [f"# {case_id}", "", f"Prompt: {case.prompt}", "", f"Expected: {case.expected_observation}", ""]
    try:
        evidence = arm_evidence(stage_dir, case_id, "candidate")
    except InputError:
        lines.append("The candidate arm left no evidence (it could not run to the end).")
    else:
        (folder / "facts.json").write_text(canonical_dumps(evidence.facts), encoding="utf-8")
        (folder / "transcript.txt").write_text(evidence.transcript, encoding="utf-8")
        for name, text in evidence.outputs.items():
            (folder / name).write_text(text, encoding="utf-8")
        for fact in evidence.facts:
            if fact["exit_code"] != 0 or fact["validation_passed"] is False:
                lines.append(f"- {fact['action']}: `{' '.join(fact['command'])}` exited {fact['exit_code']}"
                             + (", validation failed" if fact["validation_passed"] is False else ""))
    (folder / "failures.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def skills_diff(before: Path, after: Path) -> tuple[str, list[str]]:
    """A unified diff (``a/``/``b/`` prefixes, ``patch -p1`` style) from ``before`` to ``after``, and the files in it."""
    old = dict(tree_files(before))
    new = dict(tree_files(after))
    parts: list[str] = []
    changed: list[str] = []
    for rel in sorted(old.keys() | new.keys()):
        a = old[rel].read_bytes() if rel in old else None
        b = new[rel].read_bytes() if rel in new else None
        if a == b:
            continue
        changed.append(rel)
        try:
            a_lines = [] if a is None else a.decode("utf-8").splitlines(keepends=True)
            b_lines = [] if b is None else b.decode("utf-8").splitlines(keepends=True)
        except UnicodeDecodeError:
            parts.append(f"Binary files a/{rel} and b/{rel} differ\n")
            continue
        diff = difflib.unified_diff(a_lines, b_lines, "/dev/null" if a is None else f"a/{rel}",
                                    "/dev/null" if b is None else f"b/{rel}")
        for line in diff:
            parts.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(parts), changed


def propose_patch(stage_dir: str | Path, candidate_dir: str | Path, agent_command: str, out: str | Path, *,
                  timeout: float = 900.0, say: Callable[[str], None] = lambda line: None) -> Proposal:
    """Run the agent on a copy of the candidate skills with the failing cases' evidence; write its diff.

    Args:
        stage_dir: a stage ``evalkit skill-eval run`` sealed (verified first).
        candidate_dir: the candidate skills the stage ran (refused unless their digest is the staged one).
        agent_command: the agent's argv as one string (split like a shell would; its program a path).
        out: where to write the patch (a unified diff; not written when there is no failing case).
        timeout: seconds before the agent is stopped.
        say: called with progress lines.

    Returns:
        The proposal: which cases were given, which files the patch changes.

    Raises:
        InputError: the stage is refused, the candidate is not the staged one, the agent command names no
            path, or the agent changed something outside its copy of the skills.
    """
    stage_path = Path(stage_dir)
    stage = read_stage(stage_path)
    candidate = Path(candidate_dir)
    if tree_digest(candidate, DOMAINS["skill-set"]) != stage.report.candidate.skills_sha256:
        raise InputError("these are not the candidate skills the stage ran (their digest differs from "
                         "candidate.skills_sha256); give the folder the run used", file=str(candidate))
    argv = shlex.split(agent_command)
    if not argv or "/" not in argv[0]:
        raise InputError("--agent-command must start with the agent's path (evalkit never looks a program up on "
                         "PATH), e.g. './bin/agent {task}'", path="--agent-command")
    cases = failing_cases(stage_path)
    if not cases:
        say("no failing case: every candidate arm passed, nothing to propose")
        return Proposal([], [], None, False, None)
    agent = bind(Path(argv[0]).name, argv[0])
    guarded = {"candidate skills": (candidate, "skill-set"),
               "registry copy (fixtures)": (stage_path / REGISTRY_COPY, "fixtures")}
    before = {name: tree_digest(folder, DOMAINS[domain]) for name, (folder, domain) in guarded.items()}
    workspace = Path(tempfile.mkdtemp(prefix="evalkit-propose-"))
    try:
        shutil.copytree(candidate, workspace / "skills", symlinks=False)
        for case_id in cases:
            _write_evidence(stage_path, case_id, workspace / "evidence" / case_id)
        (workspace / "TASK.md").write_text(TASK, encoding="utf-8")
        values = {"task": str(workspace / "TASK.md"), "skills": str(workspace / "skills"),
                  "evidence": str(workspace / "evidence"), "workspace": str(workspace)}
        command = [agent.name, *(_fill(part, values) for part in argv[1:])]
        say(f"agent {agent.name} ({agent.sha256[:12]}) on {len(cases)} failing case(s): {', '.join(cases)}")
        result = run_bound(agent, command, cwd=workspace, env=scrubbed_env([agent], workspace), timeout=timeout,
                           confine_to=workspace)
        for name, (folder, domain) in guarded.items():
            if tree_digest(folder, DOMAINS[domain]) != before[name]:
                raise InputError(f"the {name} changed while the agent ran: a proposal never edits them; "
                                 "restore them from version control", file=str(folder))
        text, changed = skills_diff(candidate, workspace / "skills")
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    patch = Path(out)
    atomic_write_text(patch, text)
    return Proposal(cases, changed, result.returncode, result.timed_out, patch)


def _fill(part: str, values: dict[str, str]) -> str:
    for name in _PLACEHOLDERS:
        part = part.replace("{" + name + "}", values[name])
    return part
