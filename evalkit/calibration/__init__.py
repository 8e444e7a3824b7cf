"""Judge calibration: label splits, TPR/TNR, the corrected pass rate and its interval, label planning.

Every name loads on first use (:func:`evalkit.facade.load_on_first_use`): the command line reads
:mod:`evalkit.calibration.defaults` and :mod:`evalkit.calibration.status` for its options, and must not pay
for numpy and pydantic to do so. ``from evalkit.calibration import corrected_pass_rate`` works as for any
facade.
"""

from typing import TYPE_CHECKING

from evalkit.facade import load_on_first_use

if TYPE_CHECKING:
    from evalkit.calibration.agreement import Kappa, annotator_kappa, cohens_kappa
    from evalkit.calibration.applies import Applicability, calibration_applies
    from evalkit.calibration.binary import as_binary
    from evalkit.calibration.correction import (
        CorrectedRate,
        adjusted_wald_interval,
        correct_observed_rate,
        corrected_pass_rate,
        rogan_gladen,
    )
    from evalkit.calibration.criteria import (
        Calibrations,
        calibrate_criteria,
        criteria_of,
        label_budget,
        observed_rate,
    )
    from evalkit.calibration.criterion import (
        CriterionCalibration,
        calibrate_criterion,
        dev_history,
        sensitivity,
    )
    from evalkit.calibration.defaults import (
        DEFAULT_ITERATIONS,
        DEFAULT_METHOD,
        DEFAULT_POLICY_VERSION,
        METHODS,
    )
    from evalkit.calibration.expiry import (
        BINDING_PARTS,
        CalibrationCheck,
        JudgeIdentity,
        bind_validation,
        calibration_digest,
        check_calibration,
        judge_of_run,
        label_set_digest,
        make_binding,
    )
    from evalkit.calibration.files import read_labels, read_verdicts
    from evalkit.calibration.imports import (
        LABEL_VALUES,
        VERDICT_VALUES,
        Appended,
        LabelColumns,
        VerdictColumns,
        append_records,
        labels_from_table,
        parse_value_map,
        verdicts_from_table,
    )
    from evalkit.calibration.judge_validation import validate_judge
    from evalkit.calibration.ledger import LedgerEntry, TestLedger
    from evalkit.calibration.metrics import Confusion, confusion, wilson_interval
    from evalkit.calibration.pairing import Pairing, pair_labels, unlabeled_verdicts
    from evalkit.calibration.planning import LabelPlan, expected_width, plan_labels
    from evalkit.calibration.splits import DEFAULT_FRACTIONS, LabelSplits, split_labels
    from evalkit.calibration.status import (
        GATES,
        MIN_LABELS,
        MIN_PER_CLASS,
        MIN_RATE,
        judge_shortfalls,
        judge_status,
    )
    from evalkit.calibration.tables import Table, read_table
    from evalkit.errors import TestSetAlreadyMeasured

__all__ = [
    "DEFAULT_POLICY_VERSION",
    "Applicability",
    "calibration_applies",
    "BINDING_PARTS",
    "GATES",
    "CalibrationCheck",
    "JudgeIdentity",
    "bind_validation",
    "calibration_digest",
    "check_calibration",
    "judge_of_run",
    "label_set_digest",
    "make_binding",
    "DEFAULT_FRACTIONS",
    "DEFAULT_ITERATIONS",
    "DEFAULT_METHOD",
    "LABEL_VALUES",
    "VERDICT_VALUES",
    "Appended",
    "METHODS",
    "MIN_LABELS",
    "MIN_PER_CLASS",
    "MIN_RATE",
    "Confusion",
    "CriterionCalibration",
    "Calibrations",
    "CorrectedRate",
    "Kappa",
    "LabelColumns",
    "LabelPlan",
    "LabelSplits",
    "LedgerEntry",
    "Pairing",
    "TestLedger",
    "Table",
    "TestSetAlreadyMeasured",
    "VerdictColumns",
    "adjusted_wald_interval",
    "annotator_kappa",
    "append_records",
    "as_binary",
    "calibrate_criteria",
    "calibrate_criterion",
    "cohens_kappa",
    "dev_history",
    "confusion",
    "correct_observed_rate",
    "criteria_of",
    "corrected_pass_rate",
    "expected_width",
    "judge_shortfalls",
    "judge_status",
    "label_budget",
    "labels_from_table",
    "observed_rate",
    "pair_labels",
    "parse_value_map",
    "plan_labels",
    "read_labels",
    "read_table",
    "read_verdicts",
    "rogan_gladen",
    "sensitivity",
    "split_labels",
    "unlabeled_verdicts",
    "validate_judge",
    "verdicts_from_table",
    "wilson_interval",
]

__getattr__, __dir__ = load_on_first_use(__name__, __all__)
