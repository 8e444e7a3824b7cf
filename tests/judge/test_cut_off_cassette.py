"""A cassette whose last entry was cut off mid-write is replayed with a warning naming the line (issue 35)."""

from __future__ import annotations

from pathlib import Path

from evalkit.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


def _judge(tmp_path: Path, cassette: Path) -> list[str]:
    return ["judge", "run", "--spec", str(SAMPLE / "judge-specs.yaml"), "--traces", str(SAMPLE / "traces.jsonl"),
            "--provider", "replay", "--cassette", str(cassette), "--out", str(tmp_path / "run" / "verdicts.jsonl"),
            "--limit", "1", "--no-progress"]


def test_a_cut_off_cassette_is_replayed_with_a_warning(capsys, tmp_path):
    lines = (SAMPLE / "judge-cassette.jsonl").read_bytes().splitlines(keepends=True)
    cassette = tmp_path / "cassette.jsonl"
    cassette.write_bytes(b"".join(lines[:3]) + lines[3][:50])  # the fourth entry stopped mid-write
    main(_judge(tmp_path, cassette))
    err = capsys.readouterr().err
    assert f"warning: {cassette}:4: the cassette's last entry is cut off (50 bytes, no line end)" in err


def test_a_whole_cassette_gives_no_such_warning(capsys, tmp_path):
    assert main(_judge(tmp_path, SAMPLE / "judge-cassette.jsonl")) == 0
    assert "cut off" not in capsys.readouterr().err


def test_a_cassette_entry_whose_model_is_not_text_is_a_located_error(capsys, tmp_path):
    lines = (SAMPLE / "judge-cassette.jsonl").read_text().splitlines(keepends=True)
    cassette = tmp_path / "cassette.jsonl"
    cassette.write_text(lines[0] + lines[1].replace('"model":"', '"model":3,"was":"', 1))
    assert main(_judge(tmp_path, cassette)) == 1
    assert f"{cassette}:2: not a cassette entry" in capsys.readouterr().err
