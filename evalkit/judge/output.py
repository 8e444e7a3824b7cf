"""The judge's structured reply: the JSON Schema a provider enforces, parsing, and the verdict it becomes.

The schema is written out by hand rather than generated, because providers' strict modes accept a
subset of JSON Schema: no ``$ref``, every object closed (``additionalProperties: false``) with every
property required (nullable where optional). Its property order is the order the judge writes in:
critique first, verdict after. ``tests/judge/test_output.py`` checks it against :class:`JudgeOutput`.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from evalkit.contract_files import validation_problems
from evalkit.contracts.judge import JudgeOutput
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError

KINDS = ["factual-intent", "normative", "scope"]
"""The kinds of an assumption or a blocker, as the schemas list them."""
_KINDS = KINDS


def closed_schema(properties: dict[str, Any], description: str | None = None) -> dict[str, Any]:
    """An object schema as strict structured-output modes take it: closed, every property required."""
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": list(properties),
                              "additionalProperties": False}
    if description:
        schema["description"] = description
    return schema


_closed = closed_schema


JUDGE_OUTPUT_SCHEMA: dict[str, Any] = _closed({
    "critique": {"type": "string", "description": "Detailed assessment against the criterion, written before "
                 "deciding, citing concrete evidence from the trace."},
    "refs": {"type": "array", "description": "A ref for every claim, absences included.", "items": _closed({
        "obs": {"type": "string", "description": "Observation id shown in the trace, or the trace id."},
        "path": {"type": "string", "description": "Field path in it: dot segments, [n] for list items."},
        "value": {"type": "string", "description": "The exact text cited, copied from that field."},
    })},
    "assumptions": {"type": "array", "description": "Premises the verdict needs that the trace does not "
                    "establish.", "items": _closed({
                        "text": {"type": "string"},
                        "kind": {"type": "string", "enum": _KINDS},
                        "status": {"type": "string", "enum": ["verified", "unverified", "hypothesis",
                                                              "eliminated"]},
                    })},
    "result": {"type": "string", "enum": ["pass", "fail", "uncertain"]},
    "confidence": {"type": "number", "description": "From 0 to 1."},
    "blockedBy": {"anyOf": [_closed({
        "kind": {"type": "string", "enum": _KINDS},
        "text": {"type": "string", "description": "The unbound term or ungroundable premise."},
    }), {"type": "null"}], "description": "What blocked the decision; required when result is uncertain, "
        "null otherwise."},
}, "The judge's reply: critique first, then the grounding, then the verdict.")
"""JSON Schema of :class:`~evalkit.contracts.judge.JudgeOutput` for providers' structured output."""


def parse_judge_output(reply: str | dict[str, Any]) -> JudgeOutput:
    """A provider's reply (JSON text or an already-parsed object) as a :class:`JudgeOutput`.

    Raises:
        InputError: the reply is not JSON or does not fit the schema; the message names the field, so it
            can be sent back to the model for one retry.
    """
    value: Any = reply
    if isinstance(reply, str):
        try:  # the common case in one step (pydantic parses the JSON itself): 2x faster than json + validate
            return JudgeOutput.model_validate_json(reply)
        except ValidationError:
            pass  # read it again the slow way below, for the message the judge is sent back
        try:
            value = json.loads(reply)
        except ValueError as exc:
            raise InputError(f"reply is not JSON: {exc}") from None
    try:
        return JudgeOutput.model_validate(value)
    except ValidationError as exc:
        path, message = validation_problems(exc)[0]
        raise InputError(message, path=path or None) from None


def to_verdict(output: JudgeOutput, criterion_id: str, trace_id: str) -> CriterionVerdict:
    """The stored verdict for a judge's reply, every field of the reply kept."""
    fields: dict[str, Any] = {
        "criterion_id": criterion_id, "trace_id": trace_id, "result": output.result,
        "confidence": float(output.confidence), "critique": output.critique,
        "refs": output.refs, "assumptions": output.assumptions,
    }
    if output.blocked_by is not None:
        fields["blocked_by"] = output.blocked_by
    return CriterionVerdict(**fields)
