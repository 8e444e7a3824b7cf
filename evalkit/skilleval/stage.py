"""The sealed stage: the stop between running the arms and the human's review, durable on disk.

A stage folder holds::

    stage.json                         canonical JSON (sorted keys, indent 2, LF), sealed, no local paths
    registry/                          a verbatim copy of the registry the run used (policy, cases, fixtures)
    raw/<case_id>/<arm>/               one arm's raw evidence: facts.json, commands/, log.txt,
                                       transcript.txt, manifest.json, and the sandbox/ it ran in

``stage.json`` names no path: every folder is rebuilt from the stage folder, the case id and the arm.
An arm's ``raw_sha256`` digests its whole raw folder (``raw`` domain), the ``sandbox/`` it ran in
included, but for Git's stat cache ``sandbox/.git/index`` (inode numbers and times that differ on every
run; the staged state it records is in the facts' Git status digests); ``manifest.json`` lists each raw
file's sha256 so a changed, added or removed file is named.

Beside it, ``run-inputs.json`` (producer-local, not sealed, never committed) names the folders the run
used, so ``resume`` can digest them again without being told where they are.

:func:`read_stage` decodes a stage only when every check holds: strict framing, bytes identical to
their canonical re-rendering, the seal, the contract's rules, the safe-summary rule on every string,
the bindings (the registry copy against ``fixtures_sha256`` and each case's ``fixture_sha256``, the
staged cases against the copied ``case.json`` files, one skill digest per skill and arm), every
non-null arm's raw tree re-digested, its receipt re-checked and its grade re-derived from the facts.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalkit.contracts.skilleval import (
    SkillEvalCase,
    SkillEvalPolicy,
    SkillEvalStage,
    check_summary,
    stage_seal,
)
from evalkit.errors import InputError
from evalkit.io import atomic_write_text, canonical_dumps, loads_strict, read_json_strict
from evalkit.io.outputs import SEALED_STAGE_FILE
from evalkit.io.regular import open_regular
from evalkit.skilleval.digest import DOMAINS, file_sha256, tree_digest, tree_files
from evalkit.skilleval.facts import RECEIPT, check_receipt, output_name
from evalkit.skilleval.grading import grade_case

STAGE_FILE = SEALED_STAGE_FILE  # every command's output guard knows a sealed stage by it
RAW = "raw"
REGISTRY_COPY = "registry"
MANIFEST = "manifest.json"
SANDBOX = "sandbox"
ARMS = ("candidate", "baseline")


def arm_dir(stage_dir: Path, case_id: str, arm: str) -> Path:
    """Where one arm's raw evidence lives in a stage folder."""
    return Path(stage_dir) / RAW / case_id / arm


RUN_INPUTS = "run-inputs.json"
_SANDBOX_INDEX = f"{SANDBOX}/.git/index"


def _raw_exclude(rel: str) -> bool:
    return rel == _SANDBOX_INDEX


def write_run_inputs(stage_dir: Path, registry: Path, candidate: Path, baseline: Path) -> None:
    """Record where the run's inputs are (absolute paths), for :func:`read_run_inputs` at resume."""
    inputs = {"registry": registry, "candidate": candidate, "baseline": baseline}
    atomic_write_text(Path(stage_dir) / RUN_INPUTS,
                      canonical_dumps({name: str(Path(folder).resolve()) for name, folder in inputs.items()}))


def read_run_inputs(stage_dir: Path) -> dict[str, Path]:
    """The folders the run used (:func:`write_run_inputs`); empty when the stage has no such record."""
    path = Path(stage_dir) / RUN_INPUTS
    if not path.is_file():
        return {}
    value = read_json_strict(path)
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise InputError("must be an object of folder paths (registry, candidate, baseline)", file=str(path))
    return {name: Path(folder) for name, folder in value.items() if name in ("registry", "candidate", "baseline")}


def seal_raw(folder: Path) -> str:
    """Write the arm's ``manifest.json`` and return the digest of its raw evidence (sandbox included)."""
    manifest = {rel: file_sha256(path) for rel, path in tree_files(folder, _raw_exclude) if rel != MANIFEST}
    atomic_write_text(folder / MANIFEST, canonical_dumps(manifest))
    return tree_digest(folder, DOMAINS["raw"], _raw_exclude)


