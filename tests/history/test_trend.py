"""The report's trend section: every recorded run of the series per criterion, judge changes marked."""

from __future__ import annotations

import json
import re

from evalkit.history import record_notebook_run
from evalkit.pipeline import write_run_report
from tests.recorded_runs import rate, write_run_folder, write_verdicts


def _spec(html: str) -> dict:
    block = re.search(r'<script type="application/json" data-chart="chart-trend">(.*?)</script>', html, re.S)
    assert block, "the trend chart is not in the report"
    return json.loads(block.group(1))


def test_the_report_draws_each_run_and_marks_where_the_judge_changed(tmp_path):
    for n, (value, judge) in enumerate([(0.8, "a"), (0.82, "a"), (0.5, "b")], start=1):
        run = write_run_folder(tmp_path / f"run{n}", run_at=f"2026-01-0{n}T00:00:00Z",
                               criteria=[rate("grounded", value, value - 0.1, value + 0.1, judge=judge)])
        record_notebook_run(run, tmp_path / "history",
                            verdicts_file=write_verdicts(tmp_path / f"v{n}.jsonl", {"grounded": "pf"}))
    html = write_run_report(tmp_path / "run3").read_text(encoding="utf-8")
    assert '<section id="trend">' in html and '<a href="#trend">Trend</a>' in html
    assert "3 recorded runs of <code>support-agent</code>" in html and "The judge changed 1 time" in html
    data = next(iter(_spec(html)["datasets"].values()))
    rates = [(d["run"], d["rate"]) for d in data if d["what"] == "rate"]
    assert rates == [("1 · 2026-01-01T00:00:00Z", 0.8), ("2 · 2026-01-02T00:00:00Z", 0.82),
                     ("3 · 2026-01-03T00:00:00Z", 0.5)]
    assert [(d["run"], d["change"]) for d in data if d["what"] == "change"] == [
        ("3 · 2026-01-03T00:00:00Z", "judge a -> b")]
    assert "50.0% <small>[40.0, 60.0]</small>" in html


def test_a_first_run_says_the_trend_starts_here_and_draws_no_chart(tmp_path):
    run = write_run_folder(tmp_path / "run1", criteria=[rate("grounded", 0.8, 0.7, 0.9)])
    record_notebook_run(run, tmp_path / "history")
    html = write_run_report(run).read_text(encoding="utf-8")
    assert "The trend starts with this run" in html and 'data-chart="chart-trend"' not in html


def test_trace_text_in_a_criterion_name_cannot_end_the_chart_block(tmp_path):
    name = "</script><script>window.__xss=1</script>"
    for n in (1, 2):
        run = write_run_folder(tmp_path / f"run{n}", run_at=f"t{n}", criteria=[rate(name, 0.8, 0.7, 0.9)])
        record_notebook_run(run, tmp_path / "history")
    html = write_run_report(tmp_path / "run2").read_text(encoding="utf-8")
    assert "<script>window.__xss=1</script>" not in html
    assert "&lt;/script&gt;&lt;script&gt;window.__xss=1&lt;/script&gt;" in html  # the table shows it as text
