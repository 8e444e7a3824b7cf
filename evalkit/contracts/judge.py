"""An LLM judge for one criterion: its spec (what it judges, on what, with which examples) and its reply.

A judge spec is written by the eval designer (YAML, one document per criterion). The judge's reply
(``judge-output``) is the structured output the prompt asks for: the critique first, then the refs and
assumptions it rests on, then the verdict. ``uncertain`` is the abstain state and says what blocked it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, PrivateAttr, field_validator, model_validator

from evalkit.contracts.base import CamelContract, SchemaNamed
from evalkit.contracts.trace import ObservationType
from evalkit.contracts.types import NonEmptyStr
from evalkit.contracts.verdict import Assumption, BlockedBy, Ref, VerdictResult

CriterionId = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$", max_length=128)]

TRACE_FIELDS: tuple[str, ...] = ("name", "input", "output", "metadata")
"""Trace-level fields a judge may be shown; ``metadata.KEY`` shows one metadata field alone."""


def _trace_field(value: Any) -> Any:
    if isinstance(value, str) and (value in TRACE_FIELDS or (
            value.startswith("metadata.") and len(value) > len("metadata.") and "." not in value[9:])):
        return value
    raise ValueError(f"must be one of {', '.join(TRACE_FIELDS)} or metadata.KEY (one metadata field), got {value!r}")


TraceField = Annotated[str, AfterValidator(_trace_field)]
"""A trace-level field a judge may be shown (see :data:`TRACE_FIELDS`)."""

ObservationField = Literal["input", "output", "metadata", "model", "level", "statusMessage", "usage",
                           "startTime", "endTime"]
"""Observation fields a judge may be shown (id, type, name and parent are always shown: refs cite them)."""

OBSERVATION_FIELDS: tuple[str, ...] = ObservationField.__args__  # type: ignore[attr-defined]


class JudgePin(CamelContract):
    """The model a judge runs on, pinned: provider, model id, temperature 0 (so reruns are comparable)."""

    provider: NonEmptyStr
    model: NonEmptyStr
    temperature: float = Field(default=0, ge=0, le=0, description="pinned to 0 for reproducible verdicts")
    base_url: NonEmptyStr | None = None
    max_tokens: int = Field(default=1024, ge=1, description="the reply's token cap, sent with every call")
    transport: Literal["sdk", "http"] = Field(
        default="sdk", description="openai only: sdk (the official client) or http (the same requests over a "
        "lean HTTP/1.1 pool, for local http:// servers at high concurrency)")


class Term(CamelContract):
    """A term the criterion presupposes, which must be bound in the trace before the judge is asked.

    The term is bound when one of its spellings occurs (whitespace-normalised, case-insensitive) in what
    the judge is shown, or, with ``obs``, in the observations with that id or name.
    """

    text: NonEmptyStr
    any_of: list[NonEmptyStr] | None = Field(default=None, min_length=1)
    """Spellings that bind the term; ``[text]`` when not given."""
    obs: NonEmptyStr | None = None

    def spellings(self) -> list[str]:
        """The strings whose presence binds this term."""
        return list(self.any_of) if self.any_of else [self.text]


def _term_from_text(value: Any) -> Any:
    # A term is usually just its text; the object form is for spellings and scope.
    return {"text": value} if isinstance(value, str) else value


class FewShotExample(CamelContract):
    """A labelled trace shown to the judge with the critique a careful reviewer wrote for it."""

    trace: NonEmptyStr
    """The example trace's id; its content is rendered from the traces, its split checked in the labels."""
    label: Literal["pass", "fail"]
    critique: NonEmptyStr
    refs: list[Ref] | None = None
    borderline: bool | None = Field(default=None, strict=True)
    """A borderline case (the seed: one clear pass, one clear fail and one borderline example, the borderline
    teaching the most nuance); an example not marked is a clear one."""


class ObservationSelection(CamelContract):
    """Which observations the judge sees; a criterion left out means every observation qualifies."""

    types: list[ObservationType] | None = Field(default=None, min_length=1)
    names: list[NonEmptyStr] | None = Field(default=None, min_length=1)
    ids: list[NonEmptyStr] | None = Field(default=None, min_length=1)


