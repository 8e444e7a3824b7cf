"""The prompt that asks a model to write test cases for one tuple, the reply's schema, and reading the reply.

One prompt per tuple the suite does not realise: the subject's dimensions (with their descriptions), the
taxonomy's failure modes, the suite's seed cases as examples of the subject's real messages, and, when the
matrix judges behaviour, its criteria (so the expected behaviour is written in their terms). The reply is
``{cases: [{query, expected?, failureModes?}]}``; the schema lists the taxonomy's mode ids as an enum, so a
structured-output mode (or a grammar) cannot invent one. The same inputs give the same bytes and the same
digest, which every generated case records with the model that wrote it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from evalkit.contracts.dataset import Case, Dimension

MAX_EXAMPLES = 5
"""Seed cases shown as examples at most: enough to show the subject's voice, short enough to leave room."""

SYSTEM = """You write test cases for evaluating an AI agent. A test case is one message a real user would send \
the agent. The suite varies its cases along dimensions; each case realises one value of every dimension (a \
tuple).

Write messages that read like real users wrote them: concrete details (names, ids, amounts, dates) in the \
style of the examples, varied wording and length, no mention of the dimension names or of testing. Each \
message must realise every value of its tuple. Make the messages differ from each other and from the \
examples: a near-copy is dropped."""


@dataclass(frozen=True)
class WriterBrief:
    """What every prompt of one generation run shares."""

    subject: str
    dimensions: Sequence[Dimension]
    n: int
    failure_modes: Sequence[tuple[str, str, str]] = ()
    """``(id, name, definition)`` of each failure mode of the taxonomy."""
    criteria: Sequence[tuple[str, str]] = ()
    """``(id, statement and pass condition)`` of each criterion the expected behaviour is written for."""
    examples: Sequence[Case] = ()
    expected: bool = False
    """Ask for each case's expected behaviour (the matrix judges behaviour against it)."""


class WriterPrompt(NamedTuple):
    """The prompt for one tuple, the reply's schema, and the digest of both."""

    tuple: dict[str, str]
    messages: tuple[dict[str, str], ...]
    schema: dict[str, Any]
    digest: str


def writer_schema(brief: WriterBrief) -> dict[str, Any]:
    """The reply's JSON Schema: every field required and no other (strict structured-output modes)."""
    item: dict[str, Any] = {"query": {"type": "string", "description": "The user's message, as they would write it."}}
    if brief.expected:
        item["expected"] = {"type": "string", "description": "What a correct agent does for this message, in one "
                            "or two sentences, in the terms of the criteria."}
    if brief.failure_modes:
        item["failureModes"] = {"type": "array", "items": {"type": "string", "enum": [m[0] for m in brief.failure_modes]},
                                "description": "The failure modes this message gives the agent a chance to show."}
    return {"type": "object", "additionalProperties": False, "required": ["cases"], "properties": {
        "cases": {"type": "array", "description": f"Exactly {brief.n} cases.", "items": {
            "type": "object", "additionalProperties": False, "required": sorted(item), "properties": item}}}}


def _system(brief: WriterBrief, schema: dict[str, Any]) -> str:
    lines = [SYSTEM, "", f"The agent under test: {brief.subject}.", "", "Dimensions:"]
    for d in brief.dimensions:
        lines.append(f"- {d.name}: {d.description or '(no description)'} Values: {', '.join(d.values)}.")
    if brief.failure_modes:
        lines += ["", "Failure modes seen in this agent (say which ones each message gives it a chance to show):"]
        lines += [f"- {mode_id} ({name}): {definition}" for mode_id, name, definition in brief.failure_modes]
    if brief.expected:
        lines += ["", "Criteria the agent is held to (write each case's expected behaviour in their terms):"]
        lines += [f"- {cid}: {text}" for cid, text in brief.criteria] or ["- (none given: describe the correct handling)"]
    if brief.examples:
        lines += ["", "Examples of real cases (tuple, then message):"]
        for case in brief.examples[:MAX_EXAMPLES]:
            tuple_text = ", ".join(f"{k}={case.tuple[k]}" for k in sorted(case.tuple))
            lines.append(f"- {tuple_text}: {json.dumps(case.query, ensure_ascii=False)}")
    lines += ["", "Reply with one JSON object following this schema:",
              json.dumps(schema, ensure_ascii=False, separators=(",", ":"), sort_keys=True)]
    return "\n".join(lines)


def writer_prompt(brief: WriterBrief, case_tuple: dict[str, str]) -> WriterPrompt:
    """The prompt asking for ``brief.n`` cases realising ``case_tuple``."""
    from evalkit.judge import prompt_digest

    schema = writer_schema(brief)
    tuple_text = ", ".join(f"{d.name}={case_tuple[d.name]}" for d in brief.dimensions if d.name in case_tuple)
    messages = ({"role": "system", "content": _system(brief, schema)},
                {"role": "user", "content": f"Tuple: {tuple_text}. Write {brief.n} cases."})
    return WriterPrompt(dict(case_tuple), messages, schema, prompt_digest(messages, schema))


def parse_written(text: str, brief: WriterBrief) -> dict[str, Any]:
    """A reply as ``{cases: [...]}``, each with a non-empty query (and its expected behaviour and failure modes
    when asked), at most ``brief.n`` of them.

    Raises:
        ValueError: not JSON, or not what the schema asks (the message says what to fix; the caller sends it
            back once, as for a judge's reply).
    """
    from evalkit.judge import reply_body

    body = reply_body(text)
    try:
        value = json.loads(body)
    except ValueError as exc:
        raise ValueError(f"is not JSON ({exc})") from None
    cases = value.get("cases") if isinstance(value, dict) else None
    if not isinstance(cases, list) or not cases:
        raise ValueError("has no cases: reply {\"cases\": [...]} with at least one case")
    if len(cases) > brief.n:
        raise ValueError(f"has {len(cases)} cases; {brief.n} were asked for")
    known = {m[0] for m in brief.failure_modes}
    out = []
    for i, case in enumerate(cases):
        if not isinstance(case, dict) or not isinstance(case.get("query"), str) or not case["query"].strip():
            raise ValueError(f"cases[{i}].query: must be the user's message (non-empty text)")
        kept: dict[str, Any] = {"query": case["query"].strip()}
        if brief.expected:
            expected = case.get("expected")
            if not isinstance(expected, str) or not expected.strip():
                raise ValueError(f"cases[{i}].expected: must say what a correct agent does (non-empty text)")
            kept["expected"] = expected.strip()
        if brief.failure_modes:
            modes = case.get("failureModes", [])
            if not isinstance(modes, list) or any(m not in known for m in modes):
                raise ValueError(f"cases[{i}].failureModes: must list ids among {', '.join(sorted(known))}")
            kept["failureModes"] = list(dict.fromkeys(modes))
        out.append(kept)
    return {"cases": out}
