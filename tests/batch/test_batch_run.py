"""The issue's batch, for real: the sample under three judge prompt versions and two seeds with --jobs 2,
killed midway with kill -9 and run again, then its index page opened offline in Chromium."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urljoin

import pytest
import yaml

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "subject.yaml"
AT = "2026-03-01T00:00:00Z"
RUNS = [f"support-agent_{v}_seed-{s}" for v in ("v1", "v2", "v3") for s in (1, 2)]


def _batch_file(tmp_path: Path) -> Path:
    batch = {"name": "prompts-and-seeds", "subjects": [
        {"subject": str(SAMPLE), "only": ["02_judge_calibration"],
         "sweep": {"verdicts": {"v1": "criterion-verdicts.prompt-v1.jsonl", "v2": "criterion-verdicts.prompt-v2.jsonl",
                                "v3": "criterion-verdicts.jsonl"}, "seed": [1, 2]}},
        # A run that fails before its notebooks start: shown failed with its error, the others go on
        {"subject": str(SAMPLE), "name": "misspelt", "only": ["02_judge_calibration"],
         "override": {"02_judge_calibration.methd": "bootstrap"}},
    ]}
    path = tmp_path / "batch.yaml"
    path.write_text(yaml.safe_dump(batch, sort_keys=False), encoding="utf-8")
    return path


def _command(batch: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "evalkit.cli", "batch", str(batch), "--out", str(out), "--jobs", "2", "--at", AT]


def _ok_runs(out: Path) -> list[str]:
    try:
        rows = json.loads((out / "batch.json").read_text(encoding="utf-8"))["rows"]
    except (FileNotFoundError, json.JSONDecodeError):
        return []
    return [r["name"] for r in rows if r["status"] == "ok"]


def _runs_alive(out: Path) -> list[int]:
    """Processes whose command line names the batch folder (the batch's runs)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(out) in cmdline and "evalkit.cli run" in cmdline:
                alive.append(int(entry.name))
    return alive


def test_batch_resumes_after_kill_and_its_index_opens_offline_with_every_link_working(tmp_path, offline_page):
    batch, out = _batch_file(tmp_path), tmp_path / "out"
    first = subprocess.Popen(_command(batch, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 600
    while len(_ok_runs(out)) < 2:
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "two runs did not finish in time"
        time.sleep(0.5)
    finished = _ok_runs(out)
    stamps = {name: (out / name / "run.json").stat().st_mtime_ns for name in finished}
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    time.sleep(2)
    assert _runs_alive(out) == []  # the killed batch took its runs with it

    second = subprocess.run(_command(batch, out), capture_output=True, text=True, timeout=900)
    assert second.returncode == 1, second.stderr  # one run failed
    for name in finished:
        assert f"{name}: up to date (not run again)" in second.stderr
        assert (out / name / "run.json").stat().st_mtime_ns == stamps[name]  # not run again
    assert f"{len(finished)} up to date" in second.stderr
    rows = {r["name"]: r for r in json.loads((out / "batch.json").read_text(encoding="utf-8"))["rows"]}
    assert [n for n in rows if rows[n]["status"] == "ok"] == RUNS
    assert rows["misspelt"]["status"] == "failed" and "has no parameter 'methd'" in rows["misspelt"]["error"]
    assert rows["misspelt"]["report"] is None
    history = [json.loads(line) for line in (out / "history" / "history.jsonl").read_text().splitlines()]
    assert sorted(r["series"] for r in history) == RUNS  # each run recorded once
    assert {r["batch"] for r in history} == {"prompts-and-seeds"}

    page = offline_page
    index = (out / "index.html").as_uri()
    page.goto(index)
    assert page.console_errors == [] and page.page_errors == [] and page.blocked == []
    assert "misspelt" in page.inner_text("#runs") and "has no parameter 'methd'" in page.inner_text("#runs")
    hrefs = page.eval_on_selector_all("#runs a[href]", "els => els.map(e => e.getAttribute('href'))")
    reports = [h for h in hrefs if h.endswith("/index.html")]
    assert sorted(reports) == sorted(f"{n}/index.html" for n in RUNS)
    assert len(hrefs) == len(RUNS) + len(RUNS) + 1 - len(finished)  # reports, logs of runs that ran now
    for href in hrefs:
        page.goto(urljoin(index, href))
        text = page.inner_text("body")
        if href.endswith(".html"):
            assert page.title().startswith("evalkit report: support-agent_") and "Judge calibration" in text
        else:
            assert "report:" in text or "error:" in text
    assert page.console_errors == [] and page.page_errors == [] and page.blocked == []

    page.goto(index)
    page.click("th:has-text('seed') button")
    page.click("th:has-text('seed') button")  # descending: the seed-2 runs first
    names = page.eval_on_selector_all("#runs tbody tr td:first-child", "tds => tds.map(t => t.dataset.sort)")
    assert names[:3] == [f"support-agent_{v}_seed-2" for v in ("v1", "v2", "v3")]
    page.screenshot(path=str(out / "index.png"), full_page=True)
