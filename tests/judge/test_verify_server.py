"""`evalkit judge run` against a loopback OpenAI-compatible server: a reply without blockedBy is a verdict, and the
independent verifier downgrades a fail whose ref resolves but does not support it (refs alone keep it)."""

from __future__ import annotations

import json

import pytest

from evalkit.cli.main import main
from tests.judge.servers import JudgeServer
from tests.judge.traces import leasing_trace, write_jsonl

SPEC = """\
id: all_responses_substantiated
criterion: Every factual statement the assistant makes is backed by a tool output or the system prompt.
pass: Every factual claim can be traced to a tool output, the system prompt or the user's words.
fail: At least one reply states a fee, date or policy that nothing in the trace supports.
"""


def judge_or_verify(messages):
    """The judge says fail, citing the tool's fee (a ref that resolves); the verifier finds the leap."""
    if messages[0]["content"].startswith("You are a verifier"):
        return json.dumps({"assessment": "The cited tool output gives 300 dollars per pet and so does the reply: "
                           "it shows the fee is substantiated, not invented.", "supported": False,
                           "blockedBy": {"kind": "factual-intent", "text": "that the reply's fee is unsupported"}})
    return json.dumps({"critique": "The reply states a pet fee of 300 dollars per pet.",   # no blockedBy at all
                       "refs": [{"obs": "m2", "path": "output", "value": "300 dollars per pet"}],
                       "result": "fail", "confidence": 0.9})


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    traces = write_jsonl(tmp_path / "traces.jsonl", [leasing_trace("t-1").to_json_obj()])
    spec = tmp_path / "judge.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    server = JudgeServer(script=judge_or_verify).start()
    yield traces, spec, server
    server.stop()


def _run(capsys, traces, spec, out, server, *more):
    code = main(["judge", "run", "--spec", str(spec), "--traces", str(traces), "--out", str(out), "--provider",
                 "openai", "--model", "local-judge", "--base-url", f"{server.url}/v1", "--no-progress", *more])
    return code, capsys.readouterr()


def test_refs_alone_keep_a_fail_whose_ref_resolves(files, tmp_path, capsys):
    traces, spec, server = files
    out = tmp_path / "refs" / "verdicts.jsonl"
    code, printed = _run(capsys, traces, spec, out, server, "--verify", "refs")
    [verdict] = [json.loads(line) for line in out.read_text().splitlines()]
    assert code == 0 and verdict["result"] == "fail" and verdict["verifiedBy"] == "refs"  # no blockedBy: valid
    assert "warning: judge spec all_responses_substantiated: no clear pass example" in printed.err
    assert len(server.requests) == 1


def test_the_llm_verifier_downgrades_the_fail_and_records_who_and_why(files, tmp_path, capsys):
    traces, spec, server = files
    out = tmp_path / "llm" / "verdicts.jsonl"
    code, printed = _run(capsys, traces, spec, out, server)                  # llm is the default for openai
    [verdict] = [json.loads(line) for line in out.read_text().splitlines()]
    assert code == 0 and verdict["result"] == "uncertain"                     # never flipped to pass
    assert verdict["verifiedBy"] == "llm openai/local-judge" and verdict["independentVerify"] is True
    assert verdict["blockedBy"] == {"kind": "factual-intent", "text": "that the reply's fee is unsupported"}
    assert "substantiated, not invented" in verdict["verifyReason"]
    assert "1 downgraded to uncertain" in printed.out and "verifications:" in printed.out
    [record] = [json.loads(line) for line in out.with_name("verdicts.verify.jsonl").read_text().splitlines()]
    assert (record["was"], record["result"], record["supported"], record["model"]) == (
        "fail", "uncertain", False, "local-judge")
    assert record["inputTokens"] > 0                                          # counted, as the judge's call is
    [run] = [json.loads(line) for line in out.with_name("verdicts.runs.jsonl").read_text().splitlines()]
    assert run["result"] == "fail"                                            # what the judge itself answered
    assert len(server.requests) == 2 and server.requests[1][1]["model"] == "local-judge"
    again_code, _ = _run(capsys, traces, spec, out, server)                   # journals answer a rerun
    assert again_code == 0 and len(server.requests) == 2
    other = tmp_path / "other" / "verdicts.jsonl"
    _run(capsys, traces, spec, other, server, "--verifier-model", "bigger-verifier")
    assert server.requests[-1][1]["model"] == "bigger-verifier"
