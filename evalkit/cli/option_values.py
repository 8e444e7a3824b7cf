"""The library's names and defaults that the parsers show, readable without importing the library.

Every ``evalkit`` parser is built before any command runs, so ``evalkit --help`` would otherwise import the
packages that define these values, and their facades import pydantic, polars and numpy (about a second
per process). Each value here is a copy of the library's own, named after it; tests/cli/test_startup.py
checks that every copy still equals the value where it is defined, so a new trace format, contract kind or
default changed in the library fails that test until it is copied here too.
"""

from __future__ import annotations

TRACE_FORMATS: tuple[str, ...] = ("evalkit", "langfuse", "otel", "anthropic", "openai-chat", "single-turn")
"""evalkit's own importers' names, in sniffing order: the keys of :data:`evalkit.traces.FORMATS` before any
plug-in's (see :func:`evalkit.cli.parsers.trace_format_names`)."""

TRACE_FORMAT_ENTRY_POINTS = "evalkit.trace_formats"
"""The entry-point group plug-in trace formats are declared in: :data:`evalkit.traces.plugins.ENTRY_POINT_GROUP`."""

CONTRACT_KINDS: tuple[str, ...] = (
    "eval-matrix", "dataset", "behavior-tree", "flow-graph", "expected-flow", "methodology-review",
    "scorecard", "agent-run", "edd-change-request", "change-request-response", "criterion-verdict",
    "human-label", "validation-result", "ledger-entry", "annotation", "taxonomy", "review-export", "trace",
    "skill-eval-case", "skill-eval-seed", "skill-eval-facts", "skill-eval-stage", "skill-eval-answers",
    "skill-eval-report", "skill-eval-policy", "subject", "notebook-summary", "judge-spec", "judge-output",
    "judge-run-record",
)
"""Every contract's kind name, in order: the keys of :data:`evalkit.contracts.registry.CONTRACTS`."""

SAMPLING_STRATEGIES: tuple[str, ...] = ("random", "stratified", "outlier", "failure-driven", "uncertainty")
""":data:`evalkit.analysis.STRATEGIES`."""

SATURATION_WINDOW = 20
""":data:`evalkit.analysis.SATURATION_WINDOW`."""

CALIBRATION_METHODS: tuple[str, ...] = ("adjusted-wald", "bootstrap", "bootstrap-full")
""":data:`evalkit.calibration.METHODS`."""

CALIBRATION_DEFAULT_METHOD = "adjusted-wald"
""":data:`evalkit.calibration.DEFAULT_METHOD`."""

CALIBRATION_DEFAULT_ITERATIONS = 20_000
""":data:`evalkit.calibration.DEFAULT_ITERATIONS`."""

CALIBRATION_GATES: tuple[str, ...] = ("point", "lower-bound")
""":data:`evalkit.calibration.GATES`."""

DEFAULT_POLICY_VERSION = "1"
""":data:`evalkit.calibration.DEFAULT_POLICY_VERSION`."""

DEFAULT_PARTITION_TRACES = 100
""":data:`evalkit.distributed.DEFAULT_PARTITION_TRACES`."""

DEFAULT_MIN_THREAD_LEN = 12
""":data:`evalkit.flow.DEFAULT_MIN_THREAD_LEN`."""

FLOW_SEMANTICS: tuple[str, ...] = ("received", "mutagent")
""":data:`evalkit.flow.SEMANTICS`, the default first."""

EDD_DEFAULT_MAX_SWINGS = 6
""":data:`evalkit.contracts.edd.DEFAULT_MAX_SWINGS`."""

EDD_DEFAULT_MAX_WALLCLOCK_MS = 30 * 60 * 1000
""":data:`evalkit.contracts.edd.DEFAULT_MAX_WALLCLOCK_MS`."""

EDD_DEFAULT_NO_IMPROVEMENT_STREAK_LIMIT = 2
""":data:`evalkit.contracts.edd.DEFAULT_NO_IMPROVEMENT_STREAK_LIMIT`."""
