"""The issue's history, for real: five runs of the sample, the last with a planted regression in the judge's
verdicts; the check fails naming the criterion, and the last report's trend chart shows the drop."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from evalkit.cli import main

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
PLANTED = 60
"""grounded-policy passes turned to fails on unlabeled traces in the fifth run (of about 200)."""


def _plant_regression(subject_dir: Path) -> None:
    labelled = {json.loads(line)["traceId"] for line in (subject_dir / "human-labels.jsonl").read_text().splitlines()}
    path = subject_dir / "criterion-verdicts.jsonl"
    lines, flipped = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        v = json.loads(line)
        if (flipped < PLANTED and v["criterionId"] == "grounded-policy" and v["result"] == "pass"
                and v["traceId"] not in labelled):
            v.update(result="fail", critique="The answer states a policy the knowledge base does not hold.")
            flipped += 1
        lines.append(json.dumps(v, sort_keys=True, separators=(",", ":")))
    assert flipped == PLANTED
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_five_runs_with_a_planted_regression_fail_the_check_and_the_trend_shows_the_drop(tmp_path, capsys,
                                                                                           offline_page):
    subject_dir = tmp_path / "sample"
    shutil.copytree(SAMPLE, subject_dir)
    history = tmp_path / "history"
    for n in range(1, 6):
        if n == 5:
            _plant_regression(subject_dir)
        code = main(["run", str(subject_dir / "subject.yaml"), "--out", str(tmp_path / f"run{n}"),
                     "--only", "02_judge_calibration", "--at", f"2026-04-0{n}T00:00:00Z", "--history", str(history)])
        assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    md = tmp_path / "check.md"
    assert main(["history", "check", str(history), "--markdown", str(md)]) == 1
    text = md.read_text(encoding="utf-8")
    assert "| `support-agent` (run) | run 5 (2026-04-05T00:00:00Z) | run 4 (2026-04-04T00:00:00Z) | fail " \
           "| `grounded-policy` |" in text
    assert "`escalation-correct`" in text and "criteria failed:** `grounded-policy`" in text

    html = (tmp_path / "run5" / "index.html").read_text(encoding="utf-8")
    spec = json.loads(re.search(r'data-chart="chart-trend">(.*?)</script>', html, re.S).group(1))
    rates = {(d["run"][0], d["criterion"]): d["rate"] for d in next(iter(spec["datasets"].values()))
             if d["what"] == "rate"}
    grounded = [rates[(str(n), "grounded-policy")] for n in range(1, 6)]
    assert len(set(grounded[:4])) == 1 and grounded[4] < grounded[3] - 0.2  # four alike, then the drop
    assert rates[("5", "escalation-correct")] == rates[("4", "escalation-correct")]

    page = offline_page
    page.goto((tmp_path / "run5" / "index.html").as_uri())
    page.wait_for_function("!!document.querySelector('#chart-trend svg')", timeout=20_000)
    assert page.console_errors == [] and page.page_errors == [] and page.blocked == []
    points = page.eval_on_selector_all("#chart-trend svg path[aria-roledescription='point']",
                                       "ps => ps.map(p => p.getAttribute('aria-label'))")
    assert sum("grounded-policy" in (p or "") for p in points) == 5
    page.locator("#trend").screenshot(path=str(tmp_path / "trend.png"))
