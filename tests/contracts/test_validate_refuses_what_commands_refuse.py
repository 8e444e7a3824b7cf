"""`evalkit validate` refuses what the commands refuse (issue 35): a second document in a one-document file,
a second judge spec for one criterion."""

from __future__ import annotations

from pathlib import Path

import yaml

from evalkit.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


def _said(capsys) -> str:
    captured = capsys.readouterr()
    return captured.out + captured.err


def test_a_subject_with_two_documents_is_refused_as_the_commands_refuse_it(capsys, tmp_path):
    subject = tmp_path / "subject.yaml"
    text = (SAMPLE / "subject.yaml").read_text()
    subject.write_text(text + "---\n" + text)
    assert main(["validate", str(subject)]) == 1
    assert "expected one document, found 2" in _said(capsys)
    assert main(["run", str(subject), "--out", str(tmp_path / "run")]) == 1
    assert "expected one document, found 2" in _said(capsys)


def test_two_specs_for_one_criterion_are_refused_by_validate_as_by_judge_run(capsys, tmp_path):
    specs = list(yaml.safe_load_all((SAMPLE / "judge-specs.yaml").read_text()))
    twice = tmp_path / "specs.yaml"
    twice.write_text(yaml.safe_dump_all([*specs, specs[0]], sort_keys=False))
    assert main(["validate", str(twice)]) == 1
    said = _said(capsys)
    assert f"id: criterion {specs[0]['id']!r} already has a spec (line 1)" in said
    assert main(["judge", "prompt", "--spec", str(twice), "--traces", str(SAMPLE / "traces.jsonl"),
                 "--trace", "tr-0001"]) == 1
    assert f"criterion {specs[0]['id']!r} already has a spec (line 1)" in _said(capsys)
    # as a list in one document, too
    listed = tmp_path / "listed.yaml"
    listed.write_text(yaml.safe_dump([specs[0], specs[0]], sort_keys=False))
    assert main(["validate", "--kind", "judge-spec", str(listed)]) == 1
    assert "[1].id: criterion" in _said(capsys)


def test_the_sample_still_validates(capsys):
    files = ["subject.yaml", "judge-specs.yaml", "eval-matrix.yaml", "failure-modes.yaml", "dataset.json"]
    assert main(["validate", *(str(SAMPLE / f) for f in files)]) == 0, _said(capsys)
