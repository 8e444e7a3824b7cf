"""Per-notebook parameters in the subject file: checked against the notebook's parameters cell, paths resolved."""

import json
import shutil

import pytest
import yaml

from evalkit.cli import main
from evalkit.contracts.summary import NotebookSummary, RunManifest
from evalkit.errors import InputError
from evalkit.pipeline import run_subject

from .chat_subject import write_chat_subject
from .conftest import FIXTURES, RUN_AT

PARAM_NOTEBOOKS = FIXTURES / "param_notebooks"


def _subject(folder, notebook, parameters, **extra):
    """A subject in ``folder`` running one fixture notebook with ``parameters``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "traces.jsonl").write_text('{"id": "t1", "observations": []}\n')
    subject = {"name": "params", "traces": "traces.jsonl", "notebooks": [notebook],
               "parameters": {notebook: parameters} if parameters else {}, **extra}
    path = folder / "subject.yaml"
    path.write_text(yaml.safe_dump(subject, sort_keys=False))
    return path


@pytest.mark.slow
def test_the_subject_sets_the_breakdown_field_and_the_report_says_so(tmp_path):
    subject = write_chat_subject(tmp_path / "s", parameters={"01_error_analysis": {"by": "channel"}})
    out = tmp_path / "run"
    manifest = run_subject(subject, out, only=["01_error_analysis"], at=RUN_AT)
    assert [n.status for n in manifest.notebooks] == ["ok"], manifest.notebooks
    assert manifest.notebooks[0].parameters == {"by": "channel"}
    summary = NotebookSummary.model_validate_json((out / "01_error_analysis" / "summary.json").read_text())
    assert "Failure rate by channel" in {c.title for c in summary.charts}
    (table,) = [t for t in summary.tables if t.title == "Failure modes by channel"]
    rows = [dict(zip(table.columns, r, strict=True)) for r in table.rows]
    voice = [r for r in rows if r["group"] == "voice"]
    assert {r["mode"] for r in voice} == {"wrong-date", "no-handoff"} and all(r["reviewed"] == 1 for r in voice)
    # the grid labels every group with its size, so the group of one reads as n=1
    (chart,) = [c for c in summary.charts if c.title == "Failure rate by channel"]
    assert "voice (n=1)" in json.dumps(chart.spec)
    assert not any("no trace has metadata field" in f.lower() for f in summary.findings)
    html = (out / "index.html").read_text()
    assert "Parameters from the subject" in html and "<code>by: channel</code>" in html


def test_an_unknown_parameter_is_an_error_naming_the_notebook_before_anything_runs(tmp_path, capsys):
    subject = write_chat_subject(tmp_path / "s", parameters={"01_error_analysis": {"breakdown": "channel"}})
    out = tmp_path / "run"
    assert main(["run", str(subject), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert ("parameters.01_error_analysis.breakdown: notebook 01_error_analysis has no parameter 'breakdown' "
            "(its parameters: sample_size, strategy, by, worst, draft_file, ratification_file, coded_file, "
            "saturation_batch)") in err
    assert not (out / "00_overview").exists()  # checked before the first notebook ran


def test_a_value_of_the_wrong_type_is_an_error(tmp_path):
    subject = write_chat_subject(tmp_path / "s", parameters={"01_error_analysis": {"sample_size": "all"}})
    with pytest.raises(InputError, match=r"sample_size expects int like its default 100, got str 'all'") as err:
        run_subject(subject, tmp_path / "run")
    assert err.value.path == "parameters.01_error_analysis.sample_size"


@pytest.mark.parametrize(("parameters", "message"), [
    ({"02_judge_calibration": {"x": 1}}, "02_judge_calibration is not among the subject's notebooks"),
    ({"00_overview": {"subject_file": "other.yaml"}}, "parameters.00_overview.subject_file: set by the pipeline"),
    ({"00_overview": {"glossary_file": 3}}, "must be a string, got int"),
])
def test_the_subject_file_refuses_parameters_it_cannot_apply(tmp_path, capsys, parameters, message):
    subject = write_chat_subject(tmp_path / "s", parameters=parameters)
    assert main(["validate", str(subject)]) == 1
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_file_and_path_parameters_resolve_against_the_subject_file(tmp_path, monkeypatch):
    folder = tmp_path / "project" / "evals"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "glossary.txt").write_text("a tour is a visit\n")
    subject = _subject(folder, "98_reads_file", {"glossary_file": "docs/glossary.txt", "cache_path": "cache",
                                                  "label": "leasing", "limit": 5})
    monkeypatch.chdir(tmp_path)  # neither the working folder nor the run folder anchors the paths
    out = tmp_path / "runs" / "one"
    manifest = run_subject(subject.relative_to(tmp_path), out, at=RUN_AT, notebooks_dir=PARAM_NOTEBOOKS)
    assert [n.status for n in manifest.notebooks] == ["ok"], manifest.notebooks
    summary = NotebookSummary.model_validate_json((out / "98_reads_file" / "summary.json").read_text())
    assert summary.findings == ["a tour is a visit"]
    assert {m.name: m.value for m in summary.metrics} == {"label": "leasing", "limit": 5,
                                                          "cache path is absolute": True}
    # the file a parameter names is an input of the run, recorded as written, with its digest
    inputs = {i.field: i.path for i in manifest.inputs}
    assert inputs["parameters.98_reads_file.glossary_file"] == "docs/glossary.txt"
    run_json = (out / "run.json").read_text()
    assert str(tmp_path) not in run_json and '"glossary_file": "docs/glossary.txt"' in run_json


def test_a_missing_file_parameter_names_its_field(tmp_path):
    subject = _subject(tmp_path / "s", "98_reads_file", {"glossary_file": "docs/nope.txt"})
    with pytest.raises(InputError, match="input file not found: docs/nope.txt") as err:
        run_subject(subject, tmp_path / "run", notebooks_dir=PARAM_NOTEBOOKS)
    assert err.value.path == "parameters.98_reads_file.glossary_file"


@pytest.mark.slow
def test_a_subject_without_a_judge_runs_and_the_report_claims_no_judge(tmp_path):
    subject = write_chat_subject(tmp_path / "s", annotations=False)
    out = tmp_path / "run"
    manifest = run_subject(subject, out, only=["00_overview"], at=RUN_AT)
    assert manifest.judge is None and [n.status for n in manifest.notebooks] == ["ok"]
    assert RunManifest.model_validate_json((out / "run.json").read_text()).judge is None
    header = (out / "index.html").read_text().split("<nav>", 1)[0]
    assert "judge" not in header and "None" not in header and "temperature" not in header


@pytest.mark.parametrize(("notebook", "cell", "first_line", "error"), [
    # above the parameters cell: papermill's index is already the author's (no injected cell before it)
    ("97_fails_before_parameters", 2, 'raise RuntimeError("fails above the parameters")',
     "RuntimeError: fails above the parameters"),
    # no parameters cell: papermill injects one at the top, shifting every index by one
    ("96_no_parameters_cell", 3, 'raise KeyError("fails without a parameters cell")',
     "KeyError: 'fails without a parameters cell'"),
])
def test_a_failing_cell_is_named_as_in_the_source_notebook(tmp_path, notebook, cell, first_line, error):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    shutil.copy(PARAM_NOTEBOOKS / f"{notebook}.ipynb", notebooks)
    subject = _subject(tmp_path / "s", notebook, None)
    manifest = run_subject(subject, tmp_path / "run", notebooks_dir=notebooks)
    (run,) = manifest.notebooks
    source = json.loads((notebooks / f"{notebook}.ipynb").read_text())["cells"]
    assert run.status == "failed" and run.cell == cell - 1
    assert "".join(source[run.cell]["source"]) == first_line
    assert run.error == f"{notebook}: cell {cell} ({first_line}) raised {error}"


def test_a_notebook_name_given_as_the_notebooks_folder_is_told_apart(fixture_subject, tmp_path, monkeypatch):
    """`evalkit run S --notebooks 00_overview` read as a folder said only 'not found ... in 00_overview'."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as err:
        run_subject(fixture_subject, tmp_path / "run", notebooks_dir="00_overview")
    assert "--only 00_overview runs one of the subject's" in str(err.value)
    assert not (tmp_path / "run").exists()
