"""Growing a suite: merge rules, derived cases, and the append-only rule on every write."""

import json

import pytest

from evalkit.contracts.dataset import Dataset, Dimension
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.trace import Trace
from evalkit.io import InputError
from evalkit.suite import (
    AppendOnlyViolation,
    case_id,
    check_dataset,
    derive_cases,
    is_near_duplicate,
    merge,
    new_case,
    outcomes_from_labels,
    read_dataset,
    write_dataset,
)

REFUND = {"intent": "refund_request"}
STATUS = {"intent": "order_status"}


def _suite(*cases, version=1):
    return Dataset(subject="support-agent", version=version, cases=list(cases),
                   dimensions=[Dimension(name="intent", values=["refund_request", "order_status"])])


def test_near_duplicate_is_token_jaccard_at_least_0_8():
    # {where, is, my, order, 42} vs the same plus "now": 5/6 = 0.83 -> near-duplicate.
    assert is_near_duplicate("Where is my order #42?", "WHERE is my order 42 now")
    # 4 shared of 5 distinct tokens: exactly 0.8 counts.
    assert is_near_duplicate("a b c d", "a b c d e")
    # 4 of 6: 0.67 is not.
    assert not is_near_duplicate("a b c d x", "a b c d y")
    # Punctuation and case do not matter; word order neither.
    assert is_near_duplicate("Refund, please: order-7!", "please refund order 7")


def test_merge_skips_existing_ids_drops_near_duplicates_and_bumps_version():
    kept = new_case(REFUND, "I want a refund for the blender in order 17, it broke.", "seed")
    suite = _suite(kept)
    offered = [
        new_case(REFUND, kept.query, "synthetic"),  # same id: already in the suite
        new_case(STATUS, "I want a refund for the blender in order 17, it broke!", "synthetic"),  # near the suite
        new_case(STATUS, "Has my order 99 shipped yet or is it still processing?", "synthetic"),
        new_case(STATUS, "has my order 99 shipped yet, or is it still processing", "synthetic"),  # near the one above
        new_case(REFUND, "The espresso machine leaks; please refund 329.00 USD.", "synthetic"),
    ]
    result = merge(suite, offered)
    assert [c.id for c in result.dataset.cases] == [kept.id, offered[2].id, offered[4].id]
    assert result.dataset.version == 2
    assert [c.id for c in result.already_present] == [kept.id]
    assert [(d.case.id, d.of) for d in result.near_duplicates] == [(offered[1].id, kept.id),
                                                                   (offered[3].id, offered[2].id)]
    assert result.summary() == "2 added, 1 already in the suite, 2 near-duplicates dropped; version 2"
    assert suite.version == 1 and len(suite.cases) == 1  # the input suite is not changed


def test_merge_that_adds_nothing_keeps_the_version():
    kept = new_case(REFUND, "refund my blender", "seed")
    result = merge(_suite(kept, version=4), [new_case(REFUND, "Refund my blender!", "synthetic")])
    assert result.dataset.version == 4 and result.added == []


def test_merge_refuses_a_case_whose_id_is_not_its_content():
    bad = new_case(REFUND, "refund my blender", "seed").model_copy(update={"query": "refund my toaster"})
    with pytest.raises(InputError, match=r"offered\[0\]\.id: case id 'case-[0-9a-f]{8}' does not match"):
        merge(_suite(), [bad])


def _trace(trace_id, inp):
    return Trace(id=trace_id, input=inp, observations=[])


def test_derived_cases_use_the_outcome_tuple_and_the_input_prompt():
    traces = [
        _trace("t1", "Where is order ORD-2026-111111?"),
        _trace("t2", {"prompt": "Refund my blender"}),
        _trace("t3", [{"role": "system", "content": "be nice"}, {"role": "user", "content": "Fix my bill"}]),
        _trace("t4", "never labelled"),
        _trace("t5", {"tool": "no prompt here"}),
    ]
    labels = [HumanLabel(trace_id="t1", label="fail"), HumanLabel(trace_id="t1", label="pass"),
              HumanLabel(trace_id="t2", label="pass"), HumanLabel(trace_id="t3", label="fail"),
              HumanLabel(trace_id="t5", label="fail")]
    derived = derive_cases(traces, outcomes_from_labels(labels))
    assert [(c.origin_trace_id, c.tuple, c.query, c.source) for c in derived.cases] == [
        ("t1", {"outcome": "fail"}, "Where is order ORD-2026-111111?", "derived"),
        ("t2", {"outcome": "pass"}, "Refund my blender", "derived"),
        ("t3", {"outcome": "fail"}, "Fix my bill", "derived"),
    ]
    assert derived.cases[0].id == case_id({"outcome": "fail"}, "Where is order ORD-2026-111111?")
    assert derived.skipped == {"t4": "no outcome (no label or verdict for this trace)",
                               "t5": "its input holds no text prompt"}
    only_fail = derive_cases(traces, outcomes_from_labels(labels), only=["fail"])
    assert [c.origin_trace_id for c in only_fail.cases] == ["t1", "t3"]
    assert only_fail.skipped["t2"] == "outcome 'pass' not selected"


