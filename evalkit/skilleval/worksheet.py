"""``worksheet.html``: the human review of a stopped skill-eval run, one self-contained page, offline.

Per case the page shows what the agent was asked (prompt, expected observation), the deterministic
assertions with the predicate each one is graded by, and the candidate and baseline arms side by side:
their outcome and grade, every command they ran (argv, exit code, validation result, whether Git status
moved), the command outputs, the ``SKILL.md`` each arm ran (opened where the two differ; shown only while the
sandbox copy still matches the arm's sealed ``skill_sha256``) and the adapter's transcript. Below come the case's human review questions,
the comparison and a note. Answers autosave in the browser's localStorage under a key derived from the
stage's seal (two stages never share answers) and export as a :class:`SkillEvalAnswers` file for
``evalkit skill-eval resume``.

The comparison a reviewer may pick follows the resume rule: a complete pair is ``same``, ``better`` or
``worse``; a complete case without a required baseline is ``candidate-only``; a case missing required
evidence is ``inconclusive``. The last two are shown fixed, with the reason.

All stage and evidence text is rendered by Jinja's autoescaping; the page's own data (the storage key,
the cases and their allowed comparisons) travels as :func:`script_json`. Long outputs are cut at
:data:`SHOWN_CHARS` characters and the page says how many were left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from evalkit.contract_files import read_model
from evalkit.contracts.skilleval import (
    LOCAL_PATH,
    ReportCase,
    SkillEvalCase,
    SkillEvalPolicy,
    SkillEvalSeed,
    SkillEvalStage,
)
from evalkit.errors import InputError
from evalkit.io import atomic_write_text
from evalkit.io.script_json import script_json
from evalkit.report import render_page
from evalkit.skilleval.digest import DOMAINS, tree_digest
from evalkit.skilleval.facts import output_name
from evalkit.skilleval.grading import grade_case
from evalkit.skilleval.sandbox import SKILLS_FOLDER
from evalkit.skilleval.stage import ARMS, arm_dir, arm_evidence, read_stage, stage_inputs

STORAGE_PREFIX = "evalkit-skill-eval-worksheet:"
SHOWN_CHARS = 20_000
"""Characters of one output or transcript put on the page; a reviewer reads the rest in the raw evidence."""

PAIRED = ("same", "better", "worse")


class ArmEvidenceLike(Protocol):
    """What the worksheet reads of one arm's raw evidence (``evalkit.skilleval.ArmEvidence``)."""

    facts: list[dict[str, Any]]
    transcript: str
    outputs: dict[str, str]


@dataclass(frozen=True)
class Shown:
    """A text as the page shows it: at most :data:`SHOWN_CHARS` characters, and how many were cut."""

    text: str
    cut: int = 0

    @classmethod
    def of(cls, text: str) -> Shown:
        return cls(text[:SHOWN_CHARS], max(0, len(text) - SHOWN_CHARS))


@dataclass
class ArmView:
    """One arm of one case, ready to render: the receipt as recorded, and its facts with their outputs."""

    name: str
    result: dict[str, Any] | None
    receipt: list[dict[str, Any]] = field(default_factory=list)
    facts: list[dict[str, Any]] = field(default_factory=list)
    outputs: list[tuple[str, Shown]] = field(default_factory=list)
    transcript: Shown | None = None
    skill: Shown | None = None


def allowed_comparisons(case: ReportCase) -> tuple[list[str], str]:
    """The comparisons a reviewer may give a case, and why when there is only one.

    Args:
        case: the staged report case.

    Returns:
        ``(["same", "better", "worse"], "")`` for a complete pair, ``(["candidate-only"], reason)`` for a
        complete case without a required baseline, ``(["inconclusive"], reason)`` when evidence is missing.
    """
    if not case.complete:
        missing = [arm for arm in (ARMS if case.baseline_required else ARMS[:1])
                   if getattr(case, arm) is None or getattr(case, arm).outcome == "incomplete"]
        return ["inconclusive"], f"required evidence missing or incomplete: {', '.join(missing)} arm"
    if not case.baseline_required:
        return ["candidate-only"], "the skill is new in the candidate: there is no prior release to compare with"
    return list(PAIRED), ""


