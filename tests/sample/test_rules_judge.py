"""The sample's rules judge (the EDD demo's offline judge): it decides what the sample's truth says, from
what the prompt shows, with refs that resolve."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit.contracts.judge import JudgePin, JudgeSpec
from evalkit.judge import build_prompts, make_provider, resolve_ref
from evalkit.judge.output import parse_judge_output
from evalkit.judge.runner import run_coroutine
from evalkit.sample_subject.edd_demo import demo_judge_specs
from evalkit.sample_subject.judge_files import SPECS
from evalkit.sample_subject.judging import truly_passes
from evalkit.traces import load

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


def _judge_all(specs: list[dict]) -> list[tuple[str, object, object]]:
    traces = load(SAMPLE / "traces.jsonl")
    by_id = {t.id: t for t in traces}
    judge = make_provider(JudgePin(provider="sample-rules", model="rules"))    # through the entry point
    out = []
    for spec in specs:
        for prompt in build_prompts(JudgeSpec.model_validate(spec), traces):
            reply = run_coroutine(judge.complete(list(prompt.messages), prompt.schema))
            out.append((spec["id"], by_id[prompt.trace_id], parse_judge_output(reply.text)))
    return out


def test_the_rules_judge_agrees_with_the_samples_truth_on_every_trace_with_refs_that_resolve():
    judged = _judge_all(demo_judge_specs())
    assert len(judged) == 600
    for criterion, trace, output in judged:
        want = "pass" if truly_passes(trace, criterion) else "fail"
        assert output.result == want, (criterion, trace.id, output.critique)
        assert output.refs and all(resolve_ref(trace, ref) for ref in output.refs), (criterion, trace.id)
    fails = sum(o.result == "fail" for _, _, o in judged)
    assert fails == sum(not truly_passes(t, c) for c, t, _ in judged) == 40


def test_without_the_customer_tier_it_abstains_rather_than_guess():
    [escalation] = [s for s in SPECS if s["id"] == "escalation-correct"]   # the sample's spec shows no tier
    judged = _judge_all([escalation])
    assert {o.result for _, _, o in judged} == {"uncertain"}
    assert json.loads(judged[0][2].model_dump_json(by_alias=True))["blockedBy"]["kind"] == "scope"
