"""``evalkit run S1.yaml S2.yaml --out DIR``: subjects named on the command line run as a batch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from evalkit.cli import main
from evalkit.io import canonical_line
from tests.viewer.conftest import trace


def _subject(folder: Path, name: str, traces: str = "traces.jsonl") -> Path:
    folder.mkdir(parents=True)
    (folder / "traces.jsonl").write_text("".join(canonical_line(trace(i)) for i in range(3)), encoding="utf-8")
    (folder / "subject.yaml").write_text(yaml.safe_dump({"name": name, "traces": traces, "notebooks": ["00_overview"]}),
                                         encoding="utf-8")
    return folder / "subject.yaml"


@pytest.mark.slow
def test_subjects_named_on_the_command_line_run_as_a_batch_and_one_failing_stops_no_other(tmp_path, capsys):
    good = _subject(tmp_path / "a", "shop-agent")
    broken = _subject(tmp_path / "b", "travel-agent", traces="missing.jsonl")
    out = tmp_path / "out"
    assert main(["run", str(good), str(broken), "--out", str(out), "--jobs", "2", "--at", "2026-01-01T00:00:00Z"]) == 1
    rows = {r["name"]: r for r in json.loads((out / "batch.json").read_text(encoding="utf-8"))["rows"]}
    assert rows["shop-agent"]["status"] == "ok" and (out / "shop-agent" / "index.html").is_file()
    assert rows["travel-agent"]["status"] == "failed" and "missing.jsonl" in rows["travel-agent"]["error"]
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="shop-agent/index.html"' in index and "travel-agent" in index
    capsys.readouterr()
    # run again: the finished subject is up to date, the broken one is tried again
    assert main(["run", str(good), str(broken), "--out", str(out), "--at", "2026-01-01T00:00:00Z"]) == 1
    assert "shop-agent: up to date (not run again)" in capsys.readouterr().err


def test_several_subjects_need_an_out_folder(tmp_path, capsys):
    a, b = _subject(tmp_path / "a", "one"), _subject(tmp_path / "b", "two")
    assert main(["run", str(a), str(b)]) != 0
    assert "several subjects need --out DIR" in capsys.readouterr().err