def check_raw(folder: Path, expected: str, at: str) -> None:
    """Refuse unless the raw tree still digests to ``expected``; the message names what changed.

    Raises:
        InputError: the folder is missing or a file in it was changed, added or removed.
    """
    shown = "/".join(folder.parts[-3:])
    if not folder.is_dir():
        raise InputError(f"{at}: the raw evidence folder {shown} is missing; refusing to resume", file=str(folder))
    if tree_digest(folder, DOMAINS["raw"], _raw_exclude) == expected:
        return
    try:
        listed = read_json_strict(folder / MANIFEST)
    except InputError:
        listed = None
    if not isinstance(listed, dict):
        what = f"{MANIFEST} is missing or unreadable"
    else:
        now = {rel: file_sha256(path) for rel, path in tree_files(folder, _raw_exclude) if rel != MANIFEST}
        parts = [f"{rel} changed" for rel in sorted(now) if rel in listed and listed[rel] != now[rel]]
        parts += [f"{rel} added" for rel in sorted(now) if rel not in listed]
        parts += [f"{rel} removed" for rel in sorted(listed) if rel not in now]
        what = ", ".join(parts) or f"{MANIFEST} changed"
    raise InputError(f"{at}: raw evidence in {shown} changed since the stage was sealed ({what}); "
                     "refusing to resume", file=str(folder))


def copy_registry(registry_root: Path, stage_dir: Path) -> None:
    """Copy the registry verbatim into the stage (symlinks and special files refused by the listing)."""
    target = Path(stage_dir) / REGISTRY_COPY
    for rel, source in tree_files(registry_root):
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest, follow_symlinks=False)


def check_safe_strings(value: Any, at: str) -> None:
    """The safe-summary rule on every string of a JSON value (keys included).

    Raises:
        ValueError: ``"<path>: <problem>"`` for the first unsafe string.
    """
    if isinstance(value, str):
        check_summary(value, at)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_summary(key, f"{at}.{key}" if at else key)
            check_safe_strings(item, f"{at}.{key}" if at else key)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_safe_strings(item, f"{at}[{i}]")


def render_stage(stage: dict[str, Any]) -> str:
    """The exact text of ``stage.json``."""
    return canonical_dumps(stage)


def write_stage(stage_dir: Path, report: dict[str, Any], worksheet: list[dict[str, Any]]) -> SkillEvalStage:
    """Seal a draft report and its worksheet, check the result, write ``stage.json`` atomically.

    Raises:
        InputError: the stage breaks a contract rule or holds an unsafe string (named).
    """
    body = {"schema_version": 1, "report": report, "worksheet": worksheet}
    stage = {**body, "seal": stage_seal(body)}
    path = Path(stage_dir) / STAGE_FILE
    try:
        check_safe_strings(stage, "")
        model = SkillEvalStage.model_validate(stage)
    except ValidationError as exc:
        raise InputError(f"the stage breaks its contract: {_first(exc)}", file=str(path)) from None
    except ValueError as exc:
        raise InputError(f"the stage would hold an unsafe string: {exc}", file=str(path)) from None
    atomic_write_text(path, render_stage(stage))
    return model


@dataclass(frozen=True)
class StageInputs:
    """The registry copy kept in a stage: its policy and each case by id."""

    policy: SkillEvalPolicy
    cases: dict[str, SkillEvalCase]
    case_dirs: dict[str, Path]


def stage_inputs(stage_dir: Path) -> StageInputs:
    """Read the stage's registry copy (the policy and every ``case.json``), strictly.

    Raises:
        InputError: a file is missing or breaks its contract (named).
    """
    root = Path(stage_dir) / REGISTRY_COPY
    policy = _model(SkillEvalPolicy, root / "policy.json")
    cases: dict[str, SkillEvalCase] = {}
    dirs: dict[str, Path] = {}
    for rel, path in tree_files(root / "cases") if (root / "cases").is_dir() else []:
        if rel.endswith("/case.json") and rel.count("/") == 2:
            case = _model(SkillEvalCase, path)
            cases[case.case_id] = case
            dirs[case.case_id] = path.parent
    return StageInputs(policy, cases, dirs)


