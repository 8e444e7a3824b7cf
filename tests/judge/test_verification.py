"""The independent LLM verifier: downgrade-only, cached and journaled, counted in cost, recorded on the verdict."""

from __future__ import annotations

import json

import pytest

from evalkit.contracts import CriterionVerdict, Ref
from evalkit.errors import CallError
from evalkit.judge import (
    JudgeCache,
    PriceTable,
    ScriptedProvider,
    verifier_prompt,
    verify_run,
    verify_with_llm,
)
from evalkit.judge.runner import run_coroutine
from evalkit.judge.verification import parse_verifier_output
from tests.judge.traces import leasing_trace, spec

TRACE = leasing_trace("t-1")
SPEC = spec()
# The ref resolves (the tool did say 300 dollars per pet), but it does not make the reply unsubstantiated.
LEAP = CriterionVerdict(criterion_id=SPEC.id, trace_id="t-1", result="fail", confidence=0.9,
                        critique="The tool output mentions a fee, so the reply must have invented it.",
                        refs=[Ref(obs="m2", path="output", value="300 dollars per pet")], verified_by="refs")
GROUNDED = LEAP.model_copy(update={"result": "pass", "critique": "The reply's fee is the tool's fee."})


def answer(supported: bool) -> str:
    return json.dumps({"assessment": "The tool gives 300 dollars per pet and the reply says the same; "
                       + ("that is the verdict's claim." if supported else "nothing shows an invented fee."),
                       "supported": supported,
                       "blockedBy": None if supported else {"kind": "factual-intent",
                                                            "text": "that the reply's fee differs from the tool's"}})


def verifier(messages, schema, index):
    return answer("The judge's verdict: PASS" in messages[1]["content"])


def run(verdicts, provider, tmp_path, **kwargs):
    return run_coroutine(verify_with_llm(verdicts, {"t-1": TRACE}, {SPEC.id: SPEC}, provider,
                                       journal=tmp_path / "v.journal.jsonl", **kwargs))


def test_a_fail_whose_ref_resolves_but_proves_nothing_is_downgraded_never_flipped(tmp_path):
    provider = ScriptedProvider(verifier, model="verifier-1")
    (leap, grounded), records, summary = run([LEAP, GROUNDED], provider, tmp_path)
    assert leap.result == "uncertain" and leap.confidence == 0          # downgraded, not turned into a pass
    assert leap.blocked_by.text == "that the reply's fee differs from the tool's"
    assert leap.verified_by == "llm fake/verifier-1" and leap.independent_verify is True
    assert "[verify downgrade] was fail" in leap.critique and leap.refs == LEAP.refs
    assert grounded.result == "pass" and grounded.verified_by == "llm fake/verifier-1"
    assert grounded.verify_reason.startswith("The tool gives 300 dollars")
    assert (summary.checked, summary.kept, summary.downgraded, summary.calls) == (2, 1, 1, 2)
    assert sorted((r.was, r.result, r.supported) for r in records) == [("fail", "uncertain", False),
                                                                       ("pass", "pass", True)]
    # the verifier sees the criterion, the verdict, the critique and each ref as found, never the judge prompt
    user = provider.calls[0][0][1]["content"]
    assert SPEC.criterion in user and "FAIL: " in user and LEAP.critique in user
    assert 'cited: "300 dollars per pet"' in user and "the field reads: " in user and '"max_pets":2' in user


def test_uncertain_verdicts_are_not_sent_and_an_unanswered_one_is_not_verified(tmp_path):
    abstain = LEAP.model_copy(update={"result": "uncertain", "blocked_by": {"kind": "scope", "text": "x"}})
    broken = ScriptedProvider([CallError("HTTP 400: refused")], model="verifier-1")
    (kept, leap), records, summary = run([abstain, LEAP], broken, tmp_path)
    assert kept == abstain and len(broken.calls) == 1
    assert leap.result == "uncertain" and leap.blocked_by.text == "not verified: HTTP 400: refused"
    assert leap.independent_verify is False and summary.not_verified == 1
    assert records[0].supported is None and records[0].error == "HTTP 400: refused"


def test_replies_are_journaled_and_cached_and_counted_in_cost(tmp_path):
    prices = PriceTable.load()
    prices.prices["verifier-1"] = (1.0, 2.0)
    cache = JudgeCache(tmp_path / "cache.sqlite")
    provider = ScriptedProvider(verifier, model="verifier-1", tokens=(1000, 500))
    _, _, first = run([LEAP, GROUNDED], provider, tmp_path, cache=cache, prices=prices)
    assert first.calls == 2 and first.cost_usd == pytest.approx(2 * (1000 * 1.0 + 500 * 2.0) / 1e6)
    journal = [json.loads(line) for line in (tmp_path / "v.journal.jsonl").read_text().splitlines()]
    assert journal[0]["verifierJournal"] == 1 and len(journal) == 3
    again = ScriptedProvider(verifier, model="verifier-1")
    after, _, second = run([LEAP, GROUNDED], again, tmp_path, cache=cache, prices=prices)
    assert again.calls == [] and second.resumed == 2 and after[0].result == "uncertain"
    (tmp_path / "v.journal.jsonl").unlink()                            # the cache answers without the journal
    third = ScriptedProvider(verifier, model="verifier-1")
    _, _, from_cache = run([LEAP, GROUNDED], third, tmp_path, cache=cache, prices=prices)
    assert third.calls == [] and from_cache.cache_hits == 2
    other = ScriptedProvider(verifier, model="verifier-2")             # another verifier is another question
    with pytest.raises(Exception, match="this verifier journal was written by fake/verifier-1"):
        run([LEAP], other, tmp_path)


