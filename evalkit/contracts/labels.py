"""Judge calibration: human labels on traces, and the result of validating a judge against them.

Why two label shapes: a :class:`HumanLabel` is ground truth for one judge criterion (pass/fail per
trace and criterion, with a train/dev/test split) that a judge is measured against, while an
:class:`evalkit.contracts.Annotation` is an error-analysis note (pass/fail/defer per trace with free
text and failure modes, appended and relabelled) from which criteria are found in the first place.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evalkit.contracts.base import CamelContract, SchemaNamed
from evalkit.contracts.types import NonEmptyStr, Rate, RateConfidenceInterval
from evalkit.contracts.verdict import VerdictResult

HumanVerdict = Literal["pass", "fail", "defer"]
"""A reviewer's label; ``defer`` is a punt and counts as no ground truth."""

Split = Literal["train", "dev", "test"]
"""The data split a labeled trace belongs to."""

ValidationStatus = Literal["validated", "unvalidated"]
"""Whether a judge's verdicts can be trusted as they are."""


class ResolvedLabel(CamelContract):
    """One reviewer's label that a gold label resolved."""

    annotator: NonEmptyStr
    label: HumanVerdict
    at: str | None = None


class Adjudication(CamelContract):
    """Where a gold label came from: the reviewers agreed, or an adjudicator decided between them."""

    how: Literal["agreed", "adjudicated"]
    by: NonEmptyStr
    """The adjudicator; for ``agreed``, the reviewers' names joined with ``+``."""
    at: NonEmptyStr
    resolved: list[ResolvedLabel] = Field(min_length=2)


class OverriddenVerdict(CamelContract):
    """The judge verdict a reviewer's label overrides, as the reviewer saw it."""

    result: VerdictResult
    model: str | None = None
    prompt_digest: str | None = None


class HumanLabel(CamelContract, SchemaNamed):
    """One reviewer's label on one trace (optionally for one criterion).

    A gold label carries its ``adjudication`` (who resolved which labels, when); a label given over a judge's
    verdict it disagrees with carries the verdict it ``overrides``.
    """

    trace_id: NonEmptyStr
    label: HumanVerdict
    notes: str | None = None
    split: Split | None = None
    annotator: str | None = None
    labeled_at: str | None = None
    criterion_id: NonEmptyStr | None = None
    adjudication: Adjudication | None = None
    overrides: OverriddenVerdict | None = None


class CalibrationBinding(CamelContract):
    """What a validation result holds for: the judge (prompt, model, temperature) and the label set.

    A verdict file made under any other judge prompt, model or temperature, or a label set that
    changed (records or labelling policy), is not covered by the validation (see docs/calibration.md).
    """

    prompt_digest: NonEmptyStr
    judge_model: NonEmptyStr
    temperature: float | None
    label_set_digest: NonEmptyStr
    policy_version: NonEmptyStr
    digest: NonEmptyStr
    """``sha256:`` of the canonical JSON of the five fields above (``evalkit.calibration.calibration_digest``)."""


class ValidationResult(CamelContract, SchemaNamed):
    """A judge's agreement with human labels, and its pass rate corrected for that agreement.

    A rate is ``null`` where it is undefined (no labels of that class, or an invalid correction).
    """

    criterion_id: NonEmptyStr
    judge_model: NonEmptyStr
    status: ValidationStatus
    label_count: int = Field(ge=0, strict=True)
    tpr: Rate | None
    tnr: Rate | None
    observed_pass_rate: Rate | None
    corrected_rate: Rate | None
    correction_valid: bool = Field(strict=True)
    ci: RateConfidenceInterval | None = None
    note: str | None = None
    binding: CalibrationBinding | None = None
    """The judge and label set this result was measured on; None for results made before bindings."""


class LedgerEntry(CamelContract, SchemaNamed):
    """One measurement of a judge on the test split: a line of the append-only test-set ledger."""

    criterion_id: NonEmptyStr
    prompt_digest: NonEmptyStr
    judge_model: NonEmptyStr
    measured_at: NonEmptyStr
    label_count: int = Field(ge=0)
    test_set_digest: str
    tpr: float | None
    tnr: float | None
    status: ValidationStatus
    forced: bool = False