def worksheet_key(seal: str) -> str:
    """The localStorage key of a worksheet: derived from the stage seal."""
    return STORAGE_PREFIX + seal[:16]


def _arm_view(name: str, case: ReportCase, evidence: ArmEvidenceLike | None, skill: str | None) -> ArmView:
    result = getattr(case, name)
    view = ArmView(name, None if result is None else result.to_json_obj(),
                   skill=None if skill is None else Shown.of(skill))
    if evidence is not None:
        view.receipt = [dict(f) for f in evidence.facts]
        left = dict(evidence.outputs)
        for n, fact in enumerate(evidence.facts, start=1):
            row = dict(fact)
            row["streams"] = []
            for stream in ("stdout", "stderr"):
                key = _output_key(left, n - 1, fact["action"], stream)
                if key is not None:
                    text = left.pop(key)
                    if text:
                        row["streams"].append((stream, Shown.of(text)))
            view.facts.append(row)
        view.outputs = [(key, Shown.of(text)) for key, text in sorted(left.items())]
        view.transcript = Shown.of(evidence.transcript)
    return view


def _output_key(outputs: Mapping[str, str], index: int, action: str, stream: str) -> str | None:
    """The key of a command's kept output: ``<action>.<stream>``, or its file's relpath or name."""
    relpath = output_name(index, action, stream)
    for key in (f"{action}.{stream}", relpath, relpath.rsplit("/", 1)[-1]):
        if key in outputs:
            return key
    return None


def _oracle_rows(definition: SkillEvalCase | None, arms: Mapping[str, ArmView],
                 policy: SkillEvalPolicy | None) -> list[dict[str, Any]]:
    """One row per oracle assertion with each arm's verdict, graded by the runner's own predicates."""
    if definition is None:
        return []
    actions = {a.id: a for a in definition.scenario.actions}
    verdicts = {}
    for name, arm in arms.items():
        if policy is not None and arm.result is not None and arm.receipt:
            verdicts[name] = grade_case(definition, policy, arm.receipt).assertions
    rows = []
    for i, entry in enumerate(definition.oracle.assertions):
        grades = {}
        for name in arms:
            verdict = verdicts[name][i] if name in verdicts else None
            grades[name] = None if verdict is None else {"passed": verdict.passed, "reason": verdict.reason}
        rows.append({"assertion": entry.assertion, "action": entry.action, "predicate": entry.predicate,
                     "command": actions[entry.action].command, "grades": grades})
    return rows


def render_worksheet(stage: SkillEvalStage, evidence: Mapping[tuple[str, str], ArmEvidenceLike | None], *,
                     cases: Mapping[str, SkillEvalCase] | None = None, policy: SkillEvalPolicy | None = None,
                     skills: Mapping[tuple[str, str], str] | None = None,
                     seeds: Mapping[str, SkillEvalSeed] | None = None, title: str | None = None) -> str:
    """The HTML of a worksheet page.

    Args:
        stage: the verified stage (``evalkit.skilleval.read_stage``).
        evidence: raw evidence per ``(case_id, arm)``; an arm that is null in the stage has none.
        cases: case definitions by case id, for the prompt, expected observation and oracle; a case
            without one is shown with its questions and arms only, and the page says so.
        policy: the registry's policy; with ``cases``, each assertion is graded per arm from its facts.
        skills: the ``SKILL.md`` text each ``(case_id, arm)`` ran with, shown side by side (open when the
            two arms' texts differ, so the change under review is in front of the reviewer).
        seeds: fixture seeds by case id: a local case's planted decoy is shown with its bytes.
        title: shown in the page header (default: the session id).

    Raises:
        InputError: a case definition that disagrees with the stage (skill, storage mode, baseline).
    """
    cases = cases or {}
    skills = skills or {}
    seeds = seeds or {}
    views = []
    for entry, case in zip(stage.worksheet, stage.report.cases, strict=True):
        definition = cases.get(case.case_id)
        if definition is not None:
            for name in ("skill", "storage_mode", "baseline_required"):
                if getattr(definition, name) != getattr(case, name):
                    raise InputError(f"case {case.case_id!r} in the registry has {name} "
                                     f"{getattr(definition, name)!r} but the stage ran it with "
                                     f"{getattr(case, name)!r}; use the registry the stage was run from",
                                     path=f"cases.{case.case_id}.{name}")
        arms = {name: _arm_view(name, case, evidence.get((case.case_id, name)), skills.get((case.case_id, name)))
                for name in ARMS if name == "candidate" or case.baseline_required or case.baseline is not None}
        texts = {arm.skill.text for arm in arms.values() if arm.skill is not None}
        choices, why = allowed_comparisons(case)
        views.append({"case": case, "questions": entry.human_review_questions, "definition": definition,
                      "decoy": getattr(seeds.get(case.case_id), "decoy", None),
                      "arms": arms, "oracle": _oracle_rows(definition, arms, policy),
                      "choices": choices, "fixed_why": why, "skills_differ": len(texts) > 1})
    report = stage.report
    data = {
        "storageKey": worksheet_key(stage.seal),
        "session": report.session_id,
        "unsafe": LOCAL_PATH.pattern.removeprefix("(?i)"),
        "cases": [{"id": v["case"].case_id, "choices": v["choices"]} for v in views],
    }
    return render_page("evalkit.skilleval", "worksheet.html.j2", scripts=["worksheet.js.j2"],
                       styles=["worksheet.css.j2"], filters={"argv": _argv}, title=title or report.session_id,
                       report=report, views=views, missing_definitions=sum(1 for v in views if v["definition"] is None),
                       data=script_json(data))