def read_stage(stage_dir: str | Path) -> SkillEvalStage:
    """Decode a stage folder, refusing it (with the reason) unless every check in the module doc holds.

    Args:
        stage_dir: the folder ``evalkit skill-eval run --out`` wrote.

    Returns:
        The verified stage.

    Raises:
        InputError: naming the file and what failed.
    """
    folder = Path(stage_dir)
    path = folder / STAGE_FILE
    where = str(path)
    with open_regular(path) as fh:
        data = fh.read()
    value = loads_strict(data, file=where)
    if render_stage(value).encode("utf-8") != data:
        raise InputError("not the canonical rendering of its content (sorted keys, two-space indent, final "
                         "newline): the stage was edited; refusing to resume", file=where)
    if not isinstance(value, dict) or set(value) != {"schema_version", "report", "worksheet", "seal"}:
        raise InputError("must be an object with exactly schema_version, report, worksheet and seal", file=where)
    if value["seal"] != stage_seal(value):
        raise InputError("the seal does not match the staged report and worksheet: the stage was modified after "
                         "it was sealed; refusing to resume", file=where, path="seal")
    try:
        stage = SkillEvalStage.model_validate(value)
        check_safe_strings(value, "")
    except ValidationError as exc:
        raise InputError(f"the stage breaks its contract: {_first(exc)}", file=where) from None
    except ValueError as exc:
        raise InputError(f"unsafe string: {exc}", file=where) from None
    _check_bindings(folder, stage)
    return stage


def _check_raw_holds_only_arms(raw: Path, case_ids: list[str]) -> None:
    """Refuse anything in ``raw/`` but the cases' arm folders: each arm's tree is sealed, the folders around
    them are not, so a file put beside them would pass every arm's check and be taken for evidence."""
    if not raw.is_dir():
        return
    extra = []
    for entry in sorted(raw.iterdir()):
        if entry.name not in case_ids or entry.is_symlink() or not entry.is_dir():
            extra.append(f"{RAW}/{entry.name}")
            continue
        extra += [f"{RAW}/{entry.name}/{arm.name}" for arm in sorted(entry.iterdir())
                  if arm.name not in ARMS or arm.is_symlink() or not arm.is_dir()]
    if extra:
        raise InputError(f"{', '.join(extra)}: not a case's arm folder, and not in the stage the run sealed; "
                         "refusing to resume (remove it, or run again into a new stage folder)", file=str(raw))


def _check_bindings(folder: Path, stage: SkillEvalStage) -> None:
    report = stage.report
    copy = folder / REGISTRY_COPY
    if not copy.is_dir():
        raise InputError(f"the registry copy {REGISTRY_COPY}/ is missing; refusing to resume", file=str(copy))
    if tree_digest(copy, DOMAINS["fixtures"]) != report.fixtures_sha256:
        raise InputError("the registry copy no longer matches report.fixtures_sha256: a case, fixture or the "
                         "policy was changed after the run; refusing to resume", file=str(copy))
    inputs = stage_inputs(folder)
    if sorted(inputs.cases) != sorted(c.case_id for c in report.cases):
        raise InputError(f"the staged cases {sorted(c.case_id for c in report.cases)} are not the registry copy's "
                         f"{sorted(inputs.cases)}", file=str(copy))
    _check_raw_holds_only_arms(folder / RAW, [c.case_id for c in report.cases])
    skill_digests: dict[tuple[str, str], str] = {}
    for i, staged in enumerate(report.cases):
        at = f"report.cases[{i}]"
        case = inputs.cases[staged.case_id]
        if tree_digest(inputs.case_dirs[staged.case_id], DOMAINS["case"]) != staged.fixture_sha256:
            raise InputError(f"{at}.fixture_sha256: does not match the copied case folder", file=str(copy))
        for name in ("skill", "storage_mode", "baseline_required"):
            if getattr(case, name) != getattr(staged, name):
                raise InputError(f"{at}.{name}: does not match the copied case.json", file=str(copy))
        if stage.worksheet[i].human_review_questions != case.human_review_questions:
            raise InputError(f"worksheet[{i}].human_review_questions: not the copied case.json's", file=str(copy))
        for arm in ARMS:
            run = getattr(staged, arm)
            if run is None:
                continue
            known = skill_digests.setdefault((staged.skill, arm), run.skill_sha256)
            if known != run.skill_sha256:
                raise InputError(f"{at}.{arm}.skill_sha256: differs from another {arm} arm of skill "
                                 f"{staged.skill!r}", file=str(folder / STAGE_FILE))
            raw = arm_dir(folder, staged.case_id, arm)
            check_raw(raw, run.raw_sha256, f"{at}.{arm}")
            facts = check_receipt(raw, None, case, inputs.policy)
            grade = grade_case(case, inputs.policy, facts).grade
            if grade != run.deterministic_grade:
                raise InputError(f"{at}.{arm}.deterministic_grade: staged {run.deterministic_grade!r} but the "
                                 f"recorded facts give {grade!r}; refusing to resume", file=str(folder / STAGE_FILE))


