"""A subject reads its files from its own folder and below: `..`, absolute paths and links out are refused,
naming the subject file and the field, unless the run allows them (`--allow-outside`)."""

from __future__ import annotations

import os
import shutil

import pytest
import yaml

from evalkit.cli import main
from evalkit.errors import InputError
from evalkit.pipeline import ALLOW_OUTSIDE_ENV, load_subject, run_subject

from .conftest import FIXTURES, RUN_AT


@pytest.fixture
def layout(tmp_path):
    """``subject/`` (the subject file and a trace file) beside ``shared/traces.jsonl``."""
    folder = tmp_path / "subject"
    folder.mkdir()
    shutil.copy(FIXTURES / "subject" / "traces.jsonl", folder)
    (tmp_path / "shared").mkdir()
    shutil.copy(FIXTURES / "subject" / "traces.jsonl", tmp_path / "shared")
    return tmp_path


def _subject(layout, **fields):
    path = layout / "subject" / "subject.yaml"
    path.write_text(yaml.safe_dump({"name": "paths", "traces": "traces.jsonl", "notebooks": ["00_overview"],
                                    **fields}), encoding="utf-8")
    return path


@pytest.mark.parametrize("where", ["dotdot", "absolute", "link", "proc"])
def test_a_path_out_of_the_subject_folder_is_refused_with_its_field(layout, where, monkeypatch):
    monkeypatch.delenv(ALLOW_OUTSIDE_ENV, raising=False)
    outside = layout / "shared" / "traces.jsonl"
    if where == "link":
        (layout / "subject" / "data").symlink_to(layout / "shared")
    rel = {"dotdot": "../shared/traces.jsonl", "absolute": str(outside), "link": "data/traces.jsonl",
           "proc": "/proc/self/environ"}[where]
    subject = _subject(layout, labels=rel)
    with pytest.raises(InputError) as caught:
        load_subject(subject)
    message = caught.value.render()
    assert message.startswith(f"{subject}: labels: {rel} is outside the subject's folder")
    assert "--allow-outside" in message and ALLOW_OUTSIDE_ENV in message
    if where != "proc":
        assert load_subject(subject, allow_outside=True).resolve(rel) == outside.resolve()
        monkeypatch.setenv(ALLOW_OUTSIDE_ENV, "1")
        assert load_subject(subject).subject.labels == rel


def test_paths_inside_the_folder_are_read_however_written(layout):
    (layout / "subject" / "data").mkdir()
    shutil.copy(FIXTURES / "subject" / "traces.jsonl", layout / "subject" / "data")
    inside = str(layout / "subject" / "data" / "traces.jsonl")
    subject = _subject(layout, labels="data/../traces.jsonl", verdicts=inside)
    resolved = load_subject(subject)
    assert resolved.resolve(resolved.subject.verdicts) == layout / "subject" / "data" / "traces.jsonl"


def test_notebook_file_parameters_are_held_to_the_folder_but_run_folders_are_not(layout):
    subject = _subject(layout, parameters={"00_overview": {"extra_file": "../shared/traces.jsonl"}})
    with pytest.raises(InputError, match="parameters.00_overview.extra_file: ../shared/traces.jsonl is outside"):
        load_subject(subject)
    # a *_path names a folder another evalkit command wrote (the sample's ../../reports/sample-eval)
    subject = _subject(layout, parameters={"04_scorecard": {"eval_run_path": "../reports/eval"}},
                       notebooks=["04_scorecard"])
    assert load_subject(subject).subject.parameters["04_scorecard"]["eval_run_path"] == "../reports/eval"


@pytest.mark.slow
def test_run_refuses_before_running_and_allow_outside_reaches_the_notebooks(layout, capsys, monkeypatch):
    monkeypatch.delenv(ALLOW_OUTSIDE_ENV, raising=False)
    subject = _subject(layout, traces="../shared/traces.jsonl")
    out = layout / "run"
    assert main(["run", str(subject), "--out", str(out), "--at", RUN_AT]) == 1
    err = capsys.readouterr().err
    assert f"error: {subject}: traces: ../shared/traces.jsonl is outside the subject's folder" in err
    assert "[1/1]" not in err and not out.exists()
    # allowed, the notebook (which reads the subject again, in its own kernel) runs on the outside file
    manifest = run_subject(subject, out, at=RUN_AT, allow_outside=True)
    assert [n.status for n in manifest.notebooks] == ["ok"], manifest.notebooks
    assert ALLOW_OUTSIDE_ENV not in os.environ  # set for the kernels only while the run lasted
