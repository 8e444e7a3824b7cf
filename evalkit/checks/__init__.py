"""From eval matrix to scorecard: code checks, the router, the gate, repeats, the behavior tree, the review.

- Code checks: thirteen primitives (:data:`PRIMITIVES`), configured per criterion in the matrix
  (``check: {primitive, params}``), each returning a ``CriterionVerdict`` whose refs ``resolve_ref`` resolves;
  six of them (:data:`TRAJECTORY_CHECKS`) read the trace's tool calls: called, not called, the sequence
  against an expected one, arguments, step budgets, loops.
- Router: ``checkMethod`` -> deterministic | llm-judge | hybrid; a hybrid code fail is final; no fallback.
- Scorecard: the CRIT/HIGH gate per component, Wilson pass rates, corrected rates for validated judges,
  the judge behind each judged criterion (provider, model, temperature, prompt digest), a 60-column card.
- Repeats: pass rate and variance per case and criterion; stable at max variance <= threshold (0).
- Behavior tree: expected vs observed decisions where the tree maps them, fork frequencies (MR-1).
- Methodology review: MR-1..9 advisory findings with the evidence evalkit computes.
- Eval runs: the agent on the suite, every pair needing the judge judged in one batch, the scorecard
  written with its verdicts and manifest (:func:`eval_subject`); notebook 04 reads them through the
  report helpers below (:func:`scorecard_story`, the ``*_frame`` tables, :func:`draw_tree`).

The report helpers need polars or matplotlib, so they are imported on first use: ``import
evalkit.checks`` (and every CLI command) stays free of both.
"""

from typing import TYPE_CHECKING

from evalkit.checks.base import Check
from evalkit.checks.batch_judge import BatchJudged, batch_judge
from evalkit.checks.budgets import NoLoop, StepBudget
from evalkit.checks.card import WIDTH, render_card
from evalkit.checks.catalog import PRIMITIVES, TRAJECTORY_CHECKS, build_check
from evalkit.checks.eval_run import NOT_RECORDED, EvalRun, eval_subject, read_eval_run
from evalkit.checks.headline import scorecard_headline
from evalkit.checks.judges import judges_from_runs, read_judges, with_judges
from evalkit.checks.primitives import (
    FORMATS,
    FormatValidity,
    Presence,
    RecoveryAfterFailure,
    RefIntegrity,
    SchemaConformance,
    StringEquality,
    ToolOutputFailure,
)
from evalkit.checks.reading import TRACE_ROOT
from evalkit.checks.regressions import regression_set
from evalkit.checks.review import ITEMS, review_runs
from evalkit.checks.router import (
    METHOD_TRACKS,
    Judge,
    Outcome,
    RoutedCriterion,
    criterion_id_of,
    decide,
    evaluate,
    judge_from_verdicts,
    route,
)
from evalkit.checks.run import score_traces, write_scorecard
from evalkit.checks.scorecard import (
    GATING_SEVERITIES,
    SKIP_WARN_RATE,
    JudgeValidation,
    Tally,
    build_scorecard,
    gate,
    tally_outcomes,
    worst,
)
from evalkit.checks.tool_calls import ArgsPredicate, arguments, json_subset, tool_calls
from evalkit.checks.trajectory import ArgumentCorrect, ToolCalled, ToolNotCalled
from evalkit.checks.trajectory_match import TrajectoryMatch, lcs_pairs
from evalkit.checks.tree import (
    RARE_SHARE,
    DecisionCheck,
    ForkCount,
    check_node,
    compare_tree,
    decision_summary,
)
from evalkit.checks.tree_check import NodeCheck, TreeCheck, check_tree, render_tree_check
from evalkit.checks.ui_slots import MissingSlot, UiSlotCheck, check_ui_slots, page_text
from evalkit.checks.variance import (
    DEFAULT_MAX_VARIANCE,
    CaseSpread,
    RepeatStability,
    case_of_metadata,
    outcome_results,
    repeat_stability,
)
from evalkit.errors import CheckError, RoutingError
from evalkit.facade import load_on_first_use

if TYPE_CHECKING:
    from evalkit.checks.scorecard_report import (
        ScorecardStory,
        component_frame,
        criterion_frame,
        decision_frame,
        fork_frame,
        mismatch_frame,
        rate_rows,
        regression_frame,
        review_frame,
        scorecard_story,
        variance_frame,
    )
    from evalkit.checks.tree_drawing import draw_tree, tree_graph

__all__ = [
    "regression_set",
    "TRAJECTORY_CHECKS",
    "ArgsPredicate",
    "ArgumentCorrect",
    "NoLoop",
    "StepBudget",
    "ToolCalled",
    "ToolNotCalled",
    "TrajectoryMatch",
    "arguments",
    "json_subset",
    "lcs_pairs",
    "tool_calls",
    "MissingSlot",
    "NodeCheck",
    "TreeCheck",
    "UiSlotCheck",
    "check_tree",
    "check_ui_slots",
    "page_text",
    "render_tree_check",
    "DEFAULT_MAX_VARIANCE",
    "FORMATS",
    "GATING_SEVERITIES",
    "ITEMS",
    "METHOD_TRACKS",
    "NOT_RECORDED",
    "PRIMITIVES",
    "RARE_SHARE",
    "SKIP_WARN_RATE",
    "TRACE_ROOT",
    "WIDTH",
    "BatchJudged",
    "CaseSpread",
    "Check",
    "CheckError",
    "DecisionCheck",
    "EvalRun",
    "ForkCount",
    "FormatValidity",
    "Judge",
    "JudgeValidation",
    "Outcome",
    "Presence",
    "RecoveryAfterFailure",
    "RefIntegrity",
    "RepeatStability",
    "RoutedCriterion",
    "RoutingError",
    "SchemaConformance",
    "ScorecardStory",
    "StringEquality",
    "Tally",
    "ToolOutputFailure",
    "batch_judge",
    "build_check",
    "build_scorecard",
    "case_of_metadata",
    "check_node",
    "compare_tree",
    "component_frame",
    "criterion_frame",
    "criterion_id_of",
    "decide",
    "decision_frame",
    "decision_summary",
    "draw_tree",
    "eval_subject",
    "evaluate",
    "fork_frame",
    "gate",
    "judge_from_verdicts",
    "judges_from_runs",
    "mismatch_frame",
    "outcome_results",
    "rate_rows",
    "read_eval_run",
    "read_judges",
    "render_card",
    "repeat_stability",
    "regression_frame",
    "review_frame",
    "review_runs",
    "route",
    "score_traces",
    "scorecard_headline",
    "scorecard_story",
    "tally_outcomes",
    "tree_graph",
    "variance_frame",
    "with_judges",
    "worst",
    "write_scorecard",
]

__getattr__, __dir__ = load_on_first_use(__name__, __all__)