def check_current_inputs(stage: SkillEvalStage, *, registry: Path | None = None, candidate: Path | None = None,
                         baseline: Path | None = None) -> None:
    """Refuse a stage whose inputs are no longer the ones it ran (the caller's fresh snapshot).

    Every folder is digested again and compared with the stage's binding: the registry with
    ``fixtures_sha256``, the skills folders with ``candidate``/``baseline.skills_sha256``; each must be given.

    Raises:
        InputError: naming the folder whose bytes differ from the staged run's.
    """
    report = stage.report
    for what, option, folder, domain, staged in (
            ("registry", "--registry", registry, "fixtures", report.fixtures_sha256),
            ("candidate skills", "--candidate", candidate, "skill-set", report.candidate.skills_sha256),
            ("baseline skills", "--baseline", baseline, "skill-set", report.baseline.skills_sha256)):
        if folder is None:
            raise InputError(f"the {what} the run used are not known: give {option} DIR so they can be digested "
                             "again (resume refuses inputs that changed since the run)")
        if not folder.is_dir():
            raise InputError(f"the {what} the run used are gone; give {option} DIR (the same bytes)", file=str(folder))
        if tree_digest(folder, DOMAINS[domain]) != staged:
            raise InputError(f"the {what} changed since the run (their digest is not the staged one); the report "
                             "would not describe them: run again into a new stage", file=str(folder))


@dataclass(frozen=True)
class ArmEvidence:
    """One arm's raw evidence for a reviewer: facts, the transcript, each command's output by
    ``"<action>.stdout"`` / ``"<action>.stderr"`` (UTF-8, undecodable bytes replaced)."""

    facts: list[dict[str, Any]]
    transcript: str
    outputs: dict[str, str]


def arm_evidence(stage_dir: str | Path, case_id: str, arm: str) -> ArmEvidence:
    """Read one arm's raw evidence (call :func:`read_stage` first to verify the stage).

    Raises:
        InputError: the arm has no raw evidence or no receipt.
    """
    folder = arm_dir(Path(stage_dir), case_id, arm)
    receipt = folder / RECEIPT
    if not receipt.is_file():
        raise InputError(f"no receipt for the {arm} arm of {case_id}", file=str(receipt))
    facts = read_json_strict(receipt)
    outputs = {}
    for i, fact in enumerate(facts):
        for stream in ("stdout", "stderr"):
            kept = folder / output_name(i, fact["action"], stream)
            outputs[f"{fact['action']}.{stream}"] = kept.read_bytes().decode("utf-8", "replace") if kept.is_file() else ""
    transcript = folder / "transcript.txt"
    text = transcript.read_bytes().decode("utf-8", "replace") if transcript.is_file() else ""
    return ArmEvidence(facts, text, outputs)


def _model(cls: Any, path: Path) -> Any:
    try:
        return cls.model_validate(read_json_strict(path))
    except ValidationError as exc:
        raise InputError(f"breaks its contract: {_first(exc)}", file=str(path)) from None


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message

