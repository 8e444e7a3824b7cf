"""Every contract's kind name, importable without pydantic.

The kind names are what ``evalkit schema`` writes (``<kind>.schema.json``) and ``evalkit validate --kind``
accepts, so the command line lists them without loading the models; :data:`evalkit.contracts.registry.CONTRACTS`
maps the same names, in the same order, to the models and checks that it does when it loads.
"""

from __future__ import annotations

KINDS: tuple[str, ...] = (
    "eval-matrix", "dataset", "behavior-tree", "flow-graph", "expected-flow", "methodology-review",
    "scorecard", "agent-run", "edd-change-request", "change-request-response", "criterion-verdict",
    "human-label", "validation-result", "ledger-entry", "annotation", "taxonomy", "review-export", "draft-taxonomy",
    "ratification", "trace",
    "skill-eval-case", "skill-eval-seed", "skill-eval-facts", "skill-eval-stage", "skill-eval-answers",
    "skill-eval-report", "skill-eval-policy", "subject", "notebook-summary", "judge-spec", "judge-output",
    "judge-run-record", "batch", "batch-index", "history-record", "interview-answers",
)
"""Kind names (kebab-case), in the order ``evalkit schema`` writes them."""
