"""Error-analysis contracts: annotations, the failure-mode taxonomy and the review export."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from evalkit.contract_files import validate_file
from evalkit.contracts.annotation import Annotation, FailureMode, ReviewExport, Taxonomy
from evalkit.contracts.registry import CONTRACTS, kind_from_filename, kinds_matching
from evalkit.io.canonical import canonical_line
from evalkit.schema import contract_schema

ANNOTATION = {"traceId": "tr-0001", "annotator": "ana", "at": "2026-03-06T09:00:37.000Z", "label": "fail",
              "note": "Looked up the wrong order.", "modes": ["wrong-tool-args"], "firstFailingObs": "tr-0001-o02"}
TAXONOMY = {
    "subject": "support-agent", "version": 1,
    "modes": [
        {"id": "tool-failure", "name": "Tool failure", "definition": "A tool call went wrong.", "examples": []},
        {"id": "wrong-tool-args", "name": "Wrong tool arguments", "definition": "Arguments do not match.",
         "examples": ["ORD-1 looked up as ORD-2"], "parent": "tool-failure"},
    ],
    "noteRules": [{"pattern": "wrong order", "mode": "wrong-tool-args"}],
}


def _with(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def _message(exc: pytest.ExceptionInfo[ValidationError]) -> str:
    return str(exc.value)


def test_annotation_round_trips_byte_identically():
    line = canonical_line(ANNOTATION)
    assert canonical_line(Annotation.model_validate_json(line).to_json_obj()) == line
    minimal = {"traceId": "t", "annotator": "a", "at": "2026-01-01T00:00:00Z", "label": "pass"}
    assert Annotation.model_validate(minimal).to_json_obj() == minimal  # absent modes stay absent
    assert Annotation.model_validate(minimal).modes == []


@pytest.mark.parametrize(("changes", "expected"), [
    ({"label": "maybe"}, "label"),
    ({"at": "last tuesday"}, "not an ISO 8601 timestamp"),
    ({"traceId": ""}, "traceId"),
    ({"modes": ["Wrong Args"]}, "modes.0"),
    ({"modes": ["x", "x"]}, "listed twice"),
    ({"label": "pass"}, "only a fail label names failure modes"),
    ({"label": "defer", "modes": []}, "firstFailingObs: only a fail label has one"),
    ({"score": 3}, "score"),
])
def test_annotation_rules(changes, expected):
    with pytest.raises(ValidationError) as exc:
        Annotation.model_validate(_with(ANNOTATION, **changes))
    assert expected in _message(exc)


def test_taxonomy_round_trips_and_knows_its_mode_ids():
    taxonomy = Taxonomy.model_validate(TAXONOMY)
    assert taxonomy.to_json_obj() == TAXONOMY
    assert taxonomy.mode_ids() == ["tool-failure", "wrong-tool-args"]
    assert FailureMode.model_validate({"id": "a", "name": "A", "definition": "d"}).examples == []


@pytest.mark.parametrize(("mutate", "expected"), [
    (lambda t: t["modes"].append(copy.deepcopy(t["modes"][0])), "modes[2].id: duplicate failure-mode id"),
    (lambda t: t["modes"][1].update(parent="nowhere"), "modes[1].parent: unknown failure mode 'nowhere'"),
    (lambda t: t["modes"][0].update(parent="wrong-tool-args"), "parents form a cycle"),
    (lambda t: t["modes"][0].update(parent="tool-failure"), "tool-failure -> tool-failure"),
    (lambda t: t["noteRules"].append({"pattern": "x", "mode": "ghost"}), "noteRules[1].mode: unknown"),
    (lambda t: t["noteRules"].append({"pattern": "(", "mode": "tool-failure"}), "not a regular expression"),
    (lambda t: t.update(modes=[]), "modes"),
    (lambda t: t["modes"][0].update(id="Tool Failure"), "modes.0.id"),
])
def test_taxonomy_rules(mutate, expected):
    doc = copy.deepcopy(TAXONOMY)
    mutate(doc)
    with pytest.raises(ValidationError) as exc:
        Taxonomy.model_validate(doc)
    assert expected in _message(exc)


def test_review_export_holds_one_annotators_labels():
    export = {"format": "evalkit-review-export", "version": 1, "annotator": "ana", "annotations": [ANNOTATION]}
    assert ReviewExport.model_validate(export).to_json_obj() == export
    for changes, expected in (({"format": "other"}, "format"), ({"version": 2}, "version"),
                              ({"annotator": "ben"}, "annotations[0].annotator: 'ana' is not")):
        with pytest.raises(ValidationError) as exc:
            ReviewExport.model_validate(_with(export, **changes))
        assert expected in _message(exc)


def test_registry_names_and_recognises_the_new_kinds():
    assert CONTRACTS["annotation"] is Annotation
    assert CONTRACTS["taxonomy"] is Taxonomy
    assert CONTRACTS["review-export"] is ReviewExport
    assert kind_from_filename("annotations.jsonl") == "annotation"
    assert kinds_matching(ANNOTATION) == ["annotation"]  # more specific than human-label
    assert kinds_matching(TAXONOMY) == ["taxonomy"]
    assert kinds_matching({"format": "f", "annotator": "a", "annotations": []}) == ["review-export"]
    for kind in ("annotation", "taxonomy", "review-export"):
        names = json.dumps(contract_schema(kind))
        assert "trace_id" not in names and "first_failing_obs" not in names and "note_rules" not in names


def test_validate_file_detects_and_checks_each_kind(tmp_path):
    store = tmp_path / "annotations.jsonl"
    store.write_text(canonical_line(ANNOTATION) + canonical_line(_with(ANNOTATION, label="maybe")), encoding="utf-8")
    kind, count, problems = validate_file(store)
    assert (kind, count) == ("annotation", 2)
    assert [p.render() for p in problems] == [
        f"{store}:2: label: Input should be 'pass', 'fail' or 'defer' (got 'maybe')"]
    taxonomy = tmp_path / "failure-modes.yaml"
    doc = copy.deepcopy(TAXONOMY)
    doc["modes"][1]["parent"] = "ghost"
    text = yaml.safe_dump(doc)
    taxonomy.write_text(text, encoding="utf-8")
    at = next(i for i, line in enumerate(text.splitlines(), start=1) if "parent: ghost" in line)
    kind, count, problems = validate_file(taxonomy)
    assert kind == "taxonomy"
    assert [p.render() for p in problems] == [f"{taxonomy}:{at}: modes[1].parent: unknown failure mode 'ghost'"]
