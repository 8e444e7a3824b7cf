"""The LLM as a second coder: one judge per ratified mode, agreement per mode, only agreeing modes offered."""

from __future__ import annotations

import json
import re

from evalkit.analysis import code_with_llm, coder_agreement, mode_specs
from evalkit.contracts import CriterionVerdict, Taxonomy
from evalkit.judge import ScriptedProvider, build_prompt
from tests.analysis.analysis_builders import make_trace, note

TAXONOMY = Taxonomy.model_validate({"subject": "shop", "version": 1, "modes": [
    {"id": "made-up-policy", "name": "Made-up policy", "definition": "The answer states a policy no article holds.",
     "include": ["a time limit or fee the KB does not state"], "exclude": ["a policy quoted from the KB"]},
    {"id": "rude-tone", "name": "Rude tone", "definition": "The answer is rude."}]})


def _verdict(mode, trace_id, result):
    fields = {"criterionId": mode, "traceId": trace_id, "result": result, "confidence": 0.9, "critique": "c"}
    if result == "uncertain":
        fields["blockedBy"] = {"kind": "scope", "text": "unclear"}
    return CriterionVerdict.model_validate(fields)


def test_each_mode_is_a_judge_shown_its_rules_and_never_the_trace_metadata():
    [policy, _] = mode_specs(TAXONOMY)
    trace = make_trace("t1", metadata={"injected_failures": ["made-up-policy"]})
    system, user = (m["content"] for m in build_prompt(policy, trace).messages)
    assert "Definition: The answer states a policy no article holds." in system
    assert "Counts as Made-up policy: a time limit or fee the KB does not state" in system
    assert "Does not count: a policy quoted from the KB" in system
    assert "FAIL: The trace shows Made-up policy" in system
    assert "injected_failures" not in user


def test_agreement_per_mode_has_kappa_an_interval_and_the_confusion_and_offers_only_modes_that_clear_the_bar():
    labels, verdicts = [], []
    for i in range(40):
        tid = f"t{i:02d}"
        shows = i < 8
        labels.append(note(tid, "fail" if shows else "pass", ("made-up-policy",) if shows else (), minute=i))
        verdicts.append(_verdict("made-up-policy", tid, "fail" if shows else "pass"))
        verdicts.append(_verdict("rude-tone", tid, "fail" if i % 3 == 0 else "pass"))  # the person saw none
    verdicts[-1] = _verdict("rude-tone", "t39", "uncertain")
    labels.append(note("t40", "defer", minute=41))
    result = coder_agreement(labels, verdicts, TAXONOMY)
    policy, rude = result.modes
    assert result.reviewed == 40  # the defer is no coding
    assert (policy.both, policy.human_only, policy.llm_only, policy.neither) == (8, 0, 0, 32)
    assert policy.kappa.kappa == 1.0 and policy.kappa.ci.lo == 1.0 and policy.offered
    assert (rude.both, rude.human_only, rude.llm_only, rude.uncertain) == (0, 0, 13, 1)
    assert not rude.offered and "only 0 trace(s) coded with it by the person" in rude.why
    assert result.offered == ["made-up-policy"]


def test_a_mode_the_llm_codes_half_wrong_is_not_offered():
    labels, verdicts = [], []
    for i in range(30):
        shows = i < 10
        labels.append(note(f"t{i}", "fail" if shows else "pass", ("made-up-policy",) if shows else (), minute=i))
        llm = shows if i % 4 else not shows
        verdicts.append(_verdict("made-up-policy", f"t{i}", "fail" if llm else "pass"))
    [policy, _] = coder_agreement(labels, verdicts, TAXONOMY).modes
    assert policy.kappa.kappa < 0.7 and not policy.offered and "interval lower end" in policy.why


def _coder(shows):
    """A scripted coder: fail exactly where ``shows`` says, citing the trace's output (its refs resolve)."""
    def reply(messages, schema, index):
        mode = re.search(r"You judge one criterion \(([^)]+)\)", messages[0]["content"]).group(1)
        trace_id = re.search(r"^Trace (\S+)", messages[1]["content"], re.M).group(1)
        fail = shows(mode, trace_id)
        return json.dumps({"critique": "Read the answer.", "assumptions": [], "confidence": 0.9, "blockedBy": None,
                           "refs": [{"obs": trace_id, "path": "output", "value": "Your order has shipped."}],
                           "result": "fail" if fail else "pass"})
    return reply