def write_worksheet(stage_dir: str | Path, out: str | Path, *, title: str | None = None) -> Path:
    """Verify a stage, read its raw evidence and registry copy, write the worksheet atomically.

    Args:
        stage_dir: the folder ``evalkit skill-eval run --out`` wrote.
        out: the HTML file to write.
        title: page title (default: the session id).

    Returns:
        The path written.

    Raises:
        InputError: the stage fails its decode checks (a changed receipt, raw file, stage or seal).
    """
    folder = Path(stage_dir)
    stage = read_stage(folder)
    inputs = stage_inputs(folder)
    evidence, skills = {}, {}
    for case in stage.report.cases:
        for name in ARMS:
            if getattr(case, name) is None:
                continue
            evidence[(case.case_id, name)] = arm_evidence(folder, case.case_id, name)
            skills[(case.case_id, name)] = _installed_skill(folder, case.case_id, name, case.skill,
                                                            getattr(case, name).skill_sha256)
    seeds = {case_id: read_model(case_dir / "fixture" / "seed.json", SkillEvalSeed)
             for case_id, case_dir in inputs.case_dirs.items() if (case_dir / "fixture" / "seed.json").is_file()}
    path = Path(out)
    atomic_write_text(path, render_worksheet(stage, evidence, cases=inputs.cases, policy=inputs.policy,
                                             skills=skills, seeds=seeds, title=title))
    return path


def _installed_skill(stage_dir: Path, case_id: str, arm: str, skill: str, sealed_sha256: str) -> str:
    """The ``SKILL.md`` an arm ran, from the skill copy installed in its sandbox.

    The sandbox is outside the sealed raw tree, so the copy is shown only when its tree digest still
    equals the arm's sealed ``skill_sha256``; otherwise the page says it changed instead of showing it.
    """
    installed = arm_dir(stage_dir, case_id, arm) / "sandbox" / SKILLS_FOLDER / skill
    try:
        same = installed.is_dir() and tree_digest(installed, DOMAINS["skill"]) == sealed_sha256
    except InputError:
        same = False
    if not same:
        return (f"(not shown: the copy of {skill} in this arm's sandbox is missing or no longer matches the "
                f"skill_sha256 the stage sealed, {sealed_sha256[:12]})\n")
    return (installed / "SKILL.md").read_bytes().decode("utf-8", "replace")


def _argv(argv: Sequence[str]) -> str:
    """An argv shown as one line, each argument quoted when it holds a space or a quote (display only)."""
    return " ".join(a if a and not any(c in a for c in " \t\n'\"\\") else repr(a) for a in argv)
