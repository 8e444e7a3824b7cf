"""The compiled schema validator agrees with jsonschema wherever it is used, and is not used elsewhere."""

from __future__ import annotations

import copy

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.checks.fast_schema import fast_validity
from evalkit.checks.primitives import SchemaConformance
from evalkit.contracts.trace import Trace

SAFE = [
    {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "string", "minLength": 1}}},
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "exclusiveMaximum": 10}},
     "additionalProperties": False},
    {"type": "array", "items": {"type": ["number", "null"]}, "minItems": 1, "maxItems": 3},
    {"anyOf": [{"type": "string", "pattern": "^ORD-\\d+$"}, {"type": "boolean"}]},
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "enum": ["pass", "fail"]},
    {"type": "object", "patternProperties": {"^x-": {"type": "string", "maxLength": 2}},
     "not": {"required": ["forbidden"]}, "minProperties": 1},
    {"oneOf": [{"type": "integer"}, {"type": "number", "maximum": 1}], "description": "one or other"},
    {"const": "yes"},
]
UNSAFE = [
    {"type": "object", "properties": {"a": {"type": "integer", "default": 5}}},  # fastjsonschema fills it in
    {"$ref": "#/$defs/x", "$defs": {"x": {"type": "string"}}},
    {"type": "array", "items": [{"type": "string"}]},  # the tuple form, read differently by the drafts
    {"enum": [1, "a"]},  # true == 1 in Python's eyes
    {"type": "object", "unevaluatedProperties": False},
    {"$schema": "http://json-schema.org/draft-04/schema#", "type": "string"},
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-20, 20) | st.floats(-20, 20, allow_nan=False)
    | st.sampled_from(["", "pass", "fail", "yes", "ORD-12", "ORD-x", "é🧪", "ab"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["answer", "n", "x-a", "x-bb", "forbidden", "other"]), inner, max_size=4),
    max_leaves=12)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(index=st.integers(0, len(SAFE) - 1), document=json_values)
def test_compiled_validity_equals_jsonschema_and_leaves_the_document_alone(index, document):
    schema = SAFE[index]
    valid = fast_validity(schema)
    assert valid is not None
    before = copy.deepcopy(document)
    assert valid(document) == jsonschema.Draft202012Validator(schema).is_valid(document)
    assert document == before


@pytest.mark.parametrize("schema", UNSAFE)
def test_schemas_outside_the_shared_keywords_are_left_to_jsonschema(schema):
    assert fast_validity(schema) is None


def _trace(answer):
    return Trace.model_validate({"id": "t1", "observations": [
        {"id": "o1", "type": "GENERATION", "name": "respond", "output": {"answer": answer}}]})


@pytest.mark.parametrize("schema", [SAFE[0], {**SAFE[0], "properties": {"answer": {"type": "string",
                                                                                      "minLength": 1,
                                                                                      "default": "x"}}}])
def test_schema_conformance_gives_the_same_verdicts_with_or_without_the_compiled_path(schema):
    check = SchemaConformance("c", {"obs": "respond", "path": "output", "schema": schema})
    assert (check.schema.fast_valid is not None) == ("default" not in str(schema))
    good, bad = check.run(_trace("Shipped.")), check.run(_trace(""))
    assert good.result == "pass" and bad.result == "fail"
    assert "output.answer breaks the schema" in bad.critique  # the message is jsonschema's
    check.schema.fast_valid = None
    assert check.run(_trace("Shipped.")) == good and check.run(_trace("")) == bad
