"""The batch folder's index (batch.json and index.html) and the resume rule, on crafted run folders."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from evalkit import __version__
from evalkit.batch import RunState, plan_subjects, up_to_date, write_index
from evalkit.contracts.summary import ModeHeadline, NotebookRun, RunManifest
from evalkit.io import atomic_write_text, canonical_dumps
from evalkit.subjects import input_digests, load_subject
from tests.recorded_runs import rate, write_run_folder


def _subject(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "traces.jsonl").write_text("{}\n", encoding="utf-8")
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "traces": "traces.jsonl", "notebooks": ["00_overview"]}),
                    encoding="utf-8")
    return path


def test_the_index_has_a_row_per_run_with_its_numbers_error_and_links(tmp_path):
    subjects = [_subject(tmp_path / "s", n) for n in ("alpha", "beta", "gamma", "delta")]
    plan = plan_subjects(subjects)
    out = tmp_path / "batch"
    write_run_folder(out / "alpha", subject="alpha", gate="pass",
                     criteria=[rate("grounded", 0.9, 0.85, 0.94), rate("cites", 0.7, 0.6, 0.8, corrected=False)],
                     modes=[ModeHeadline(mode="dropped", rate=0.1, lo=0.05, hi=0.2, count=10, reviewed=100)])
    write_run_folder(out / "beta", subject="beta", failed="02_judge_calibration", gate="fail")
    (out / "logs").mkdir()
    (out / "logs" / "gamma.log").write_text("error: gamma.yaml: traces: input file not found\n", encoding="utf-8")
    states = {"alpha": RunState("ok", report=True), "beta": RunState("failed", "02_judge_calibration: boom", report=True),
              "gamma": RunState("failed", "gamma.yaml: traces: input file not found"), "delta": RunState("not-run")}
    page = write_index(plan, out, states, at="2026-01-01T00:00:00Z").read_text(encoding="utf-8")
    index = json.loads((out / "batch.json").read_text(encoding="utf-8"))
    assert [(r["name"], r["status"], r["report"]) for r in index["rows"]] == [
        ("alpha", "ok", "alpha/index.html"), ("beta", "failed", "beta/index.html"),
        ("gamma", "failed", None), ("delta", "not-run", None)]
    alpha = index["rows"][0]["headline"]
    assert alpha["gate"] == "pass" and [c["criterion"] for c in alpha["criteria"]] == ["grounded", "cites"]
    assert '<a href="alpha/index.html">alpha</a>' in page and '<a href="logs/gamma.log">log</a>' in page
    assert "90.0%<small>[85.0, 94.0] n=100</small>" in page and '70.0% <span class="obs">obs</span>' in page
    assert 'data-sort="0.100000"' in page  # the failure-mode rate, sortable by value
    assert "gamma.yaml: traces: input file not found" in page and "1 not run yet" in page
    # the page runs its own script and style only, allowed by hash (issue 35)
    policy = page.split('Content-Security-Policy" content="', 1)[1].split('"', 1)[0]
    assert "unsafe" not in policy and "default-src 'none'" in policy and policy.count("'sha256-") == 2


def test_a_finished_run_is_up_to_date_until_an_input_its_time_or_a_value_changes(tmp_path):
    subject = _subject(tmp_path / "s", "alpha")
    run = tmp_path / "batch" / "alpha"
    assert not up_to_date(subject, run, only=(), at="t1")
    run.mkdir(parents=True)
    manifest = RunManifest(subject="alpha", evalkit_version=__version__, run_at="t1", seed=0,
                           inputs=input_digests(load_subject(subject)),
                           notebooks=[NotebookRun(name="00_overview", status="ok")])
    atomic_write_text(run / "run.json", canonical_dumps(manifest.model_dump(mode="json")))
    assert up_to_date(subject, run, only=(), at="t1")
    assert not up_to_date(subject, run, only=(), at="t2")
    (tmp_path / "s" / "traces.jsonl").write_text('{"changed": 1}\n', encoding="utf-8")
    assert not up_to_date(subject, run, only=(), at="t1")


def test_a_failed_run_is_not_up_to_date(tmp_path):
    subject = _subject(tmp_path / "s", "alpha")
    run = tmp_path / "batch" / "alpha"
    run.mkdir(parents=True)
    manifest = RunManifest(subject="alpha", evalkit_version=__version__, run_at=None, seed=0,
                           inputs=input_digests(load_subject(subject)),
                           notebooks=[NotebookRun(name="00_overview", status="failed", error="boom")])
    atomic_write_text(run / "run.json", canonical_dumps(manifest.model_dump(mode="json")))
    assert not up_to_date(subject, run, only=(), at=None)
