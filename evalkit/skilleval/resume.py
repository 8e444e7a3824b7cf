"""Resume a verified stage with the human's answers into the release report.

Each staged case gets exactly one answer. The comparison must be the one the evidence allows: a
complete paired case (every required arm present and not ``incomplete``) is ``same``, ``better`` or
``worse``; a complete case without a required baseline is exactly ``candidate-only``; a case missing
required evidence is ``inconclusive``. The outcome follows the contract's precedence (``fail`` >
``pass`` > ``incomplete``, :func:`~evalkit.contracts.skilleval.base_outcome`); a waiver turns an
``incomplete`` outcome into ``waived`` only under the seed's rules, which the report contract checks
(base outcome incomplete, deterministic checks passed naming the six credential-free gates, the
waiver's affected cases and skills exactly the inconclusive ones, its arrays sorted and unique).
Every string of the report must pass the safe-summary rule (no NUL, no ``raw/``, no local path).

The report is rendered in the seed's field order (not sorted), two-space indent, final newline.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalkit.contracts.skilleval import (
    DeterministicChecks,
    ReportCase,
    SkillEvalAnswers,
    SkillEvalReport,
    SkillEvalStage,
    Waiver,
    base_outcome,
)
from evalkit.errors import InputError
from evalkit.io import atomic_write_text, read_json_strict
from evalkit.skilleval.stage import check_current_inputs, check_safe_strings, read_run_inputs, read_stage
from evalkit.skilleval.worksheet import allowed_comparisons  # the rule lives with the reviewer's choices


def render_report(report: dict[str, Any]) -> str:
    """The report's exact text: the seed's field order, two-space indent, UTF-8, final newline."""
    ordered = SkillEvalReport.model_validate(report).model_dump(mode="json")
    return json.dumps(ordered, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def build_report(stage: SkillEvalStage, answers: SkillEvalAnswers, waiver: Waiver | None, *,
                 answers_file: str | None = None, waiver_file: str | None = None) -> dict[str, Any]:
    """The final report of a verified stage, as a JSON-ready dict in the seed's field order.

    Args:
        stage: the decoded stage (:func:`~evalkit.skilleval.stage.read_stage`).
        answers: the human's answers, one per staged case.
        waiver: a maintainer's waiver, or None.
        answers_file: the answers' file name, for errors.
        waiver_file: the waiver's file name, for errors.

    Raises:
        InputError: an answer is missing, extra or not allowed by the evidence; the waiver breaks a
            rule; a string is unsafe. Each names the file and member.
    """
    report = stage.report.to_json_obj()
    staged = {case.case_id: (i, case) for i, case in enumerate(stage.report.cases)}
    given = {answer.case_id: j for j, answer in enumerate(answers.cases)}
    missing = [cid for cid in staged if cid not in given]
    if missing:
        raise InputError(f"no answer for staged case(s) {', '.join(missing)}; answer every case", file=answers_file,
                         path="cases")
    for j, answer in enumerate(answers.cases):
        if answer.case_id not in staged:
            raise InputError(f"{answer.case_id!r} is not a staged case", file=answers_file, path=f"cases[{j}].case_id")
        i, case = staged[answer.case_id]
        allowed, why = allowed_comparisons(case)
        if answer.comparison not in allowed:
            reason = f" ({why})" if why else ""
            raise InputError(f"{answer.case_id}: the evidence allows only {' or '.join(map(repr, allowed))}{reason}, "
                             f"got {answer.comparison!r}", file=answers_file, path=f"cases[{j}].comparison")
        report["cases"][i]["comparison"] = answer.comparison
        report["cases"][i]["human_review"] = answer.human_review
    report["human_review"] = answers.human_review
    try:
        check_safe_strings(report, "")
    except ValueError as exc:
        raise InputError(f"unsafe string: {exc}", file=answers_file) from None
    checks = DeterministicChecks.model_validate(report["deterministic_checks"])
    cases = [ReportCase.model_validate(case) for case in report["cases"]]
    uncovered = stage.report.uncovered_skills
    report["outcome"], report["waiver"] = base_outcome(checks, cases, uncovered)[0], None
    if waiver is None:
        return _validated(report, answers_file).model_dump(mode="json")
    report["outcome"], report["waiver"] = "waived", waiver.to_json_obj()
    try:
        check_safe_strings(report["waiver"], "waiver")
    except ValueError as exc:
        raise InputError(f"unsafe string: {exc}", file=waiver_file) from None
    return _validated(report, waiver_file).model_dump(mode="json")


def _validated(report: dict[str, Any], file: str | None) -> SkillEvalReport:
    try:
        return SkillEvalReport.model_validate(report)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or None
        raise InputError(error["msg"].removeprefix("Value error, "), file=file, path=where) from None


def _read(model: Any, path: str | Path) -> Any:
    try:
        return model.model_validate(read_json_strict(path))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or None
        raise InputError(error["msg"].removeprefix("Value error, "), file=str(path), path=where) from None


def resume(stage_dir: str | Path, answers_path: str | Path, out: str | Path,
           waiver_path: str | Path | None = None, *, current: dict[str, str | Path] | None = None) -> SkillEvalReport:
    """Verify a stage, apply the human's answers (and a waiver), write the report to ``out``.

    Args:
        stage_dir: the stage folder.
        answers_path: the answers file the worksheet exported.
        out: where to write ``report.json``.
        waiver_path: a maintainer's waiver file, or None.
        current: folders as they are now (``registry``, ``candidate``, ``baseline``), each by default the
            one the run used (``run-inputs.json``); all three are digested again and must equal the stage's.

    Returns:
        The report written.

    Raises:
        InputError: the stage is refused (why is said), or the answers or waiver break a rule.
    """
    stage = read_stage(stage_dir)
    snapshot = {**read_run_inputs(Path(stage_dir)), **{name: Path(folder) for name, folder in (current or {}).items()}}
    check_current_inputs(stage, **snapshot)
    answers = _read(SkillEvalAnswers, answers_path)
    waiver = _read(Waiver, waiver_path) if waiver_path is not None else None
    report = build_report(stage, answers, waiver, answers_file=str(answers_path),
                          waiver_file=None if waiver_path is None else str(waiver_path))
    text = render_report(report)
    atomic_write_text(out, text)
    return SkillEvalReport.model_validate(report)


def outcome_line(report: SkillEvalReport) -> str:
    """The report in one line: its outcome and how many cases got each comparison."""
    counts = Counter(case.comparison for case in report.cases)
    shown = ", ".join(f"{n} {name}" for name, n in sorted(counts.items()))
    return f"outcome {report.outcome} ({len(report.cases)} cases: {shown})"


EXIT_CODES = {"pass": 0, "waived": 0, "fail": 1, "incomplete": 3}
"""Exit status of ``resume`` and ``report-page`` by outcome, so a pipeline can stop a release without
reading JSON; :data:`EXIT_NOT_RELEASABLE` when the evidence passes but the provenance was not verified."""

EXIT_NOT_RELEASABLE = 4


def exit_code(report: SkillEvalReport) -> int:
    """0 pass or waived (and releasable), 1 fail, 3 incomplete, 4 passed but not releasable (--allow-dirty)."""
    code = EXIT_CODES[report.outcome]
    return EXIT_NOT_RELEASABLE if code == 0 and not report.releasable else code
