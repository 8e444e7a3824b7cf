"""A judge run you can leave running, against loopback OpenAI- and Anthropic-compatible servers through the
official clients: prompts refused before a call when they cannot fit, errors kept and not paid again, a
dead server stopping the run, a budget that holds, an estimate that matches the run, the right model."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest

from evalkit.cli.main import main
from tests.judge.servers import JudgeServer
from tests.judge.traces import leasing_trace, write_jsonl

SPEC = """\
id: pet-fee-grounded
criterion: Every fee the assistant states is backed by a tool output.
pass: Every fee stated appears in a tool output of the trace.
fail: A fee is stated that no tool output contains.
input:
  trace: [input, output]
"""


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """Six traces; t5 has a long reply (a trace too long for a small context)."""
    traces = [leasing_trace(f"t{i}", reply=f"The pet fee is 300 dollars per pet. item=t{i}") for i in range(5)]
    traces.append(leasing_trace("t5", reply="The pet fee is 300 dollars per pet. item=t5 " + "More words. " * 400))
    paths = {"traces": write_jsonl(tmp_path / "traces.jsonl", [t.to_json_obj() for t in traces]),
             "spec": tmp_path / "judges.yaml", "out": tmp_path / "out" / "verdicts.jsonl"}
    paths["spec"].write_text(SPEC, encoding="utf-8")
    return paths


@pytest.fixture
def server():
    server = JudgeServer(tokenizer=True, llama_cpp=True).start()  # as llama-cpp-python's server
    yield server
    server.stop()


def _run(files: dict[str, Path], url: str, *extra: str, provider: str = "openai", model: str = "m") -> int:
    return main(["judge", "run", "--spec", str(files["spec"]), "--traces", str(files["traces"]), "--out",
                 str(files["out"]), "--provider", provider, "--model", model, "--base-url", url, "--no-progress",
                 *extra])


def _items(server: JudgeServer) -> list[str]:
    """The items of the calls the server answered (not those it refused for asking json_schema)."""
    return [re.search(r"item=(\w+)", json.dumps(body))[1] for _, body in server.requests
            if (body.get("response_format") or {}).get("type") != "json_schema"]


def _runs(files: dict[str, Path]) -> list[dict]:
    return [json.loads(line) for line in files["out"].with_name("verdicts.runs.jsonl").read_text().splitlines()]


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")


def test_a_prompt_that_cannot_fit_is_refused_before_any_call_and_judge_prompt_says_so(files, server, capsys):
    server.context = 3000
    assert _run(files, server.url + "/v1", "--context-window", "3000", "--max-tokens", "200") == 1
    assert "t5" not in _items(server) and len(_items(server)) == 5  # never sent
    refused = next(r for r in _runs(files) if r["traceId"] == "t5")
    assert refused["attempts"] == 0 and "does not fit the model's context" in refused["error"]
    assert "server /extras/tokenize/count" in refused["error"]  # counted by the server's own tokenizer
    captured = capsys.readouterr()
    assert "1 too long for the context, refused before calling" in captured.out
    assert "1 does not fit the context, e.g. pet-fee-grounded on t5" in captured.err

    assert main(["judge", "prompt", "--spec", str(files["spec"]), "--traces", str(files["traces"]), "--trace",
                 "t5", "--provider", "openai", "--model", "m", "--base-url", server.url + "/v1",
                 "--context-window", "3000"]) == 0
    shown = capsys.readouterr().out
    assert re.search(r"tokens: \d+ tokens \(server /extras/tokenize/count\) \+ a reply of at most 1024 of a "
                     r"context of 3000: REFUSED", shown)


def test_an_overflow_the_server_reports_is_kept_and_not_asked_again(files, server, capsys):
    """Without a known context, the server's HTTP 400 names it: that item is an error row kept in the journal,
    the later prompts are measured against the size it named, and a rerun pays for neither again."""
    server.faults = {"t0": ["overflow"]}
    server.context = 3000
    cap = ("--concurrency", "1", "--max-tokens", "200")
    assert _run(files, server.url + "/v1", *cap) == 1
    assert server.attempts["t0"] == 1 and "t5" not in server.attempts  # t5 measured against the 3000 named
    err = capsys.readouterr().err
    assert "1 context overflow, e.g. pet-fee-grounded on t0: HTTP 400" in err
    assert "1 does not fit the context, e.g. pet-fee-grounded on t5" in err
    asked = len(server.requests)
    assert _run(files, server.url + "/v1", *cap) == 1
    assert len(server.requests) == asked  # the errored items are not paid for again
    assert "2 kept from an earlier run, not asked again" in capsys.readouterr().out
    server.context = None
    assert _run(files, server.url + "/v1", *cap, "--retry-errors", "--context-window", "100000") == 0
    assert sorted(server.attempts) == ["t0", "t1", "t2", "t3", "t4", "t5"]
    assert len(files["out"].read_text().splitlines()) == 6


@pytest.mark.parametrize("provider,model", [("openai", "m"), ("anthropic", "c")])
def test_a_dead_server_stops_the_run_within_a_few_calls_with_the_cause_on_the_console(files, capsys, provider,
                                                                                     model):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert _run(files, f"http://127.0.0.1:{port}" + ("/v1" if provider == "openai" else ""),
                "--concurrency", "2", provider=provider, model=model) == 1
    out, err = capsys.readouterr()
    calls = int(re.search(r"(\d+) calls", out)[1])
    assert calls <= 8, out
    assert "stopped early: 5 calls in a row failed the same way, the judge's server cannot be reached" in err
    assert "connection, e.g." in err or "run stopped, e.g." in err


def test_max_cost_ends_within_one_call_of_the_budget(files, server, tmp_path, capsys):
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  m: {input: 100, output: 100}\n", encoding="utf-8")  # USD per million tokens
    assert _run(files, server.url + "/v1", "--estimate", "--prices", str(prices), "--max-tokens", "100") == 0
    estimate = capsys.readouterr().out
    high = float(re.search(r"at most \$([\d.]+)", estimate)[1])
    budget = high / 2
    assert _run(files, server.url + "/v1", "--prices", str(prices), "--max-tokens", "100", "--concurrency", "8",
                "--max-cost", f"{budget:.6f}") == 1
    out, err = capsys.readouterr()
    spent = sum(r["costUsd"] or 0 for r in _runs(files))
    one_call = max(r["costUsd"] or 0 for r in _runs(files))
    assert 0 < spent <= budget and budget - spent < 2 * one_call, (spent, budget, one_call)
    assert "not run" in out and f"budget of ${float(f'{budget:.6f}'):g} reached" in err


@pytest.mark.parametrize("provider,model", [("openai", "m"), ("anthropic", "c")])
def test_the_estimate_matches_the_runs_input_tokens_within_ten_percent(files, server, capsys, provider, model):
    url = server.url + ("/v1" if provider == "openai" else "")
    assert _run(files, url, "--estimate", provider=provider, model=model) == 0
    estimate = capsys.readouterr().out
    assert server.requests == []  # no call
    counted = int(re.search(r"in all: 6 calls, input tokens (\d+)", estimate)[1])
    assert _run(files, url, provider=provider, model=model) == 0
    real = sum(r["inputTokens"] for r in _runs(files))
    print(provider, counted, real)
    assert abs(counted - real) <= 0.10 * real, (counted, real)


def test_a_model_the_server_does_not_list_is_warned_of_and_not_priced(files, server, tmp_path, capsys):
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  gpt-4o: {input: 2.5, output: 10}\n", encoding="utf-8")
    assert _run(files, server.url + "/v1", "--prices", str(prices), model="gpt-4o") == 0
    out, err = capsys.readouterr()
    assert "does not list model 'gpt-4o' (it serves 'm', 'c'" in err and "not priced" in err
    assert all(r["costUsd"] is None for r in _runs(files)) and re.search(r"unknown for \d+ calls", out)
    asked = len(server.requests)
    assert _run(files, server.url + "/v1", "--strict-model", model="gpt-4o") == 1
    assert len(server.requests) == asked and "--strict-model" in capsys.readouterr().err


def test_allow_invalid_replies_lets_a_small_models_invalid_replies_pass_but_nothing_else(files, server, capsys):
    server.faults = {"t1": ["not-json"] * 3}  # the first may be spent on the json_schema refusal
    assert _run(files, server.url + "/v1", "--allow-invalid-replies") == 0
    assert "1 invalid reply after the correction, e.g. pet-fee-grounded on t1" in capsys.readouterr().err
    files["out"].with_name("verdicts.journal.jsonl").unlink()  # judged from scratch
    server.faults = {"t2": ["401"] * 10}  # any other error still fails the run
    assert _run(files, server.url + "/v1", "--allow-invalid-replies") == 1
