"""The runner: kill -9 and resume, repeats and their canonical verdict, the budget, costs, ordering."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evalkit.contracts.judge import JudgeOutput
from evalkit.contracts.verdict import BlockedBy, CriterionVerdict
from evalkit.errors import InputError
from evalkit.judge.cost import PriceTable
from evalkit.judge.output import to_verdict
from evalkit.judge.providers import ProviderReply, ScriptedProvider
from evalkit.judge.providers.tokens import TokenCounter
from evalkit.judge.runner import run_coroutine, run_judge, verdict_obj
from tests.judge.servers import JudgeServer, judge_output, judge_prompt

ROOT = Path(__file__).resolve().parents[2]


def _read(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def _by_expect(messages, schema, index):
    text = messages[1]["content"]
    return json.dumps(judge_output(text.split("expect=")[1].split()[0], "x"))


RUNNER = textwrap.dedent("""
    import os, sys
    from evalkit.contracts.judge import JudgePin
    from evalkit.judge.providers import make_provider
    from evalkit.judge.runner import run_judge
    from tests.judge.servers import judge_prompt
    url, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    prompts = (judge_prompt(f"t{i:04d}", "fail" if i % 3 == 0 else "pass") for i in range(n))
    provider = make_provider(JudgePin(provider="openai", model="gpt-4o-mini"), base_url=url)
    print(run_judge(prompts, provider, out=out, concurrency=4, progress=False).describe())
