"""Refs re-resolve against the trace, terms bind before judging, verification only ever downgrades."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.contracts import CriterionVerdict, Ref
from evalkit.judge import bind_terms, lint_verdicts, resolve_ref, verifier, verify_verdict
from evalkit.judge.grounding import VERIFY_MARK, parse_path
from tests.judge.traces import leasing_trace, spec

TRACE = leasing_trace("t-1")


@pytest.mark.parametrize(("obs", "path", "value"), [
    ("t-1", "input", "What is your pet   fee?"),                       # trace root, spaces collapsed
    ("t-1", "observations[2].output.content", "300 dollars"),        # trace root into an observation
    ("m3", "output.content", "The pet fee is 300 dollars per pet."),  # observation id
    ("m1", "input[1].content", "What is your pet fee?"),              # [n] index
    ("m1", "input[0]", "never invent fees,\n dates or policies"),     # a value inside a mapping
    ("getCommunitiesInformation", "output.pet_policy.fee", "300 dollars per pet"),  # name; into JSON text
    ("getCommunitiesInformation", "output", '"max_pets":2'),          # the JSON text itself
    ("assistant", "output.content", "per pet"),                       # a name several observations share
    ("m2", "", "pet policy"),                                         # the whole observation
])
def test_ref_resolves(obs: str, path: str, value: str) -> None:
    resolution = resolve_ref(TRACE, Ref(obs=obs, path=path, value=value))
    assert resolution.resolved, resolution.reason
    assert resolution.reason is None


@pytest.mark.parametrize(("obs", "path", "value", "reason"), [
    ("m9", "output", "fee", "no trace or observation 'm9' in trace t-1"),
    ("m3", "output.text", "fee", "path 'output.text' is not present in m3 (observation id)"),
    ("m1", "input[7].content", "fee", "path 'input[7].content' is not present"),
    ("m3", "output.content", "500 dollars", "value '500 dollars' is not at 'output.content' in m3"),
    ("m3", "output.content", "  ", "the cited value is empty"),
    ("m3", "output..content", "fee", "not dot segments and [n] indexes"),
    ("m3", "output.content", "300 dollars per pet. Pets are free", "is not at"),  # more than is there
    ("m2", "input", "300 dollars", "is not at 'input'"),  # there, but at another path
    ("t-1", "input", "what is your PET fee?", "is not at 'input'"),  # another case: not the exact value
    ("m3", "output.content", "The pet fe", "is not at"),  # cuts a word: not the exact value
    ("m3", "output.content", "et fee is 300", "is not at"),
])
def test_ref_does_not_resolve_and_says_why(obs: str, path: str, value: str, reason: str) -> None:
    resolution = resolve_ref(TRACE, Ref(obs=obs, path=path, value=value))
    assert not resolution
    assert reason in (resolution.reason or "")


def test_parse_path() -> None:
    assert parse_path("input[2].content") == ["input", 2, "content"]
    assert parse_path("[0].a.b[10]") == [0, "a", "b", 10]
    assert parse_path("") == [] and parse_path(".") == []
    with pytest.raises(ValueError):
        parse_path("a[x]")


def test_terms_bind_where_the_judge_looks() -> None:
    judge = spec(terms=["the pet fee", {"text": "a policy lookup", "anyOf": ["Pet Policy"],
                                         "obs": "getCommunitiesInformation"}, "parking fee"])
    bound, scoped, unbound = bind_terms(judge, TRACE)
    assert bound.bound and resolve_ref(TRACE, bound.ref)
    assert scoped.ref == Ref(obs="m2", path="input", value="pet policy")   # as the field writes it: it resolves
    assert resolve_ref(TRACE, scoped.ref)
    assert not unbound.bound and unbound.ref is None


def test_a_term_outside_what_the_judge_sees_is_unbound() -> None:
    only_replies = {"trace": [], "observations": {"types": ["GENERATION"]}, "fields": ["output"]}
    judge = spec(terms=["pet_policy"], input=only_replies)  # only in the tool output the judge is not shown
    assert not bind_terms(judge, TRACE)[0].bound
    assert bind_terms(spec(terms=["pet_policy"]), TRACE)[0].bound


def verdict(result: str, refs: list[Ref] | None, **more: Any) -> CriterionVerdict:
    blocked = {"blocked_by": {"kind": "normative", "text": "x"}} if result == "uncertain" else {}
    return CriterionVerdict(criterion_id="c", trace_id="t-1", result=result, confidence=0.9,
                            critique="The reply states the fee the tool returned.", refs=refs, **blocked, **more)


GOOD = Ref(obs="m3", path="output.content", value="300 dollars per pet")
DEAD = Ref(obs="m3", path="output.content", value="250 dollars per pet")


@pytest.mark.parametrize("result", ["pass", "fail"])
def test_verify_keeps_a_grounded_verdict(result: str) -> None:
    before = verdict(result, [GOOD])
    after = verify_verdict(TRACE, before)
    assert after == before.model_copy(update={"verified_by": "refs"})       # kept, and says who checked it
    assert after.to_json_obj()["verifiedBy"] == "refs" and "verifyReason" not in after.to_json_obj()


@pytest.mark.parametrize("result", ["pass", "fail"])
def test_verify_downgrades_a_dead_ref(result: str) -> None:
    after = verify_verdict(TRACE, verdict(result, [GOOD, DEAD]))
    assert after.result == "uncertain" and after.confidence == 0
    assert after.blocked_by is not None and after.blocked_by.kind == "factual-intent"
    assert "refs[1] does not resolve" in after.blocked_by.text
    assert after.critique is not None
    assert after.critique.startswith("The reply states the fee the tool returned.\n")
    assert f"{VERIFY_MARK} was {result}: refs[1] does not resolve: value '250 dollars per pet'" in after.critique
    assert after.refs == [GOOD, DEAD]  # nothing dropped
    assert after.verified_by == "refs" and after.verify_reason == after.blocked_by.text


@pytest.mark.parametrize("refs", [None, []])
def test_verify_downgrades_a_verdict_with_no_ref(refs: list[Ref] | None) -> None:
    after = verify_verdict(TRACE, verdict("pass", refs))
    assert after.result == "uncertain"
    assert "no ref grounds it" in (after.critique or "")


def test_verify_downgrades_a_decided_verdict_that_carries_a_blocked_by_of_its_own() -> None:
    # Small judges fill every field of the schema: a pass with a blockedBy beside it (seen from a real
    # 135M model); the downgrade's blockedBy replaces it.
    before = verdict("pass", [DEAD], blocked_by={"kind": "normative", "text": "the model's own"})
    after = verify_verdict(TRACE, before)
    assert after.result == "uncertain" and after.blocked_by is not None
    assert after.blocked_by.kind == "factual-intent" and "refs[0] does not resolve" in after.blocked_by.text


def test_verify_leaves_uncertain_alone() -> None:
    before = verdict("uncertain", [DEAD])
    assert verify_verdict(TRACE, before) is before


def test_verifier_hook_finds_the_prompt_trace() -> None:
    class Prompt:
        trace_id = "t-1"
    assert verifier({"t-1": TRACE})(Prompt(), verdict("fail", [DEAD])).result == "uncertain"  # type: ignore[arg-type]


def _refs(draw: st.DrawFn) -> list[Ref]:
    places = [("m3", "output.content", "The pet fee is 300 dollars per pet."), ("m2", "input", "pet policy"),
              ("t-1", "output", "The pet fee is 300 dollars per pet."), ("m1", "input[1].content", "pet fee")]
    refs = []
    for _ in range(draw(st.integers(0, 3))):
        obs, path, text = draw(st.sampled_from(places))
        if draw(st.booleans()):  # a real excerpt, maybe re-spaced and re-cased
            start = draw(st.integers(0, len(text) - 1))
            value = text[start:draw(st.integers(start + 1, len(text)))]
            value = value.upper() if draw(st.booleans()) else value.replace(" ", "  ")
        else:
            value = draw(st.text(min_size=0, max_size=12))
        refs.append(Ref(obs=draw(st.sampled_from([obs, "m2", "nope"])), path=path, value=value))
    return refs


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_verify_never_flips_pass_and_fail(data: st.DataObject) -> None:
    result = data.draw(st.sampled_from(["pass", "fail", "uncertain"]))
    refs = None if data.draw(st.integers(0, 9)) == 0 else _refs(data.draw)
    before = verdict(result, refs)
    after = verify_verdict(TRACE, before)
    assert after.result in (before.result, "uncertain")
    if after.result == before.result:  # untouched but for who verified it
        assert after.model_copy(update={"verified_by": before.verified_by}) == before
        assert after.verified_by in (None, "refs") and after.verify_reason is None
    else:
        assert after.confidence == 0 and VERIFY_MARK in (after.critique or "")
    assert verify_verdict(TRACE, after) == after  # verifying again changes nothing


def test_lint_finds_unrouted_abstains_unsourced_verdicts_and_dead_refs() -> None:
    records = [
        verdict("pass", [GOOD]),
        {"criterionId": "c", "traceId": "t-1", "result": "uncertain", "confidence": 0, "critique": "?"},
        verdict("fail", [GOOD, DEAD]),
        verdict("fail", None),
        {"criterionId": "c", "traceId": "t-404", "result": "pass", "refs": [GOOD.to_json_obj()]},
        {"criterionId": "c", "traceId": "t-1", "result": "pass", "refs": [{"obs": "m3"}]},
    ]
    problems = lint_verdicts(records, [TRACE])
    assert [(p.index, p.field) for p in problems] == [
        (1, "blockedBy"), (2, "refs[1]"), (3, "refs"), (4, "traceId"), (5, "refs[0]")]
    assert "unrouted abstain" in problems[0].message
    assert problems[1].render().startswith("verdicts[2] (c on t-1): refs[1]: does not resolve: value '250")
    assert lint_verdicts(records[:1], {"t-1": TRACE}) == []
