"""One judge call's record, kept beside the verdicts: which model judged, what it cost, how it went.

The verdicts file holds only ``criterion-verdict`` records (what calibration reads); this sidecar
(``<verdicts>.runs.jsonl``) holds one ``judge-run-record`` per (criterion, trace, repeat), including
the items that ended in an error and so have no verdict.
"""

from __future__ import annotations

from pydantic import Field

from evalkit.contracts.base import CamelContract, SchemaNamed
from evalkit.contracts.verdict import VerdictResult


class JudgeRunRecord(CamelContract, SchemaNamed):
    """How one (criterion, trace, repeat) was judged."""

    criterion_id: str
    trace_id: str
    repeat: int = Field(ge=0)
    provider: str
    model: str
    temperature: float
    prompt_digest: str
    """Digest of the prompt rendered for this trace (changes with the trace)."""
    result: VerdictResult | None
    """This repeat's result; null for an error row."""
    input_tokens: int | None
    output_tokens: int | None
    attempts: int = Field(ge=0)
    """Calls made for this item in this run (0: from the cache, the journal, or decided without a call)."""
    cached: bool
    cost_usd: float | None
    """What producing the reply cost; null when unknown (no price for the model), never a guessed 0."""
    structured_output: str | None
    """How the reply's shape was asked for: json_schema, json_object, prompt (inline schema), tool, ..."""
    error: str | None = None
    judge_digest: str | None = None
    """Digest of the judge itself: its spec and the prompt builder, the same for every trace it judges. A
    calibration is bound to it (with the model and temperature); null in records written before it existed."""


class JudgeVerifyRecord(CamelContract):
    """How one verdict was verified by the LLM verifier (``<verdicts>.verify.jsonl``): who, what it cost, what
    it found, and the result before and after (a downgrade only ever ends in ``uncertain``)."""

    criterion_id: str
    trace_id: str
    verified_by: str
    provider: str
    model: str
    temperature: float
    prompt_digest: str
    """Digest of the verifier prompt (criterion, verdict, critique, resolved refs)."""
    was: VerdictResult
    result: VerdictResult
    supported: bool | None
    """The verifier's answer; null when it gave none (an error, or the budget ran out): then not verified."""
    reason: str | None
    input_tokens: int | None
    output_tokens: int | None
    attempts: int = Field(ge=0)
    cached: bool
    cost_usd: float | None
    error: str | None = None

