import json
import re
import shutil
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.contracts.summary import NotebookSummary, RunManifest
from evalkit.pipeline import default_notebooks_dir, run_subject
from evalkit.report.pages import source_hash
from evalkit.sample_subject.readme import NOTEBOOKS

from .conftest import FIXTURES, RUN_AT

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_overview_notebook_writes_a_valid_summary(overview_run):
    summary = NotebookSummary.model_validate_json((overview_run / "00_overview" / "summary.json").read_text())
    metrics = {m.name: m.value for m in summary.metrics}
    assert metrics["traces"] == 6
    assert metrics["observations"] == 18
    assert metrics["traces with errors"] == 3
    assert metrics["tool calls"] == 6
    assert {c.title for c in summary.charts} >= {"Observations per type", "Tool calls", "Latency per observation"}
    assert any(t.title == "Slowest traces" for t in summary.tables)


@pytest.mark.slow
def test_run_folder_has_manifest_executed_notebook_and_pages(overview_run):
    manifest = RunManifest.model_validate_json((overview_run / "run.json").read_text())
    assert manifest.subject == "xss-subject" and manifest.run_at == RUN_AT
    assert manifest.judge.model == "fixture-judge" and manifest.judge.temperature == 0
    assert [i.field for i in manifest.inputs] == ["traces"]
    assert manifest.inputs[0].path == "traces.jsonl" and len(manifest.inputs[0].sha256) == 64
    for name in ("00_overview.ipynb", "notebook.html", "summary.json"):
        assert (overview_run / "00_overview" / name).is_file()
    page = (overview_run / "00_overview" / "notebook.html").read_text()
    assert "subject_file" not in page  # code cells are not rendered
    assert 'src="http' not in page and 'data-mime-type="image/svg+xml"' in page  # charts as SVG
    assert str(overview_run) not in page


RUN_FILES = ("00_overview/summary.json", "00_overview/00_overview.ipynb", "00_overview/notebook.html",
             "index.html", "run.json")


@pytest.mark.slow
def test_rerun_is_byte_identical(overview_run, fixture_subject, tmp_path):
    again = tmp_path / "again"
    run_subject(fixture_subject, again, at=RUN_AT)
    files = sorted((*RUN_FILES, "trace-view.json.gz"))  # the report's trace viewer, compressed
    assert sorted(str(p.relative_to(again)) for p in again.rglob("*") if p.is_file()) == files
    for rel in files:
        assert (again / rel).read_bytes() == (overview_run / rel).read_bytes(), rel


@pytest.mark.slow
def test_executed_notebook_keeps_no_clock_reading_random_id_or_run_folder(overview_run):
    nb = json.loads((overview_run / "00_overview" / "00_overview.ipynb").read_text())
    source = json.loads((default_notebooks_dir() / "00_overview.ipynb").read_text())
    ids = [c["id"] for c in nb["cells"]]
    assert [i for i in ids if i in {c["id"] for c in source["cells"]}] == [c["id"] for c in source["cells"]]
    assert "injected-parameters-2" in ids  # papermill's cell, after the parameters cell, by its place
    papermill = nb["metadata"]["papermill"]
    assert papermill["start_time"] == papermill["end_time"] == RUN_AT and "duration" not in papermill
    assert papermill["parameters"]["output_dir"] == "." and papermill["output_path"] == "00_overview.ipynb"
    for cell in nb["cells"]:
        assert "execution" not in cell["metadata"]
        assert not {"start_time", "end_time", "duration"} & set(cell["metadata"].get("papermill", {}))


@pytest.mark.slow
def test_no_absolute_path_leaks_into_outputs(overview_run, fixture_subject):
    for rel in RUN_FILES:
        text = (overview_run / rel).read_text()
        assert str(overview_run) not in text, rel
        if not rel.endswith(".ipynb"):  # the executed notebook records the subject file it was given
            assert str(fixture_subject.parent) not in text, rel


