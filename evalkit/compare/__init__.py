"""Comparing two runs honestly: paired flips, McNemar's exact test, paired bootstrap, a CI gate, judge noise."""

from evalkit.compare.comparison import CriterionComparison, Flip, RunComparison, compare_runs
from evalkit.compare.corrected import CorrectedDifference, corrected_difference
from evalkit.compare.files import compare_files, comparison_json
from evalkit.compare.gate import DEFAULT_ALPHA, DEFAULT_MAX_DROP, GateCriterion, GateResult, gate
from evalkit.compare.noise import (
    JudgeNoise,
    judge_noise,
    repeats_from_files,
    repeats_from_runs,
    widen_for_noise,
)
from evalkit.compare.paired import (
    McNemar,
    PairedInterval,
    PairedTable,
    mcnemar_exact,
    paired_bootstrap,
    resampled_differences,
    sign_test,
)
from evalkit.compare.render import render_comparison, render_gate_markdown
from evalkit.compare.runs import case_of_trace, load_run
from evalkit.compare.tables import comparison_rows, difference_domain, difference_rows, flip_rows

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_MAX_DROP",
    "CorrectedDifference",
    "CriterionComparison",
    "Flip",
    "GateCriterion",
    "GateResult",
    "JudgeNoise",
    "McNemar",
    "PairedInterval",
    "PairedTable",
    "RunComparison",
    "case_of_trace",
    "compare_files",
    "compare_runs",
    "comparison_json",
    "comparison_rows",
    "corrected_difference",
    "difference_domain",
    "difference_rows",
    "flip_rows",
    "gate",
    "judge_noise",
    "load_run",
    "mcnemar_exact",
    "paired_bootstrap",
    "render_comparison",
    "render_gate_markdown",
    "repeats_from_files",
    "repeats_from_runs",
    "resampled_differences",
    "sign_test",
    "widen_for_noise",
]
