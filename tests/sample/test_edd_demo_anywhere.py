"""The README's edd_demo command works from any folder: the sample is written afresh, the same bytes as the
checkout's data/sample (issue 35)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.sample_subject.edd_demo import main

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


@pytest.mark.slow
def test_edd_demo_works_outside_the_checkout(tmp_path, monkeypatch, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no data/sample here
    assert main(["demo"]) == 0
    assert f"ready: evalkit edd run {Path('demo') / 'subject.yaml'}" in capsys.readouterr().out
    demo = elsewhere / "demo"
    assert (demo / "traces.jsonl").read_bytes() == (SAMPLE / "traces.jsonl").read_bytes()
    assert "edd" in (demo / "subject.yaml").read_text() and (demo / "judge-specs.yaml").is_file()


def test_a_from_folder_without_a_subject_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main([str(tmp_path / "demo"), "--from", str(tmp_path)])
    assert "no subject.yaml" in capsys.readouterr().err