def _csp(html: str) -> str:
    head = html.split("</head>", 1)[0]
    [policy] = re.findall(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', head)
    return policy


@pytest.mark.slow
def test_notebook_pages_run_no_script_and_the_report_only_its_own(overview_run):
    page = (overview_run / "00_overview" / "notebook.html").read_text()
    policy = _csp(page)
    assert "default-src 'none'" in policy and "script-src 'none'" in policy and "unsafe" not in policy
    assert "<script" not in page  # the charts are SVG drawn when the notebook ran
    assert page.index("Content-Security-Policy") < page.index("<style")  # before any style it governs
    # every style the page holds is one the policy names by hash, and no other
    styles = re.findall(r"<style[^>]*>(.*?)</style>", page, re.S)
    assert sorted(set(re.findall(r"'sha256-[^']+'", policy.split("style-src", 1)[1].split(";")[0]))) == \
        sorted({source_hash(s) for s in styles})
    report = _csp((overview_run / "index.html").read_text())
    assert "default-src 'none'" in report and "unsafe" not in report and "'sha256-" in report


@pytest.mark.slow
def test_report_is_self_contained_and_escapes_trace_text(overview_run):
    html = (overview_run / "index.html").read_text()
    assert html.count("window.vegaEmbed=") == 1  # one inlined bundle shared by all charts
    assert 'src="http' not in html and "href=\"http" not in html and "@import" not in html
    assert "<script>window.__xss" not in html and "onerror=\"window" not in html
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in html
    # chart data sits in JSON script blocks that no trace text can close
    for block in html.split('<script type="application/json"')[1:]:
        body = block.split(">", 1)[1].split("</script>", 1)[0]
        assert "<" not in body
        json.loads(body)


@pytest.mark.slow
def test_a_failing_notebook_is_named_with_its_cell_and_the_others_are_kept(fixture_subject, tmp_path, capsys):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    shutil.copy(default_notebooks_dir() / "00_overview.ipynb", notebooks)
    shutil.copy(FIXTURES / "broken_notebooks" / "99_broken.ipynb", notebooks)
    subject = fixture_subject.parent / "with-broken.yaml"
    subject.write_text(fixture_subject.read_text().replace("- 00_overview", "- 99_broken\n- 00_overview"))
    out = tmp_path / "run"
    rc = main(["run", str(subject), "--out", str(out), "--notebooks", str(notebooks), "--at", RUN_AT])
    assert rc == 1
    err = capsys.readouterr().err
    # the cell as the author sees it: third cell of the source notebook (papermill's injected cell not counted)
    assert '99_broken: cell 3 (raise RuntimeError("the fixture fails here")) raised RuntimeError' in err
    manifest = RunManifest.model_validate_json((out / "run.json").read_text())
    assert [(n.name, n.status) for n in manifest.notebooks] == [("99_broken", "failed"), ("00_overview", "ok")]
    assert manifest.notebooks[0].cell == 2
    assert (out / "00_overview" / "summary.json").is_file()
    html = (out / "index.html").read_text()
    assert "the fixture fails here" in html and 'class="status failed"' in html


def test_unknown_notebook_in_only_is_a_clear_error(fixture_subject, capsys):
    assert main(["run", str(fixture_subject), "--only", "nope", "--out", "/nonexistent/x"]) == 1
    assert "not in the subject's notebooks: nope" in capsys.readouterr().err


def test_missing_input_names_the_field(tmp_path, capsys):
    subject = tmp_path / "s.yaml"
    subject.write_text((FIXTURES / "subject" / "subject.yaml").read_text())
    assert main(["run", str(subject), "--out", str(tmp_path / "o")]) == 1
    assert f"{subject}: traces: input file not found: traces.jsonl" in capsys.readouterr().err


@pytest.mark.slow
def test_report_command_rewrites_index(overview_run, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(overview_run, copy)
    (copy / "index.html").unlink()
    assert main(["report", str(copy)]) == 0
    assert (copy / "index.html").read_bytes() == (overview_run / "index.html").read_bytes()
    assert main(["report", str(tmp_path)]) == 1
    assert "run.json is missing" in capsys.readouterr().err


SHIPPED = {"00_overview", "01_error_analysis", "02_judge_calibration", "03_flow_graph", "04_scorecard", "05_edd"}
"""The analysis notebooks evalkit ships; a new one is added here and to the sample subject."""


def test_the_shipped_notebooks_are_the_ones_the_sample_runs():
    names = {p.stem for p in default_notebooks_dir().glob("*.ipynb")}
    assert names == SHIPPED
    # the sample subject runs every shipped notebook but 05_edd, which reads a loop folder (evalkit edd run)
    assert set(NOTEBOOKS) == SHIPPED - {"05_edd"}
    # `jupyter lab notebooks/` in a checkout opens the very files the package ships
    assert (ROOT / "notebooks").resolve() == default_notebooks_dir().resolve()


def test_notebooks_are_committed_without_outputs():
    paths = sorted(default_notebooks_dir().glob("*.ipynb"))
    assert {p.stem for p in paths} == SHIPPED
    for path in paths:
        nb = json.loads(path.read_text())
        tags = [c.get("metadata", {}).get("tags", []) for c in nb["cells"]]
        assert ["parameters"] in tags, f"{path.name} has no parameters cell"
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                assert not cell.get("outputs") and cell.get("execution_count") is None, path.name