def test_write_is_canonical_and_a_write_that_loses_cases_is_refused(tmp_path):
    path = tmp_path / "dataset.json"
    a = new_case(REFUND, "refund my blender", "seed")
    b = new_case(STATUS, "where is order 5", "seed")
    c = new_case(STATUS, "has order 6 shipped", "synthetic")
    write_dataset(path, _suite(a, b, c))
    before = path.read_bytes()
    assert before.decode().endswith("}\n") and json.loads(before)["cases"][0]["id"] == a.id
    with pytest.raises(AppendOnlyViolation) as err:
        write_dataset(path, _suite(b, version=2))
    assert f"would lose 2 case(s) the file has: {a.id}, {c.id}" in str(err.value)
    assert str(path) in str(err.value)
    assert path.read_bytes() == before  # nothing written
    edited = b.model_copy(update={"rationale": "rewritten"})
    with pytest.raises(AppendOnlyViolation, match=f"would rewrite 1 case\\(s\\) the file has: {b.id}"):
        write_dataset(path, _suite(a, edited, c, version=2))
    with pytest.raises(AppendOnlyViolation, match="version 0 is below the file's 1"):
        write_dataset(path, _suite(a, b, c, version=0))
    grown = merge(read_dataset(path), [new_case(REFUND, "the espresso machine leaks", "synthetic")]).dataset
    write_dataset(path, grown)
    assert [x.id for x in read_dataset(path).cases][:3] == [a.id, b.id, c.id]
    assert read_dataset(path).version == 2
    again = tmp_path / "again.json"
    write_dataset(again, read_dataset(path))
    assert again.read_bytes() == path.read_bytes()


def test_an_unreadable_suite_file_is_never_overwritten(tmp_path):
    path = tmp_path / "dataset.json"
    path.write_text('{"subject": "x", "cases": [], "dimensions": [], "version": "one"}\n')
    with pytest.raises(InputError, match="version"):
        write_dataset(path, _suite())
    assert "one" in path.read_text()


def test_check_finds_duplicate_ids_edited_queries_and_unknown_values(tmp_path):
    a = new_case(REFUND, "refund my blender", "seed")
    obj = _suite(a, version=1).to_json_obj()
    obj["cases"].append(dict(obj["cases"][0]))
    obj["cases"].append({**obj["cases"][0], "query": "refund my toaster"})
    obj["cases"].append({**new_case({"intent": "complaint"}, "you were rude", "seed").to_json_obj()})
    obj["cases"].append(new_case({"outcome": "fail"}, "derived from a trace", "derived").to_json_obj())
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(obj))
    found = check_dataset(path)
    messages = [str(p) for p in found.problems]
    assert found.cases == 5 and found.by_source == {"derived": 1, "seed": 4}
    assert any("cases[1].id: duplicate case id" in m for m in messages)
    assert any("cases[2].id: id" in m and "does not match its tuple and query" in m for m in messages)
    assert any("cases[3].tuple.intent: 'complaint' is not a value of dimension 'intent'" in m for m in messages)
    assert not any("cases[4]" in m for m in messages)  # derived cases carry an outcome, not the dimensions


def test_a_changed_case_set_under_the_same_version_is_refused(tmp_path):
    """The seed's dataset version is bumped on every append: version N names one set of cases."""
    path = tmp_path / "dataset.json"
    a = new_case(REFUND, "refund my blender", "seed")
    b = new_case(STATUS, "where is order 5", "seed")
    write_dataset(path, _suite(a))
    before = path.read_bytes()
    with pytest.raises(AppendOnlyViolation) as err:
        write_dataset(path, _suite(a, b))                      # same version 1, one case more
    assert f"1 case(s) added ({b.id}) under the file's version 1" in str(err.value)
    assert "set version to 2" in str(err.value) and path.read_bytes() == before
    write_dataset(path, _suite(a))                             # the same cases again: fine
    write_dataset(path, _suite(a, b, version=2))
    assert read_dataset(path).version == 2