def test_the_llm_codes_reviewed_traces_then_only_offered_modes_on_unreviewed_ones_labelled_llm_coded(tmp_path):
    traces = [make_trace(f"t{i:02d}") for i in range(24)]
    policy_traces = {f"t{i:02d}" for i in range(0, 24, 3)}
    labels = [note(t.id, "fail" if t.id in policy_traces else "pass",
                   ("made-up-policy",) if t.id in policy_traces else (), minute=i) for i, t in enumerate(traces[:18])]
    provider = ScriptedProvider(_coder(lambda mode, tid: tid in policy_traces if mode == "made-up-policy"
                                       else tid.endswith("1")))
    done = code_with_llm(TAXONOMY, traces, labels, provider, tmp_path / "coded", code_unreviewed=True)
    assert done.agreement.offered == ["made-up-policy"]
    assert done.not_offered == ["rude-tone"]
    asked = [(re.search(r"criterion \(([^)]+)\)", m[0]["content"]).group(1)) for m, _ in provider.calls]
    assert asked.count("made-up-policy") == 24 and asked.count("rude-tone") == 18  # never on unreviewed traces
    [rate] = done.rates
    assert (rate.mode, rate.coded, rate.count, rate.source) == ("made-up-policy", 6, 2, "LLM-coded")
    assert rate.ci.lo < 2 / 6 < rate.ci.hi
    assert (tmp_path / "coded" / "unreviewed.jsonl").read_text().count("\n") == 6


def test_a_high_kappa_on_few_traces_is_not_enough_its_interval_must_clear_the_bar():
    labels, verdicts = [], []
    for i in range(12):  # 5 traces with the mode, the LLM adds one: kappa 0.83, interval lower end 0.52
        shows = i < 5
        labels.append(note(f"t{i}", "fail" if shows else "pass", ("made-up-policy",) if shows else (), minute=i))
        verdicts.append(_verdict("made-up-policy", f"t{i}", "fail" if i < 6 else "pass"))
    [policy, _] = coder_agreement(labels, verdicts, TAXONOMY).modes
    assert policy.kappa.kappa > 0.8 and policy.kappa.ci.lo < 0.6
    assert not policy.offered and "interval lower end 0.52 < 0.6" in policy.why


def test_a_mode_prompt_that_cannot_fit_the_models_context_is_an_error_row_and_no_call(tmp_path):
    traces = [make_trace(f"t{i:02d}") for i in range(3)]
    labels = [note(t.id, "pass", minute=i) for i, t in enumerate(traces)]
    provider = ScriptedProvider(_coder(lambda mode, tid: False))
    done = code_with_llm(TAXONOMY, traces, labels, provider, tmp_path / "coded", context_window=200)
    assert provider.calls == []  # every prompt counted against the context before any call
    assert done.summaries[0].errors == 6
    rows = [json.loads(line) for line in (tmp_path / "coded" / "reviewed.runs.jsonl").read_text().splitlines()]
    assert rows and all("does not fit the model's context" in (r.get("error") or "") for r in rows)


def test_traces_left_out_of_the_coding_run_are_not_uncertain_and_an_undecided_mode_says_the_llm_fell_short():
    labels = [note(f"t{i:02d}", "fail", ("made-up-policy",), minute=i) for i in range(6)] + \
        [note(f"t{i:02d}", "pass", minute=i) for i in range(6, 20)]
    verdicts = [_verdict("made-up-policy", f"t{i:02d}", "uncertain") for i in range(10)]  # 10 of 20 coded
    agreement = coder_agreement(labels, verdicts, TAXONOMY, coded=[f"t{i:02d}" for i in range(10)])
    [policy, _] = agreement.modes
    assert agreement.reviewed == 10 and policy.uncertain == 10 and policy.traces == 0
    assert policy.why == "the LLM decided 0 of the 6 trace(s) the person coded with it (needs 5)"
