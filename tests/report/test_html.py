"""The run report: sections other packages register (the skill-eval release report) are shown with it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from markupsafe import Markup

from evalkit.pipeline import write_run_report
from evalkit.report import sections
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
    assert 'id="skill-eval"' not in write_run_report(run).read_text()
    (run / "skilleval").mkdir()
    shutil.copy(EXAMPLE, run / "skilleval" / "report.json")
    page = write_run_report(run).read_text()
    assert '<a href="#skill-eval">Skill evaluation</a>' in page
    assert page.index('id="skill-eval"') < page.index('id="inputs"')
    assert "Waived by Release maintainer A. Rivera" in page


def test_the_report_shows_each_registered_section_whose_file_is_in_the_run_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(sections, "_REGISTERED", {})
    seen = []

    def render(path: Path) -> Markup:
        seen.append(path)
        return Markup(f'<section id="extra">{path.read_text()}</section>')

    sections.register_section(sections.ReportSection("extra", "Extra", "extra/result.txt", render))
    run = _run(tmp_path)
    assert 'href="#extra"' not in render_report(run) and not seen
    (run / "extra").mkdir()
    (run / "extra" / "result.txt").write_text("forty-two")
    page = render_report(run)
    assert '<a href="#extra">Extra</a><a href="#inputs">' in page
    assert '<section id="extra">forty-two</section>' in page
    with pytest.raises(ValueError, match="already registered"):
        sections.register_section(sections.ReportSection("extra", "Other", "other.txt", render))


def test_the_report_package_imports_no_package_that_registers_a_section():
    code = ("import sys, evalkit.report.html, evalkit.report.sections\n"
            "print(sorted(m for m in sys.modules if m.startswith('evalkit.skilleval')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
