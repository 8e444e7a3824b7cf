"""LLM judges: specs, the four-component prompt, the structured reply, and grounded verification.

A spec (:func:`read_judge_specs`) becomes one prompt per trace (:func:`build_prompt`); a reply is parsed
(:func:`parse_judge_output`) into a verdict (:func:`to_verdict`) that :func:`verify_verdict` can only
downgrade. :func:`choose_pin` says which judge a run uses; :func:`judge_traces` is the set-up every run
shares (leakage checks, prompts, cache, runner). Providers, the runner, its cache and journal add their names below; :func:`request_key` is the replay
cassette's key of one request.
"""

from evalkit.judge.asking import Asker, AskSummary
from evalkit.judge.audit import (
    LLMBAR_ORDERS,
    MODEL_FAMILIES,
    PairwiseJudgment,
    PairwiseVerbosity,
    SwapAudit,
    VerbosityAudit,
    model_family,
    pairwise_verbosity,
    read_llmbar_pairwise,
    same_family_warning,
    swap_audit,
    verbosity_audit,
)
from evalkit.judge.cache import JudgeCache
from evalkit.judge.calibration_report import CalibrationReport, calibrate_judge, render_calibration
from evalkit.judge.calibration_story import CalibrationStory, Coverage, calibration_story, cover
from evalkit.judge.calls import RetryPolicy, reply_body
from evalkit.judge.context import context_tokens, oversized_prompts
from evalkit.judge.cost import PriceTable
from evalkit.judge.grounding import (
    GroundingProblem,
    RefResolution,
    TermBinding,
    bind_terms,
    lint_verdicts,
    resolve_ref,
    verifier,
    verify_verdict,
)
from evalkit.judge.journal import journal_lock
from evalkit.judge.judging import (
    JudgeSetup,
    NotConfirmed,
    PromptSize,
    estimate_traces,
    judge_prompts,
    judge_setup,
    judge_traces,
    prompt_sizes,
)
from evalkit.judge.leaks import LabelProxy, label_proxies
from evalkit.judge.output import JUDGE_OUTPUT_SCHEMA, parse_judge_output, to_verdict
from evalkit.judge.pin import choose_pin
from evalkit.judge.prompt import (
    COMPONENTS,
    JudgePrompt,
    build_prompt,
    build_prompts,
    check_examples,
    check_label_proxies,
    prompt_digest,
)
from evalkit.judge.providers import (
    CassetteRecorder,
    MissingCredential,
    Provider,
    ProviderError,
    ProviderReply,
    ReplayProvider,
    ScriptedProvider,
    make_provider,
    request_key,
)
from evalkit.judge.providers.tokens import TokenCount, TokenCounter, token_counter
from evalkit.judge.render import render_trace
from evalkit.judge.run_loop import RunLoop
from evalkit.judge.run_outputs import FinishedItems, sidecar_paths
from evalkit.judge.run_report import judge_run_table, refs_downgrades, runs_path_of
from evalkit.judge.runner import JudgeRunSummary, run_coroutine, run_judge, run_prompts
from evalkit.judge.sessions import (
    judged_traces,
    refuse_session_scope,
    session_id_of,
    session_traces,
    session_traces_by_id,
)
from evalkit.judge.spec import example_gaps, example_warning, read_judge_spec_files, read_judge_specs
from evalkit.judge.verdict_audit import (
    CriterionVerbosity,
    agent_model,
    answer_lengths,
    answer_text,
    bias_findings,
    verdict_verbosity,
)
from evalkit.judge.verdict_lint import VerdictFileLint, lint_verdict_file
from evalkit.judge.verification import (
    VERIFIER_OUTPUT_SCHEMA,
    VERIFY_MODES,
    VerifyPrompt,
    VerifySummary,
    verifier_name,
    verifier_prompt,
    verify_paths,
    verify_run,
    verify_with_llm,
)

__all__ = [
    "judged_traces",
    "refuse_session_scope",
    "session_id_of",
    "session_traces",
    "session_traces_by_id",
    "AskSummary",
    "Asker",
    "CalibrationReport",
    "CalibrationStory",
    "Coverage",
    "calibrate_judge",
    "calibration_story",
    "cover",
    "render_calibration",
    "example_gaps",
    "example_warning",
    "VERIFIER_OUTPUT_SCHEMA",
    "VERIFY_MODES",
    "VerifyPrompt",
    "VerifySummary",
    "refs_downgrades",
    "reply_body",
    "verifier_name",
    "verifier_prompt",
    "verify_paths",
    "verify_run",
    "verify_with_llm",
    "CriterionVerbosity",
    "agent_model",
    "answer_lengths",
    "answer_text",
    "bias_findings",
    "verdict_verbosity",
    "LLMBAR_ORDERS",
    "MODEL_FAMILIES",
    "PairwiseJudgment",
    "PairwiseVerbosity",
    "SwapAudit",
    "VerbosityAudit",
    "model_family",
    "pairwise_verbosity",
    "read_llmbar_pairwise",
    "same_family_warning",
    "swap_audit",
    "verbosity_audit",
    "CassetteRecorder",
    "JudgeCache",
    "JudgeRunSummary",
    "MissingCredential",
    "PriceTable",
    "Provider",
    "ProviderError",
    "ProviderReply",
    "ReplayProvider",
    "RetryPolicy",
    "ScriptedProvider",
    "make_provider",
    "request_key",
    "run_coroutine",
    "run_judge",
    "run_prompts",
    "judge_run_table",
    "runs_path_of",
    "COMPONENTS",
    "JUDGE_OUTPUT_SCHEMA",
    "GroundingProblem",
    "JudgePrompt",
    "RefResolution",
    "TermBinding",
    "bind_terms",
    "build_prompt",
    "build_prompts",
    "check_examples",
    "check_label_proxies",
    "context_tokens",
    "oversized_prompts",
    "choose_pin",
    "JudgeSetup",
    "NotConfirmed",
    "PromptSize",
    "prompt_sizes",
    "estimate_traces",
    "judge_prompts",
    "judge_setup",
    "judge_traces",
    "TokenCount",
    "TokenCounter",
    "token_counter",
    "label_proxies",
    "LabelProxy",
    "lint_verdict_file",
    "lint_verdicts",
    "VerdictFileLint",
    "parse_judge_output",
    "prompt_digest",
    "read_judge_spec_files",
    "read_judge_specs",
    "render_trace",
    "resolve_ref",
    "to_verdict",
    "verifier",
    "verify_verdict",
    "FinishedItems",
    "RunLoop",
    "journal_lock",
    "sidecar_paths",
]
