"""A sealed stage and raw evidence built from the contracts, for worksheet and report-view tests.

The cases are the sample registry's (data/skilleval/registry); arms, facts and transcripts are made up
here in the shapes the runner writes, so these tests do not depend on running anything.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.contract_files import read_model
from evalkit.contracts.skilleval import (
    DeterministicChecks,
    ReportCase,
    SkillEvalCase,
    SkillEvalStage,
    base_outcome,
    stage_seal,
)
from evalkit.contracts.skilleval_policy import SkillEvalPolicy

REGISTRY = Path(__file__).resolve().parents[2] / "data" / "skilleval" / "registry"
CANDIDATE_EXE = hashlib.sha256(b"tasknote candidate").hexdigest()
BASELINE_EXE = hashlib.sha256(b"tasknote baseline").hexdigest()


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sample_cases() -> dict[str, SkillEvalCase]:
    """The sample registry's cases by id, read through the case contract."""
    paths = sorted(REGISTRY.glob("cases/*/*/case.json"))
    return {c.case_id: c for c in (read_model(p, SkillEvalCase) for p in paths)}


def sample_policy() -> SkillEvalPolicy:
    """The sample registry's policy."""
    return read_model(REGISTRY / "policy.json", SkillEvalPolicy)


def run(arm: str, outcome: str = "pass", grade: str = "pass") -> dict[str, Any]:
    return {"outcome": outcome, "deterministic_grade": grade,
            "executable_sha256": CANDIDATE_EXE if arm == "candidate" else BASELINE_EXE,
            "skill_sha256": sha(f"skill {arm}"), "raw_sha256": sha(f"raw {arm}")}


def make_stage(cases: dict[str, SkillEvalCase], arms: dict[str, tuple[Any, Any]],
               questions: dict[str, list[str]] | None = None) -> SkillEvalStage:
    """A sealed stage over ``cases``; ``arms[case_id]`` is (candidate, baseline) RunResult dicts or None."""
    report_cases, worksheet = [], []
    for case in sorted(cases.values(), key=lambda c: (c.skill, c.case_id)):
        cand, base = arms.get(case.case_id, (run("candidate"), run("baseline") if case.baseline_required else None))
        report_cases.append({"case_id": case.case_id, "skill": case.skill, "storage_mode": case.storage_mode,
                             "fixture_sha256": sha(f"fixture {case.case_id}"),
                             "baseline_required": case.baseline_required, "candidate": cand, "baseline": base,
                             "comparison": "inconclusive", "human_review": None})
        worksheet.append({"case_id": case.case_id, "skill": case.skill, "candidate": cand, "baseline": base,
                          "human_review_questions": (questions or {}).get(case.case_id,
                                                                          case.human_review_questions)})
    observed = any(c["candidate"] or c["baseline"] for c in report_cases)
    checks = {"outcome": "pass", "evidence": ["lint", "registry"]}
    outcome, _ = base_outcome(DeterministicChecks.model_validate(checks),
                              [ReportCase.model_validate(c) for c in report_cases])
    report = {
        "schema_version": 1, "session_id": "sample-release-0-2", "generated_at": "2026-11-30T09:00:00Z",
        "tested_head": "0" * 40, "candidate_executable_sha256": CANDIDATE_EXE,
        "baseline_executable_sha256": BASELINE_EXE, "product_sha256": sha("product"), "outcome": outcome,
        "candidate": {"version": "0.2.0", "skills_sha256": sha("candidate skills")},
        "baseline": {"version": "0.1.0", "skills_sha256": sha("baseline skills")},
        "fixtures_sha256": sha("fixtures"), "adapter": {"name": "script", "version": "1", "observed": observed},
        "model": {}, "cases": report_cases,
        "deterministic_checks": checks,
        "human_review": None, "waiver": None,
    }
    stage = {"schema_version": 1, "report": report, "worksheet": worksheet}
    stage["seal"] = stage_seal(stage)
    return SkillEvalStage.model_validate(stage)


@dataclass
class Evidence:
    """One arm's raw evidence in the shape of ``evalkit.skilleval.ArmEvidence``."""

    facts: list[dict[str, Any]]
    transcript: str
    outputs: dict[str, str] = field(default_factory=dict)


def evidence_for(case: SkillEvalCase, arm: str, *, exit_codes: dict[str, int] | None = None,
                 transcript: str | None = None) -> Evidence:
    """Facts for each setup step and action of ``case`` (exit 0 unless ``exit_codes`` says otherwise)."""
    steps = [(f"setup-{i + 1}", f"{argv[0]}-command", argv) for i, argv in enumerate(case.scenario.setup_argvs())]
    steps += [(a.id, a.operation, list(a.command)) for a in case.scenario.actions]
    facts, outputs = [], {}
    for action, operation, argv in steps:
        code = (exit_codes or {}).get(action, 0)
        validates = argv[1:] == ["validate", "--json"]
        stdout = '{"valid": %s}\n' % ("true" if code == 0 else "false") if validates else ""
        facts.append({"action": action, "operation": operation, "command": argv, "exit_code": code,
                      "stdout_sha256": sha(stdout), "stderr_sha256": sha(""), "before_sha256": sha("b"),
                      "after_sha256": sha("a"), "git_before_sha256": sha("g"), "git_after_sha256": sha("g"),
                      "validation_passed": (code == 0) if validates else None, "storage_paths": []})
        outputs[f"{action}.stdout"] = stdout
        outputs[f"{action}.stderr"] = ""
    text = transcript if transcript is not None else f"{arm} arm of {case.case_id}: ran {len(steps)} commands\n"
    return Evidence(facts, text, outputs)
