"""The judge's structured reply: a provider-friendly schema, strict parsing, and the stored verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from evalkit.contracts import JudgeOutput
from evalkit.io import InputError, canonical_line, read_json_strict
from evalkit.judge import JUDGE_OUTPUT_SCHEMA, parse_judge_output, to_verdict

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "contracts" / "judge-output.json"


def objects(schema: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            found.append(schema)
        for sub in schema.values():
            found += objects(sub)
    elif isinstance(schema, list):
        for sub in schema:
            found += objects(sub)
    return found


def test_schema_suits_strict_structured_output() -> None:
    text = json.dumps(JUDGE_OUTPUT_SCHEMA)
    assert "$ref" not in text and "$defs" not in text
    for obj in objects(JUDGE_OUTPUT_SCHEMA):
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])
    assert len(objects(JUDGE_OUTPUT_SCHEMA)) == 4  # the reply, a ref, an assumption, blockedBy


def test_schema_asks_for_the_critique_before_the_verdict() -> None:
    assert list(JUDGE_OUTPUT_SCHEMA["properties"]) == [
        "critique", "refs", "assumptions", "result", "confidence", "blockedBy"]


def test_schema_and_contract_agree() -> None:
    model = JudgeOutput.model_json_schema(by_alias=True)
    assert set(model["properties"]) == set(JUDGE_OUTPUT_SCHEMA["properties"])
    # the schema sent asks for every field (strict modes); parsing asks only what the seed does
    assert set(model["required"]) == set(JUDGE_OUTPUT_SCHEMA["required"]) - {"assumptions", "blockedBy"}
    example = read_json_strict(EXAMPLE)
    jsonschema.validate(example, JUDGE_OUTPUT_SCHEMA)
    assert parse_judge_output(example).result == "uncertain"
    for bad in ({**example, "result": "maybe"}, {**example, "extra": 1}, {**example, "refs": [{"obs": "a"}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, JUDGE_OUTPUT_SCHEMA)
        with pytest.raises(InputError):
            parse_judge_output(bad)


REPLY = {
    "critique": "The reply quotes the 300 dollar fee the pet-policy tool returned.",
    "refs": [{"obs": "m3", "path": "output.content", "value": "300 dollars per pet"}],
    "assumptions": [], "result": "pass", "confidence": 1, "blockedBy": None,
}


def test_reply_becomes_the_stored_verdict() -> None:
    verdict = to_verdict(parse_judge_output(json.dumps(REPLY)), "all_responses_substantiated", "t-1")
    assert canonical_line(verdict.to_json_obj()) == canonical_line({
        "criterionId": "all_responses_substantiated", "traceId": "t-1", "result": "pass", "confidence": 1.0,
        "critique": REPLY["critique"], "refs": REPLY["refs"], "assumptions": []})


@pytest.mark.parametrize(("reply", "path", "words"), [
    ("{not json", None, "reply is not JSON"),
    (json.dumps({**REPLY, "result": "uncertain"}), "blockedBy", "required when result is 'uncertain'"),
    (json.dumps({k: v for k, v in REPLY.items() if k != "critique"}), "critique", "required field is missing"),
    (json.dumps({**REPLY, "confidence": 1.5}), "confidence", "less than or equal to 1"),
])
def test_bad_reply_names_the_field(reply: str, path: str | None, words: str) -> None:
    with pytest.raises(InputError) as info:
        parse_judge_output(reply)
    assert info.value.path == path and words in info.value.message


@pytest.mark.parametrize("left_out", [("blockedBy",), ("assumptions",), ("blockedBy", "assumptions")])
def test_a_pass_or_fail_reply_without_blocked_by_or_assumptions_is_a_verdict(left_out: tuple[str, ...]) -> None:
    """The seed requires blockedBy only on uncertain: a JSON-object-mode reply that omits a null field is valid."""
    for result in ("pass", "fail"):
        reply = {k: v for k, v in {**REPLY, "result": result}.items() if k not in left_out}
        verdict = to_verdict(parse_judge_output(json.dumps(reply)), "c", "t-1")
        assert verdict.result == result and verdict.blocked_by is None and verdict.assumptions == []
    with pytest.raises(InputError, match="required when result is 'uncertain'"):
        parse_judge_output(json.dumps({k: v for k, v in {**REPLY, "result": "uncertain"}.items()
                                       if k not in left_out}))



@pytest.mark.parametrize(("reply", "body"), [
    ('```json\n{"a": 1}\n```', '{"a": 1}'),       # one fence around the whole reply: unwrapped
    ('```\n{"a": 1}\n```', '{"a": 1}'),
    ('  {"a": 1}  ', '{"a": 1}'),
    ('Here: ```json {"a": 1}```', 'Here: ```json {"a": 1}```'),  # text around it: left for the parser to refuse
    ('```{"a": 1}``` and ```{"b": 2}```', '```{"a": 1}``` and ```{"b": 2}```'),
])
def test_a_reply_wrapped_whole_in_one_fence_is_unwrapped_for_every_parser(reply: str, body: str) -> None:
    from evalkit.judge import reply_body
    from evalkit.judge.calls import parse_output
    from evalkit.judge.verification import parse_verifier_output

    assert reply_body(reply) == body
    verifier = json.dumps({"assessment": "the ref shows it", "supported": True, "blockedBy": None})
    assert parse_verifier_output(f"```json\n{verifier}\n```")["supported"] is True
    judge = json.dumps({"critique": "c", "refs": [{"obs": "t", "path": "output", "value": "x"}], "result": "pass",
                        "confidence": 0.9})
    assert parse_output(f"```\n{judge}\n```")["result"] == "pass"
