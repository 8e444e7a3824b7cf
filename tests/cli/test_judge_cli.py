"""``evalkit judge run | lint | prompt`` as a user runs them, on files in a tmp dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli.main import main
from evalkit.io import canonical_line
from evalkit.judge import build_prompts, read_judge_specs
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

BOUND_SPEC = SPEC.replace("id: pet-fee-grounded", "id: pet-fee-bound") + "terms:\n  - text: a lease renewal\n"


def _output(result: str, trace_id: str) -> dict:
    value = "300 dollars per pet" if trace_id != "t3" else "500 dollars"
    return {"critique": f"The reply on {trace_id} states the fee; checked against the tool output.",
            "refs": [{"obs": "m2", "path": "output", "value": "300 dollars per pet"}] if value != "500 dollars"
            else [{"obs": "m3", "path": "output.content", "value": "500 dollars"}],
            "assumptions": [], "result": result, "confidence": 0.9,
            "blockedBy": None}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    traces = [leasing_trace("t1"), leasing_trace("t2"), leasing_trace("t3", reply="The pet fee is 500 dollars."),
              leasing_trace("t4", reply="The pet fee is 500 dollars.")]
    paths = {"traces": write_jsonl(tmp_path / "traces.jsonl", [t.to_json_obj() for t in traces])}
    paths["spec"] = tmp_path / "judges.yaml"
    paths["spec"].write_text(SPEC, encoding="utf-8")
    paths["labels"] = write_jsonl(tmp_path / "labels.jsonl", [
        {"traceId": "t1", "criterionId": "pet-fee-grounded", "label": "pass", "split": "test"},
        {"traceId": "t2", "criterionId": "pet-fee-grounded", "label": "pass", "split": "test"},
        {"traceId": "t3", "criterionId": "pet-fee-grounded", "label": "fail", "split": "test"},
        {"traceId": "t4", "criterionId": "pet-fee-grounded", "label": "fail", "split": "test"}])
    # A cassette as a real judge would have recorded it: t1, t2 pass; t3 fail; t4 not recorded.
    prompts = build_prompts(read_judge_specs(paths["spec"])[0], traces[:3])
    entries = []
    for prompt, result in zip(prompts, ("pass", "pass", "fail"), strict=True):
        entries.append({"request": {"messages": list(prompt.messages), "model": "gpt-4o-mini",
                                    "schema": prompt.schema, "temperature": 0.0},
                        "reply": {"inputTokens": 1000, "outputTokens": 80,
                                  "text": json.dumps(_output(result, prompt.trace_id))}})
    paths["cassette"] = write_jsonl(tmp_path / "cassette.jsonl", entries)
    return paths


def _run(files: dict[str, Path], out: Path, *extra: str) -> int:
    return main(["judge", "run", "--spec", str(files["spec"]), "--traces", str(files["traces"]), "--out", str(out),
                 "--provider", "replay", "--cassette", str(files["cassette"]), *extra])


def test_run_from_a_cassette_writes_verdicts_that_calibrate_reads(files, tmp_path, capsys):
    out = tmp_path / "out" / "verdicts.jsonl"
    assert _run(files, out) == 1  # t4 was never recorded: an error row, so exit 1
    printed = capsys.readouterr().out
    assert "4 items: 3 verdicts, 4 calls" in printed and "1 errors" in printed
    assert "pet-fee-grounded: 4 items, 0 cached, 1 errors, 0.0% uncertain" in printed
    verdicts = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(v["traceId"], v["result"]) for v in verdicts] == [("t1", "pass"), ("t2", "pass"), ("t3", "fail")]
    runs = [json.loads(line) for line in out.with_name("verdicts.runs.jsonl").read_text().splitlines()]
    assert [r["traceId"] for r in runs] == ["t1", "t2", "t3", "t4"]
    assert "no reply recorded" in runs[3]["error"] and runs[3]["result"] is None
    assert runs[0]["inputTokens"] == 1000 and runs[0]["model"] == "gpt-4o-mini"

    assert main(["calibrate", "--labels", str(files["labels"]), "--verdicts", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["confusion"]["tp"] == 2 and report["confusion"]["tn"] == 1
    assert report["confusion"]["unjudged"] == 1


def test_rerun_resumes_from_the_journal_and_writes_the_same_bytes(files, tmp_path, capsys):
    out = tmp_path / "verdicts.jsonl"
    _run(files, out)
    first = out.read_bytes()
    capsys.readouterr()
    _run(files, out)
    assert out.read_bytes() == first
    assert "3 resumed" in capsys.readouterr().out  # the error row is asked again, the verdicts are not


def test_missing_key_is_one_line_naming_the_variable_before_any_work(files, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "verdicts.jsonl"
    code = main(["judge", "run", "--spec", str(files["spec"]), "--traces", str(tmp_path / "no-such-traces.jsonl"),
                 "--out", str(out), "--provider", "openai", "--model", "gpt-4o-mini"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == [err.strip()] and "OPENAI_API_KEY is not set" in err
    assert not out.exists()


@pytest.mark.slow
def test_openai_compatible_server_that_refuses_json_schema(files, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    server = JudgeServer(llama_cpp=True).start()
    try:
        out = tmp_path / "verdicts.jsonl"
        code = main(["judge", "run", "--spec", str(files["spec"]), "--traces", str(files["traces"]),
                     "--out", str(out), "--provider", "openai", "--model", "local-model",
                     "--base-url", server.url + "/v1", "--concurrency", "2", "--no-progress"])
    finally:
        server.stop()
    assert code == 0
    runs = [json.loads(line) for line in out.with_name("verdicts.runs.jsonl").read_text().splitlines()]
    assert {r["structuredOutput"] for r in runs} == {"json_object"}
    assert all(r["inputTokens"] > 0 and r["costUsd"] is None for r in runs)  # no price for a local model
    # The fake server cites nothing, so the verifier turns its decided verdicts to uncertain.
    assert {json.loads(line)["result"] for line in out.read_text().splitlines()} == {"uncertain"}
    assert "cost $0.0000 + unknown for" in capsys.readouterr().out


def test_max_cost_needs_a_price_and_prices_file_gives_one(files, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    args = ["judge", "run", "--spec", str(files["spec"]), "--traces", str(files["traces"]),
            "--out", str(tmp_path / "v.jsonl"), "--provider", "openai", "--model", "my-local",
            "--base-url", "http://127.0.0.1:9/v1", "--max-cost", "1"]
    assert main(args) == 1
    assert "--max-cost needs a price for model 'my-local'" in capsys.readouterr().err


def test_lint_names_file_line_and_dead_ref(files, tmp_path, capsys):
    verdicts = write_jsonl(tmp_path / "v.jsonl", [
        {"criterionId": "c", "traceId": "t1", "result": "pass", "confidence": 0.9, "critique": "ok",
         "refs": [{"obs": "m2", "path": "output", "value": "300 dollars per pet"}]},
        {"criterionId": "c", "traceId": "t2", "result": "fail", "confidence": 0.9, "critique": "bad",
         "refs": [{"obs": "m2", "path": "output", "value": "900 dollars"}]},
        {"criterionId": "c", "traceId": "t3", "result": "uncertain", "confidence": 0.1, "critique": "?"}])
    assert main(["judge", "lint", str(verdicts), "--traces", str(files["traces"])]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{verdicts}:2: c on t2: refs[0]: does not resolve")
    assert lines[1].startswith(f"{verdicts}:3: c on t3: blockedBy:")
    assert "3 verdicts, 2 grounding problems" in captured.err


def test_prompt_shows_the_exact_messages_and_the_digest_the_run_records(files, tmp_path, capsys):
    assert main(["judge", "prompt", "--spec", str(files["spec"]), "--trace", "t1",
                 "--traces", str(files["traces"]), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)[0]
    out = tmp_path / "v.jsonl"
    _run(files, out)
    capsys.readouterr()
    run = json.loads(out.with_name("v.runs.jsonl").read_text().splitlines()[0])
    assert shown["digest"] == run["promptDigest"]
    assert [m["role"] for m in shown["messages"]] == ["system", "user"]
    assert main(["judge", "prompt", "--spec", str(files["spec"]), "--trace", "t1",
                 "--traces", str(files["traces"])]) == 0
    text = capsys.readouterr().out
    for heading in ("## 1. Task and criterion", "## 2. Pass and fail definitions", "## 3. Examples",
                    "## 4. Output: critique first"):
        assert heading in text
    assert "300 dollars per pet" in text


def test_unbound_term_is_shown_and_stored_without_a_call(files, tmp_path, capsys):
    files["spec"].write_text(BOUND_SPEC, encoding="utf-8")
    assert main(["judge", "prompt", "--spec", str(files["spec"]), "--trace", "t1",
                 "--traces", str(files["traces"])]) == 0
    assert "no call: a term is unbound" in capsys.readouterr().out
    out = tmp_path / "v.jsonl"
    assert _run(files, out) == 0
    assert "4 decided without a call" in capsys.readouterr().out
    assert all(json.loads(line)["blockedBy"]["text"].startswith("unbound term")
               for line in out.read_text().splitlines())


def test_unknown_trace_and_duplicate_spec_are_located_errors(files, capsys):
    assert main(["judge", "prompt", "--spec", str(files["spec"]), "--trace", "nope",
                 "--traces", str(files["traces"])]) == 1
    assert "trace 'nope' is not in the traces" in capsys.readouterr().err
    assert main(["judge", "prompt", "--spec", str(files["spec"]), "--spec", str(files["spec"]), "--trace", "t1",
                 "--traces", str(files["traces"])]) == 1
    assert "already has a spec" in capsys.readouterr().err


def test_limit_judges_the_first_traces_only(files, tmp_path, capsys):
    out = tmp_path / "v.jsonl"
    assert _run(files, out, "--limit", "2") == 0
    assert [json.loads(line)["traceId"] for line in out.read_text().splitlines()] == ["t1", "t2"]
    assert canonical_line(json.loads(out.read_text().splitlines()[0])) == out.read_text().splitlines(True)[0]
