"""Growing a subject's suite from the command line's arguments: which file, which cases, merged and written.

``evalkit dataset merge|derive|generate|interview`` each call one function here (or in
:mod:`evalkit.suite.generate`, :mod:`evalkit.suite.interview`), so the policy (where the suite is, what a
derived case keeps, what is dropped and why) is the same from the CLI, a notebook and a test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.contracts.dataset import Case, Dataset
from evalkit.errors import InputError
from evalkit.suite.derive import Derived, Finding, derive_cases, findings_from_review, findings_from_verdicts
from evalkit.suite.files import read_dataset, write_dataset
from evalkit.suite.merge import MergeResult, merge


@dataclass(frozen=True)
class SuiteOf:
    """Where a suite is: its file, and the subject that names it (None when given the suite file itself)."""

    path: Path
    subject: object | None = None
    """The :class:`evalkit.subjects.ResolvedSubject`, when a subject file was given."""


def suite_of(subject_or_dataset: str | Path, *, missing_ok: bool = False) -> SuiteOf:
    """The suite a subject file names (``dataset:``), or the argument itself when it is a suite file.

    Args:
        subject_or_dataset: a subject file or a suite file.
        missing_ok: a subject without ``dataset:`` gives a :class:`SuiteOf` whose path is the subject's
            folder (the caller says where to write) instead of an error.

    Raises:
        InputError: neither a subject nor a suite file, or a subject that names no dataset.
    """
    from evalkit.io.documents import read_records

    path = Path(subject_or_dataset)
    records = read_records(path)
    first = records[0].value if records else {}
    if isinstance(first, dict) and "cases" in first:
        return SuiteOf(path)
    if isinstance(first, dict) and "notebooks" in first:
        from evalkit.subjects import load_subject

        resolved = load_subject(path)
        if resolved.subject.dataset is None:
            if missing_ok:
                return SuiteOf(resolved.base, resolved)
            raise InputError("the subject names no dataset (add dataset: FILE)", file=str(path), path="dataset")
        return SuiteOf(resolved.base / resolved.subject.dataset, resolved)
    raise InputError("neither a subject file nor a suite file (dataset)", file=str(path))


def read_offered(path: str | Path) -> list[Case]:
    """Cases offered for a merge: a suite file's cases, or case records (JSONL, or a JSON list)."""
    from evalkit.contract_files import read_model, read_models
    from evalkit.io.documents import read_records

    records = read_records(Path(path))
    if len(records) == 1 and isinstance(records[0].value, dict) and "cases" in records[0].value:
        return list(read_model(path, Dataset).cases)
    return read_models(path, Case)


def merge_into(suite: str | Path, offered: Sequence[Case]) -> MergeResult:
    """Merge ``offered`` into the suite file and write it when anything was added (atomically, append-only).

    Raises:
        InputError: an offered case whose id is not derived from its content; AppendOnlyViolation.
    """
    dataset = read_dataset(suite)
    result = merge(dataset, offered)
    if result.added:
        write_dataset(suite, result.dataset)
    return result


@dataclass(frozen=True)
class DeriveOutcome:
    """What ``dataset derive`` did: the cases derived, those repeating an earlier trace's prompt and outcome
    (one case each), the traces left out and why, and the merge."""

    derived: Derived
    repeats: int
    merged: MergeResult
    suite: Path
    reasons: dict[str, int] = field(default_factory=dict)
    """Why traces were left out -> how many."""


def findings_from_files(*, labels: str | Path | None = None, review: str | Path | None = None,
                        verdicts: str | Path | None = None) -> dict[str, str | Finding]:
    """Per trace, its outcome: from human labels, the review page's export (or annotation store), or judge
    verdicts (exactly one of them).

    Raises:
        InputError: none or more than one given; a file that is not what it should be (named, with its line).
    """
    given = [n for n, v in (("--labels", labels), ("--from-review", review), ("--from-verdicts", verdicts)) if v]
    if len(given) != 1:
        raise InputError(f"give exactly one source of outcomes (--labels, --from-review or --from-verdicts); "
                         f"got {', '.join(given) or 'none'}")
    from evalkit.contract_files import read_models

    if labels:
        from evalkit.contracts.labels import HumanLabel
        from evalkit.suite.derive import outcomes_from_labels

        return dict(outcomes_from_labels(read_models(labels, HumanLabel)))
    if verdicts:
        from evalkit.contracts.verdict import CriterionVerdict

        return dict(findings_from_verdicts(read_models(verdicts, CriterionVerdict)))
    return dict(findings_from_review(read_review_annotations(review)))


def read_review_annotations(path: str | Path) -> list:
    """The annotations of a review export (the page's Export button) or of an annotation store (JSONL).

    Raises:
        InputError: the file is neither, or an annotation in it is invalid (every problem located).
    """
    from evalkit.analysis import read_review_export, read_store
    from evalkit.io.documents import read_records

    records = read_records(Path(path))
    if len(records) == 1 and isinstance(records[0].value, dict) and "annotations" in records[0].value:
        export, problems = read_review_export(path)
        if export is None:
            raise problems[0]
        return list(export.annotations)
    return list(read_store(path).annotations)


def derive_into_suite(subject_or_dataset: str | Path, traces: str | Path | None = None, *,
                      labels: str | Path | None = None, review: str | Path | None = None,
                      verdicts: str | Path | None = None, only: Sequence[str] | None = None) -> DeriveOutcome:
    """``evalkit dataset derive``: one derived case per past trace with an outcome (the first trace of each
    prompt and outcome), merged into the suite.

    Args:
        subject_or_dataset: the subject (its suite) or the suite file.
        traces: the past traces; default the subject's ``traces``.
        labels, review, verdicts: where the outcomes come from (exactly one; see :func:`findings_from_files`).
        only: keep only these outcomes (``["fail"]``: the regression set).

    Raises:
        InputError: no traces named, or a bad source of outcomes.
    """
    from evalkit.traces import iter_traces

    where = suite_of(subject_or_dataset)
    if traces is None:
        resolved = where.subject
        if resolved is None or resolved.subject.traces is None:  # type: ignore[attr-defined]
            raise InputError("name the traces to derive cases from (TRACES), or give a subject that names traces")
        traces = resolved.resolve(resolved.subject.traces)  # type: ignore[attr-defined]
    findings = findings_from_files(labels=labels, review=review, verdicts=verdicts)
    derived = derive_cases(iter_traces(traces), findings, only=only)
    seen: set[str] = set()
    unique = [c for c in derived.cases if not (c.id in seen or seen.add(c.id))]  # first trace per prompt
    reasons: dict[str, int] = {}
    for why in derived.skipped.values():
        reasons[why] = reasons.get(why, 0) + 1
    merged = merge_into(where.path, unique)
    return DeriveOutcome(derived, len(derived.cases) - len(unique), merged, where.path, dict(sorted(reasons.items())))
