"""The run report: a skill-eval release report inside the run folder becomes a section of it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from evalkit.report.html import render_report

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "contracts" / "skill-eval-report.json"


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"subject": "my-agent", "evalkit_version": "0", "seed": 0,
                                              "inputs": [], "notebooks": []}))
    return run


def test_a_skill_eval_report_in_the_run_folder_is_a_section_of_the_report(tmp_path):
    run = _run(tmp_path)
    assert 'id="skill-eval"' not in render_report(run)
    (run / "skilleval").mkdir()
    shutil.copy(EXAMPLE, run / "skilleval" / "report.json")
    page = render_report(run)
    assert '<a href="#skill-eval">Skill evaluation</a>' in page
    assert page.index('id="skill-eval"') < page.index('id="inputs"')
    assert "Waived by Release maintainer A. Rivera" in page
