"""Judge calibration: label splits, TPR/TNR, the corrected pass rate and its interval, label planning."""

from evalkit.calibration.agreement import Kappa, annotator_kappa, cohens_kappa
from evalkit.calibration.binary import as_binary
from evalkit.calibration.correction import (
    DEFAULT_METHOD,
    METHODS,
    CorrectedRate,
    adjusted_wald_interval,
    corrected_pass_rate,
    rogan_gladen,
)
from evalkit.calibration.files import read_labels, read_verdicts
from evalkit.calibration.ledger import LedgerEntry, TestLedger, TestSetAlreadyMeasured
from evalkit.calibration.metrics import Confusion, confusion, wilson_interval
from evalkit.calibration.pairing import Pairing, pair_labels, unlabeled_verdicts
from evalkit.calibration.planning import LabelPlan, expected_width, plan_labels
from evalkit.calibration.report import CriterionCalibration, calibrate_criterion, dev_history, sensitivity
from evalkit.calibration.splits import DEFAULT_FRACTIONS, LabelSplits, split_labels
from evalkit.calibration.validation import MIN_LABELS, MIN_RATE, judge_shortfalls, validate_judge

__all__ = [
    "DEFAULT_FRACTIONS",
    "DEFAULT_METHOD",
    "METHODS",
    "MIN_LABELS",
    "MIN_RATE",
    "Confusion",
    "CriterionCalibration",
    "CorrectedRate",
    "Kappa",
    "LabelPlan",
    "LabelSplits",
    "LedgerEntry",
    "Pairing",
    "TestLedger",
    "TestSetAlreadyMeasured",
    "adjusted_wald_interval",
    "annotator_kappa",
    "as_binary",
    "calibrate_criterion",
    "cohens_kappa",
    "dev_history",
    "confusion",
    "corrected_pass_rate",
    "expected_width",
    "judge_shortfalls",
    "pair_labels",
    "plan_labels",
    "read_labels",
    "read_verdicts",
    "rogan_gladen",
    "sensitivity",
    "split_labels",
    "unlabeled_verdicts",
    "validate_judge",
    "wilson_interval",
]
