"""The deterministic checks of a run: every gate run by evalkit itself, its result recorded in the stage.

Before any arm runs, the candidate skills are linted against the registry's policy (with the mirror when
given), and each problem is sorted under the gate it belongs to (:class:`~evalkit.skilleval.gates.GateProblem`
carries its gate; a mirror difference is ``parity``; anything else is ``skill-lint``). The registry was
validated before (``registry``), with the same gates over every case, so its share of each gate passed.

Each gate's result is recorded (``deterministic_checks.gates``): ``pass`` or ``fail`` with its problems (as
safe text: paths relative to the candidate folder or the registry), or ``not-run`` with the reason (no
command table for an operation the cases use; no mirror for parity). Only gates that ran are evidence,
and the checks pass only when none failed. A failed gate fails the release, never the run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalkit.contracts.skilleval import check_summary
from evalkit.errors import InputError
from evalkit.skilleval.gates import GATES, GateProblem, undocumented_operations
from evalkit.skilleval.lint import lint_skills
from evalkit.skilleval.registry import Registry
from evalkit.skilleval.registry_rules import case_invocations
from evalkit.skilleval.registry_tree import shown


def _safe(problem: InputError, roots: dict[str, str]) -> str:
    """A problem as committed text: local folders replaced by what they are, else only its message."""
    text = problem.render()
    for folder, name in roots.items():
        text = text.replace(folder + "/", name + "/").replace(folder, name)
    try:
        check_summary(text, "problem")
    except ValueError:
        return problem.message if _is_safe(problem.message) else "a problem whose text names a local path"
    return text


def _is_safe(text: str) -> bool:
    try:
        check_summary(text, "problem")
    except ValueError:
        return False
    return True


def run_gates(registry: Registry, candidate_dir: Path, mirror: Path | None,
              progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Run every gate over the candidate skills (the registry's share passed when it was validated).

    Args:
        registry: the validated registry.
        candidate_dir: the candidate skills folder.
        mirror: the committed mirror of the candidate skills, or None (parity is then not run).
        progress: called with each problem and a summary line.

    Returns:
        The report's ``deterministic_checks``: ``outcome``, ``evidence`` (the gates that ran) and ``gates``.
    """
    report = lint_skills(candidate_dir, mirror=mirror, policy=registry.policy)
    mirror_shown = shown(mirror) if mirror is not None else None
    found: dict[str, list[InputError]] = {name: [] for name in ("registry", "skill-lint", *GATES)}
    for problem in report.problems:
        progress(f"skill lint: {problem.render()}")
        if isinstance(problem, GateProblem):
            found[problem.gate].append(problem)
        elif mirror_shown is not None and (problem.file or "").startswith(mirror_shown):
            found["parity"].append(problem)
        else:
            found["skill-lint"].append(problem)
    invocations = [i for loaded in registry.cases
                   for i in case_invocations(registry.policy, loaded.case, "", loaded.seed.tool_init)]
    not_run = {"parity": "no --mirror given: nothing to compare the candidate skills with"} if mirror is None else {}
    undocumented = undocumented_operations(invocations, registry.policy)
    if undocumented:
        not_run["command"] = (f"the policy has no command table for {', '.join(undocumented)} "
                              "(operations.<operation>.commands)")
    roots = {shown(candidate_dir): "candidate", shown(registry.root): "registry",
             **({mirror_shown: "mirror"} if mirror_shown is not None else {})}
    skills, cases = len(report.skills), len(registry.cases)
    gates = []
    for name in sorted(found):
        problems = [_safe(p, roots) for p in found[name]]
        if name in not_run and not problems:
            gates.append({"name": name, "outcome": "not-run", "checked": not_run[name], "problems": []})
            continue
        checked = (f"{cases} case(s) validated" if name == "registry"
                   else f"{skills} skill(s)" + ("" if name in ("skill-lint", "parity") else f" and {cases} case(s)"))
        gates.append({"name": name, "outcome": "fail" if problems else "pass", "checked": checked,
                      "problems": problems})
    ran = sorted(g["name"] for g in gates if g["outcome"] != "not-run")
    outcome = "fail" if any(g["outcome"] == "fail" for g in gates) else "pass"
    skipped = [f"{g['name']} not run: {g['checked']}" for g in gates if g["outcome"] == "not-run"]
    progress(f"deterministic checks: {outcome} ({', '.join(ran)}; {len(report.problems)} lint problem(s))"
             + "".join(f"; {line}" for line in skipped))
    return {"outcome": outcome, "evidence": ran, "gates": gates}