def _worst_case(prices, verdict) -> float:
    """What one verifier call may cost: its prompt (estimated) and a reply at the token cap."""
    from evalkit.judge import TokenCounter

    prompt = verifier_prompt(verdict, TRACE, SPEC)
    count = run_coroutine(TokenCounter().count(prompt.messages, prompt.schema))
    return prices.cost("verifier-1", count.tokens, 1024)


def test_a_spent_budget_leaves_the_rest_not_verified(tmp_path):
    prices = PriceTable.load()
    prices.prices["verifier-1"] = (1000.0, 1000.0)
    provider = ScriptedProvider(verifier, model="verifier-1")
    budget = round(1.2 * _worst_case(prices, GROUNDED), 4)
    after, _, summary = run([GROUNDED, LEAP], provider, tmp_path, prices=prices, budget=budget, concurrency=1)
    assert summary.calls == 2 and summary.cost_usd <= budget  # the first cost far less than it might have
    after, _, summary = run([GROUNDED, LEAP], provider, tmp_path / "small", prices=prices, budget=0.01,
                            concurrency=1)
    # $0.01 holds no call's worst case: nothing is asked (reading only what was spent, the first call started
    # and spent $0.12 of a $0.01 budget)
    assert summary.calls == 0 and summary.cost_usd == 0 and after[1].result == "uncertain"
    assert "not verified: the budget of $0.01 was spent" in after[1].blocked_by.text
    assert "the next call could cost up to" in after[1].blocked_by.text


def test_the_verifier_reply_must_name_the_gap_when_unsupported():
    with pytest.raises(ValueError, match="blockedBy: required when supported is false"):
        parse_verifier_output(json.dumps({"assessment": "a leap", "supported": False, "blockedBy": None}))
    assert parse_verifier_output(json.dumps({"assessment": "fine", "supported": True}))["supported"] is True


def test_the_prompt_is_deterministic_and_shows_a_dead_ref_as_not_found():
    dead = LEAP.model_copy(update={"refs": [Ref(obs="m2", path="output", value="250 dollars")]})
    one, two = verifier_prompt(dead, TRACE, SPEC), verifier_prompt(dead, TRACE, SPEC)
    assert one == two and one.digest.startswith("sha256:")
    assert "(not found: value '250 dollars' is not at 'output'" in one.messages[1]["content"]


def test_verify_run_rewrites_the_verdicts_file_and_writes_its_records(tmp_path):
    out = tmp_path / "verdicts.jsonl"
    out.write_text("".join(json.dumps(v.to_json_obj()) + "\n" for v in (LEAP, GROUNDED)))
    summary = verify_run(out, {"t-1": TRACE}, {SPEC.id: SPEC}, ScriptedProvider(verifier, model="verifier-1"))
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [v["result"] for v in written] == ["uncertain", "pass"]
    records = [json.loads(line) for line in (tmp_path / "verdicts.verify.jsonl").read_text().splitlines()]
    assert [r["was"] for r in records] == ["fail", "pass"] and summary.downgraded == 1
    assert (tmp_path / "verdicts.verify.journal.jsonl").is_file()


def test_the_refs_check_counts_what_it_downgraded_before_the_llm_verifier(tmp_path):
    """A small model citing places its trace lacks leaves the LLM verifier nothing to check; the count of
    verdicts the refs check downgraded is what says so (the run's closing prints it)."""
    from evalkit.judge import refs_downgrades
    from evalkit.judge.grounding import verify_verdict

    dead = LEAP.model_copy(update={"refs": [Ref(obs="[role]", path="field", value="text")], "verified_by": None})
    verdicts = [verify_verdict(TRACE, dead), verify_verdict(TRACE, GROUNDED.model_copy(update={"verified_by": None})),
                LEAP.model_copy(update={"result": "uncertain", "blocked_by": None})]  # the judge's own abstain
    path = tmp_path / "verdicts.jsonl"
    path.write_text("".join(json.dumps(v.to_json_obj()) + "\n" for v in verdicts), encoding="utf-8")
    assert verdicts[0].result == "uncertain" and verdicts[1].result == "pass"
    assert refs_downgrades(path) == (1, 2)