""")


@pytest.mark.slow
def test_kill_9_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path, monkeypatch):
    server = JudgeServer(latency=0.05).start()
    script = tmp_path / "run_judge.py"
    script.write_text(RUNNER)
    out = tmp_path / "verdicts.jsonl"
    journal = tmp_path / "verdicts.journal.jsonl"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "PYTHONPATH": str(ROOT)}
    args = [sys.executable, str(script), server.url + "/v1", str(out), "240"]
    try:
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if journal.exists() and journal.read_text().count("\n") > 20:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        assert not out.exists()  # killed before writing outputs
        journaled = len(journal.read_text().splitlines()) - 1  # the first line is the journal's header
        assert 20 <= journaled < 240
        before = len(server.requests)

        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    finally:
        server.stop()
    verdicts = _read(out)
    assert [v["traceId"] for v in verdicts] == [f"t{i:04d}" for i in range(240)]  # each exactly once, sorted
    assert all(v["result"] == ("fail" if int(v["traceId"][1:]) % 3 == 0 else "pass") for v in verdicts)
    assert f"{journaled} resumed" in done.stdout
    # The rerun asked only for what the journal did not hold.
    assert len(server.requests) - before == 240 - journaled
    assert len(_read(tmp_path / "verdicts.runs.jsonl")) == 240


def test_journal_of_another_model_is_refused(tmp_path):
    out = tmp_path / "v.jsonl"
    run_judge([judge_prompt("t1")], ScriptedProvider(_by_expect, model="a"), out=out, progress=False)
    with pytest.raises(InputError, match="another judge"):
        run_judge([judge_prompt("t1")], ScriptedProvider(_by_expect, model="b"), out=out, progress=False)


def test_changed_prompt_is_judged_again_not_resumed(tmp_path):
    out = tmp_path / "v.jsonl"
    run_judge([judge_prompt("t1", "pass")], ScriptedProvider(_by_expect), out=out, progress=False)
    provider = ScriptedProvider(_by_expect)
    summary = run_judge([judge_prompt("t1", "fail")], provider, out=out, progress=False)
    assert summary.resumed == 0 and len(provider.calls) == 1
    assert [v["result"] for v in _read(out)] == ["fail"]


def test_repeats_canonical_verdict_pass_rate_and_spread(tmp_path):
    # Per trace, the results of repeats 0..3: t1 3 pass 1 fail, t2 2-2 tie, t3 all uncertain, t4 all errors.
    plan = {"t1": ["pass", "fail", "pass", "pass"], "t2": ["fail", "pass", "pass", "fail"],
            "t3": ["uncertain"] * 4, "t4": ["error"] * 4}
    seen: dict[str, int] = {}

    def script(messages, schema, index):
        trace = messages[1]["content"].split("item=")[1].split()[0]
        if trace == "t4":
            return "not json"  # every repeat, and its one correction
        n = seen.get(trace, 0)
        seen[trace] = n + 1
        result = plan[trace][n]
        return json.dumps(judge_output(result, f"{trace} repeat {n}"))

    out = tmp_path / "v.jsonl"
    summary = run_judge([judge_prompt(t) for t in plan], ScriptedProvider(script), out=out, repeats=4,
                        concurrency=1, progress=False)
    verdicts = {v["traceId"]: v for v in _read(out)}
    assert verdicts["t1"]["result"] == "pass" and verdicts["t1"]["critique"] == "Checked t1 repeat 0 against the criterion."
    assert verdicts["t2"]["result"] == "uncertain"
    assert verdicts["t2"]["blockedBy"] == {"kind": "normative", "text": "repeats disagree: 2 pass, 2 fail of 4"}
    assert verdicts["t3"]["result"] == "uncertain" and verdicts["t3"]["blockedBy"]["text"] == "criterion unclear"
    assert "t4" not in verdicts and summary.verdicts == 3
    stats = {s["traceId"]: s for s in _read(tmp_path / "v.repeats.jsonl")}
    assert stats["t1"]["passRate"] == 0.75 and stats["t1"]["spread"] == pytest.approx(0.4330, abs=1e-4)
    assert stats["t2"]["spread"] == 0.5 and stats["t3"]["passRate"] is None and stats["t4"]["errors"] == 4
    assert len(_read(tmp_path / "v.runs.jsonl")) == 16
    assert summary.repeat_stats.disagreeing == 2


def test_budget_reserves_each_call_and_ends_within_one_call_of_it(tmp_path):
    """Calls in flight count against the budget: four slots do not start four calls a budget of 3.5 pays."""
    prompts = [judge_prompt(f"t{i}") for i in range(10)]
    tokens = run_coroutine(TokenCounter().count(prompts[0].messages, prompts[0].schema)).tokens
    per_call = tokens * 1_000.0 / 1_000_000  # the estimate and the real cost agree: no output price
    prices = PriceTable({"priced": (1_000.0, 0.0)})
    provider = ScriptedProvider(_by_expect, model="priced", tokens=(tokens, 20))
    budget = 3.5 * per_call
    summary = run_judge(prompts, provider, out=tmp_path / "v.jsonl", max_cost=budget, prices=prices,
                        concurrency=4, progress=False)
    assert len(provider.calls) == 3 and summary.not_run == 7
    assert summary.cost_usd <= budget and budget - summary.cost_usd < per_call
    assert f"budget of ${budget:g} reached" in summary.stopped
    assert len(_read(tmp_path / "v.jsonl")) == 3
    # A higher budget finishes the rest from the journal, calling only for the 7 left.
    more = ScriptedProvider(_by_expect, model="priced", tokens=(tokens, 20))
    summary = run_judge(prompts, more, out=tmp_path / "v.jsonl", max_cost=5, prices=prices, progress=False)
    assert len(more.calls) == 7 and summary.resumed == 3 and len(_read(tmp_path / "v.jsonl")) == 10


def test_unknown_price_is_unknown_not_zero(tmp_path):
    with pytest.raises(InputError, match="needs a price for model 'my-local-model'"):
        run_judge([judge_prompt("t1")], ScriptedProvider([]), out=tmp_path / "v.jsonl", max_cost=1,
                  progress=False) if False else run_judge(
            [judge_prompt("t1")], ScriptedProvider([], model="my-local-model"), out=tmp_path / "v.jsonl",
            max_cost=1, progress=False)
    summary = run_judge([judge_prompt("t1")], ScriptedProvider(_by_expect, model="my-local-model"),
                        out=tmp_path / "v.jsonl", progress=False)
    [run] = _read(tmp_path / "v.runs.jsonl")
    assert run["costUsd"] is None and summary.unknown_cost_calls == 1
    assert "unknown for 1 calls" in summary.describe()
    table = tmp_path / "prices.yaml"
    table.write_text("models:\n  my-local-model: {input: 0, output: 0}\n")
    assert PriceTable.load(table).cost("my-local-model", 10, 10) == 0.0
    table.write_text("models:\n  m: {input: -1, output: 0}\n")
    with pytest.raises(InputError, match=r"prices.yaml: models.m.input: -1 is not a non-negative price"):
        PriceTable.load(table)


def test_pre_verdict_is_stored_without_a_call(tmp_path):
    blocked = CriterionVerdict(criterion_id="grounded-policy", trace_id="t1", result="uncertain", confidence=None,
                               critique=None, blocked_by=BlockedBy(kind="scope", text="term 'refund' unbound"))
    provider = ScriptedProvider(_by_expect)
    summary = run_judge([judge_prompt("t1", pre_verdict=blocked), judge_prompt("t2")], provider,
                        out=tmp_path / "v.jsonl", progress=False)
    assert len(provider.calls) == 1 and summary.without_call == 1
    assert _read(tmp_path / "v.jsonl")[0] == blocked.to_json_obj()


def test_output_is_sorted_and_byte_identical_whatever_the_completion_order(tmp_path):
    class Jittery(ScriptedProvider):
        def __init__(self, seed):
            super().__init__(_by_expect)
            self.seed = seed

        async def complete(self, messages, schema):
            await asyncio.sleep(((hash(messages[1]["content"]) + self.seed) % 7) / 1000)
            return await super().complete(messages, schema)

    prompts = [judge_prompt(f"t{i}", "fail" if i % 2 else "pass", criterion=c) for i in range(30) for c in "ba"]
    run_judge(prompts, Jittery(1), out=tmp_path / "1.jsonl", concurrency=8, progress=False)
    run_judge(list(reversed(prompts)), Jittery(5), out=tmp_path / "2.jsonl", concurrency=8, progress=False)
    assert (tmp_path / "1.jsonl").read_bytes() == (tmp_path / "2.jsonl").read_bytes()
    keys = [(v["criterionId"], v["traceId"]) for v in _read(tmp_path / "1.jsonl")]
    assert keys == sorted(keys) and len(keys) == 60


def test_prompt_given_twice_is_an_error_and_the_journal_keeps_every_call(tmp_path):
    prompts = [judge_prompt("t0"), judge_prompt("t1"), judge_prompt("t1")]
    with pytest.raises(InputError, match="criterion 'grounded-policy' on trace 't1' was given twice"):
        run_judge(prompts, ScriptedProvider(_by_expect), out=tmp_path / "v.jsonl", progress=False)
    assert not (tmp_path / "v.jsonl").exists()
    # The journal's last lines go to disk with the outputs; when those cannot be written they still go.
    records = [r for r in _read(tmp_path / "v.journal.jsonl") if "judgeJournal" not in r]
    assert sorted(r["traceId"] for r in records) == ["t0", "t1", "t1"]


def test_fast_verdict_equals_to_verdict():
    for result in ("pass", "uncertain"):
        output = JudgeOutput.model_validate(judge_output(result, "x") | {"confidence": 1,
                                            "refs": [{"obs": "o1", "path": "output", "value": "v"}]})
        assert verdict_obj(output.to_json_obj(), "c", "t") == to_verdict(output, "c", "t").to_json_obj()


def test_scripted_provider_reports_tokens(tmp_path):
    provider = ScriptedProvider([ProviderReply(json.dumps(judge_output("pass", "x")), 7, None, "scripted")])
    summary = run_judge([judge_prompt("t1")], provider, out=tmp_path / "v.jsonl", progress=False)
    [run] = _read(tmp_path / "v.runs.jsonl")
    assert run["inputTokens"] == 7 and run["outputTokens"] is None and run["costUsd"] is None
    assert summary.input_tokens == 7


def test_journal_cut_off_by_a_kill_mid_write_is_dropped_and_the_item_judged_again(tmp_path):
    out = tmp_path / "v.jsonl"
    run_judge([judge_prompt("t1"), judge_prompt("t2")], ScriptedProvider(_by_expect), out=out, progress=False)
    journal = tmp_path / "v.journal.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])  # the last record half-written
    provider = ScriptedProvider(_by_expect)
    summary = run_judge([judge_prompt("t1"), judge_prompt("t2")], provider, out=out, progress=False)
    assert summary.resumed == 1 and len(provider.calls) == 1
    assert [v["traceId"] for v in _read(out)] == ["t1", "t2"]
    assert all(line.endswith(b"\n") for line in journal.read_bytes().splitlines(keepends=True))
    journal.write_bytes(journal.read_bytes() + b"garbage\n")
    with pytest.raises(InputError, match=r"v.journal.jsonl:4"):
        run_judge([judge_prompt("t1")], ScriptedProvider(_by_expect), out=out, progress=False)


def test_each_slot_s_first_call_leaves_before_the_next_body_is_rendered(tmp_path):
    """At the start a slot's first call goes out as soon as its body is rendered: 64 slots used to wait
    until all 64 bodies were rendered (and all their sockets opened) before the first request left."""
    events: list[tuple[str, str]] = []

    class Rendering(ScriptedProvider):
        def prepare(self, messages, schema):
            events.append(("render", messages[1]["content"]))
            return "body"

        async def complete(self, messages, schema, *, prepared=None):
            events.append(("call", messages[1]["content"]))
            await asyncio.sleep(0.01)
            return await super().complete(messages, schema)

    prompts = [judge_prompt(f"t{i}") for i in range(12)]
    summary = run_judge(prompts, Rendering(_by_expect), out=tmp_path / "v.jsonl", concurrency=4, progress=False)
    assert summary.verdicts == 12
    first = events[:8]  # the four slots' first units: rendered, called, rendered, called...
    assert [kind for kind, _ in first] == ["render", "call"] * 4
    assert [text for _, text in first[0::2]] == [text for _, text in first[1::2]]
    assert sorted(kind for kind, _ in events) == ["call"] * 12 + ["render"] * 12


def test_a_complete_final_line_the_strict_reader_refuses_is_an_error_as_in_every_store(tmp_path):
    # one line policy for stores and journals: a duplicate key is an error, never a line "cut off"
    out = tmp_path / "v.jsonl"
    run_judge([judge_prompt("t1")], ScriptedProvider(_by_expect), out=out, progress=False)
    journal = tmp_path / "v.journal.jsonl"
    journal.write_bytes(journal.read_bytes() + b'{"b":1,"b":2}')
    with pytest.raises(InputError, match=r"v.journal.jsonl"):
        run_judge([judge_prompt("t1")], ScriptedProvider(_by_expect), out=out, progress=False)


def test_the_spread_of_repeats_counts_answers_grounding_downgraded(tmp_path):
    """fail then pass, neither citing a ref that resolves: both verdicts become uncertain, but the judge
    disagreed with itself, and the repeats file says so (spread 0.5, not null)."""
    from evalkit.judge import verifier
    from tests.judge.traces import leasing_trace

    trace = leasing_trace("t1")
    answers = [json.dumps(judge_output(result, "t1")) for result in ("fail", "pass")]
    prompt = judge_prompt("t1")._replace(trace_id="t1")
    summary = run_judge([prompt], ScriptedProvider(answers), out=tmp_path / "v.jsonl", repeats=2, concurrency=1,
                        verify=verifier({"t1": trace}), progress=False)
    [stats] = _read(tmp_path / "v.repeats.jsonl")
    assert (stats["pass"], stats["fail"], stats["uncertain"]) == (0, 0, 2)
    assert stats["spread"] == 0.5 and stats["passRate"] == 0.5 and stats["downgraded"] == 2
    assert summary.repeat_stats.disagreeing == 1