class InputSelection(CamelContract):
    """What of each trace the judge is shown; by default the whole trace, rendered compactly."""

    trace: list[TraceField] = Field(default_factory=lambda: list(TRACE_FIELDS))
    observations: ObservationSelection = Field(default_factory=ObservationSelection)
    fields: list[ObservationField] = Field(default_factory=lambda: list(OBSERVATION_FIELDS))

    @field_validator("trace", "fields")
    @classmethod
    def _each_once(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("each field may be listed once")
        if "metadata" in value and any(f.startswith("metadata.") for f in value):
            raise ValueError("metadata shows every metadata field already: list metadata or metadata.KEY fields")
        return value


class JudgeSpec(CamelContract, SchemaNamed):
    """One binary LLM judge for one criterion (one failure mode)."""

    id: CriterionId
    """The criterion id the verdicts carry."""
    criterion: NonEmptyStr
    """What the judge evaluates: the task and the one criterion."""
    pass_definition: NonEmptyStr = Field(alias="pass")
    fail_definition: NonEmptyStr = Field(alias="fail")
    terms: list[Annotated[Term, BeforeValidator(_term_from_text, json_schema_input_type=Term | NonEmptyStr)]] = \
        Field(default_factory=list)
    """Plain text, or an object with spellings and scope."""
    examples: list[FewShotExample] = Field(default_factory=list)
    input: InputSelection = Field(default_factory=InputSelection)
    judge: JudgePin | None = None
    scope: Literal["trace", "session"] = "trace"
    """What one verdict judges: one trace, or a whole conversation (every trace of a session, in order)."""
    session_key: NonEmptyStr | None = None
    """With ``scope: session``: the path in each trace's metadata that holds its session id (``session_id``,
    ``langfuse.sessionId``); verdicts then carry the session id as their trace id."""

    _source: tuple[str | None, int | None] = PrivateAttr(default=(None, None))
    """The file and line the spec was read from, for located errors."""

    @model_validator(mode="after")
    def _session_key_with_session_scope(self) -> JudgeSpec:
        if self.scope == "session" and self.session_key is None:
            raise ValueError("sessionKey: a session judge names where each trace's metadata holds its session id "
                             "(sessionKey: session_id, or a path such as langfuse.sessionId)")
        if self.scope == "trace" and self.session_key is not None:
            raise ValueError("sessionKey: read only with scope: session (add scope: session to judge whole "
                             "conversations)")
        return self

    @model_validator(mode="after")
    def _examples_once(self) -> JudgeSpec:
        seen: set[str] = set()
        for i, example in enumerate(self.examples):
            if example.trace in seen:
                raise ValueError(f"examples[{i}].trace: trace {example.trace!r} is already an example")
            seen.add(example.trace)
        return self

    @property
    def source(self) -> tuple[str | None, int | None]:
        """``(file, line)`` the spec was read from, when known."""
        return self._source


class JudgeOutput(CamelContract):
    """The judge's structured reply: critique first, then refs, assumptions, the verdict and its blocker.

    The schema sent to providers (``evalkit.judge.JUDGE_OUTPUT_SCHEMA``) requires every field, so strict
    structured-output modes can enforce the shape; parsing asks only what the seed does: ``blockedBy`` is
    required when the result is ``uncertain`` and may be left out otherwise (a server in JSON-object mode, or
    a model that omits a null field), and ``assumptions`` may be left out when there are none.
    """

    critique: NonEmptyStr
    refs: list[Ref]
    assumptions: list[Assumption] = Field(default_factory=list)
    result: VerdictResult
    confidence: float = Field(ge=0, le=1)
    blocked_by: BlockedBy | None = None

    @model_validator(mode="after")
    def _uncertain_needs_blocked_by(self) -> JudgeOutput:
        if self.result == "uncertain" and self.blocked_by is None:
            raise ValueError("blockedBy: required when result is 'uncertain'")
        return self


class VerifierOutput(CamelContract):
    """The verifier's reply: its assessment first, then whether the cited evidence entails the judge's
    verdict, and, when it does not, the premise the verdict leans on without evidence (the seed's inferential
    leap) or the evidence that is not what the critique says."""

    assessment: NonEmptyStr
    supported: bool = Field(strict=True)
    blocked_by: BlockedBy | None = None

    @model_validator(mode="after")
    def _unsupported_names_the_gap(self) -> VerifierOutput:
        if not self.supported and self.blocked_by is None:
            raise ValueError("blockedBy: required when supported is false (name the premise the verdict lacks)")
        return self



def spec_id_repeated(spec_id: str, first_line: int | None) -> str:
    """The error of a second judge spec for one criterion (``judge run`` and ``validate`` say the same)."""
    where = f" (line {first_line})" if first_line else ""
    return f"criterion {spec_id!r} already has a spec{where}"
