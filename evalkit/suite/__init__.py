"""The eval suite: a subject's append-only set of test cases, and running the agent on them.

Case ids are content-derived and identical to the seed evaluator's; a suite grows by :func:`merge`
(new ids only, near-duplicates dropped) and a suite file never loses a case (:func:`write_dataset`).
:func:`run_subject` runs the subject's agent command once per case and repeat and keeps every run,
errored ones included.
"""

from evalkit.errors import AppendOnlyViolation, TooManyTuples
from evalkit.suite.derive import (
    Derived,
    Finding,
    derive_cases,
    findings_from_review,
    findings_from_verdicts,
    input_prompt,
    is_regression,
    outcomes_from_labels,
)
from evalkit.suite.expand import MAX_TUPLES, expand_tuples, uncovered_tuples
from evalkit.suite.files import (
    SuiteCheck,
    assert_append_only,
    check_dataset,
    read_dataset,
    write_dataset,
)
from evalkit.suite.generate import Coverage, GenerateOutcome, coverage, generate_cases, writer_brief
from evalkit.suite.growing import (
    DeriveOutcome,
    SuiteOf,
    derive_into_suite,
    findings_from_files,
    merge_into,
    read_offered,
    read_review_annotations,
    suite_of,
)
from evalkit.suite.ids import case_id, fnv1a32, tuple_key
from evalkit.suite.interview import InterviewOutcome, resolve_dimensions, run_interview
from evalkit.suite.merge import (
    NEAR_DUPLICATE_JACCARD,
    MergeResult,
    NearDuplicate,
    check_case_ids,
    is_near_duplicate,
    jaccard,
    merge,
    new_case,
    query_tokens,
)
from evalkit.suite.proposals import (
    ProposedDimension,
    ProposedSeed,
    propose_dimensions,
    propose_seeds,
    summarise_traces,
)
from evalkit.suite.runs import (
    AgentRun,
    RunOutcome,
    run_cases,
    run_once,
    run_subject,
    run_trace_id,
    scrubbed_env,
)
from evalkit.suite.writer import WriterBrief, WriterPrompt, parse_written, writer_prompt, writer_schema

__all__ = [
    "InterviewOutcome",
    "ProposedDimension",
    "ProposedSeed",
    "run_interview",
    "propose_dimensions",
    "propose_seeds",
    "resolve_dimensions",
    "summarise_traces",
    "Coverage",
    "GenerateOutcome",
    "WriterBrief",
    "WriterPrompt",
    "coverage",
    "generate_cases",
    "parse_written",
    "writer_brief",
    "writer_prompt",
    "writer_schema",
    "DeriveOutcome",
    "Finding",
    "SuiteOf",
    "derive_into_suite",
    "findings_from_files",
    "findings_from_review",
    "findings_from_verdicts",
    "is_regression",
    "merge_into",
    "read_offered",
    "read_review_annotations",
    "suite_of",
    "MAX_TUPLES",
    "NEAR_DUPLICATE_JACCARD",
    "AgentRun",
    "AppendOnlyViolation",
    "Derived",
    "MergeResult",
    "NearDuplicate",
    "RunOutcome",
    "SuiteCheck",
    "TooManyTuples",
    "assert_append_only",
    "case_id",
    "check_case_ids",
    "check_dataset",
    "derive_cases",
    "expand_tuples",
    "fnv1a32",
    "input_prompt",
    "is_near_duplicate",
    "jaccard",
    "merge",
    "new_case",
    "outcomes_from_labels",
    "query_tokens",
    "read_dataset",
    "run_cases",
    "run_once",
    "run_subject",
    "run_trace_id",
    "scrubbed_env",
    "tuple_key",
    "uncovered_tuples",
    "write_dataset",
]
