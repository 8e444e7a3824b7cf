"""From notes to failure modes: note rules, axial coding as new records, and reading a taxonomy file."""

from __future__ import annotations

import pytest
import yaml
from analysis_builders import note

from evalkit.analysis import (
    Taxonomy,
    append_annotations,
    axial_code,
    check_modes,
    latest,
    modes_for_note,
    read_store,
    read_taxonomy,
    uncoded_fails,
    unknown_modes,
)
from evalkit.errors import InputError

TAXONOMY = Taxonomy.model_validate({
    "subject": "support-agent", "version": 2,
    "modes": [{"id": "hallucinated-policy", "name": "Hallucinated policy", "definition": "made up a rule"},
              {"id": "missed-escalation", "name": "Missed escalation", "definition": "no human"}],
    "noteRules": [{"pattern": r"polic(y|ies)\b.*(wrong|made up)", "mode": "hallucinated-policy"},
                  {"pattern": "never escalated|no hand-?off", "mode": "missed-escalation"}],
})


def test_note_rules_map_notes_to_modes_in_taxonomy_order():
    assert modes_for_note("No HANDOFF, and the policy was made up", TAXONOMY) == [
        "hallucinated-policy", "missed-escalation"]
    assert modes_for_note("all fine", TAXONOMY) == []
    assert modes_for_note(None, TAXONOMY) == []


def test_axial_coding_appends_coded_copies_and_leaves_the_rest(tmp_path):
    store = tmp_path / "a.jsonl"
    open_coded = [note("t1", "fail", text="the refund policy is wrong"), note("t2", "fail", text="odd tone"),
                  note("t3", "pass", text="never escalated but did not need to"),
                  note("t4", "fail", ("missed-escalation",), text="policy made up")]
    append_annotations(store, open_coded)
    coded = axial_code(read_store(store).annotations, TAXONOMY, at="2026-02-01T00:00:00Z")
    assert [(a.trace_id, a.modes, a.at, a.note) for a in coded] == [
        ("t1", ["hallucinated-policy"], "2026-02-01T00:00:00Z", "the refund policy is wrong")]
    append_annotations(store, coded)
    assert [a.modes for a in latest(store)] == [["hallucinated-policy"], [], [], ["missed-escalation"]]
    assert [a.trace_id for a in uncoded_fails(read_store(store).annotations)] == ["t2"]


def test_modes_outside_the_taxonomy_are_found_and_refused():
    labels = [note("t1", "fail", ("hallucinated-policy",)), note("t2", "fail", ("rude-tone", "zany"))]
    assert unknown_modes(labels, TAXONOMY) == ["rude-tone", "zany"]
    with pytest.raises(InputError) as err:
        check_modes(labels, TAXONOMY, file="export.json")
    assert err.value.render().startswith("export.json: annotations[1].modes[0]: unknown failure mode 'rude-tone'")


def test_read_taxonomy_locates_problems(tmp_path):
    path = tmp_path / "failure-modes.yaml"
    doc = TAXONOMY.to_json_obj()
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    assert read_taxonomy(path) == TAXONOMY
    doc["modes"][1]["parent"] = "missed-escalation"
    text = yaml.safe_dump(doc)
    path.write_text(text, encoding="utf-8")
    at = next(i for i, line in enumerate(text.splitlines(), start=1) if "parent: missed-escalation" in line)
    with pytest.raises(InputError) as err:
        read_taxonomy(path)
    assert err.value.render() == (f"{path}:{at}: modes[1].parent: parents form a cycle "
                                  "(missed-escalation -> missed-escalation)")


def test_a_taxonomy_file_is_recognised_by_its_name_or_its_modes_and_its_problems_named(tmp_path, capsys):
    from evalkit.cli.main import main

    minimal = "modes:\n  - id: wrong-fee\n    name: Wrong fee\n"
    for name in ("failure-modes.yaml", "mine.yaml"):
        (tmp_path / name).write_text(minimal)
        assert main(["validate", str(tmp_path / name)]) == 1
        captured = capsys.readouterr()
        out = captured.out + captured.err
        assert "cannot tell which contract" not in out
        assert f"{tmp_path / name}:1: subject: required field is missing" in out
        assert f"{tmp_path / name}:2: modes[0].definition: required field is missing" in out  # the mode's line


def test_reading_a_taxonomy_names_the_file_and_says_what_a_taxonomy_holds(tmp_path):
    path = tmp_path / "modes.yaml"
    path.write_text("- id: wrong-fee\n  name: Wrong fee\n")
    with pytest.raises(InputError) as err:
        read_taxonomy(path)
    rendered = err.value.render()
    assert rendered.startswith(f"{path}:1: this file is not an object (a list of modes? put it under modes:)")
    assert "a failure-mode taxonomy is an object: subject (the subject's name), version" in rendered
