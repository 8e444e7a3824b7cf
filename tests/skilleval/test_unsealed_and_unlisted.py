"""A stage a killed `skill-eval run` left unsealed no longer blocks the rerun, and resume refuses anything in
raw/ a run did not seal (issue 35)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from evalkit.skilleval.unfinished import MARKER_PREFIX, mark_running, remove_killed_stage


def _gone_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _stage(tmp_path, name: str, pid: int | None, sealed: bool = False):
    out = tmp_path / name
    (out / "raw").mkdir(parents=True)
    (out / "raw" / "evidence.txt").write_text("half an arm")
    if pid is not None:
        (out / f"{MARKER_PREFIX}{pid}").touch()
    if sealed:
        (out / "stage.json").write_text("{}")
    return out


def test_an_unsealed_stage_of_a_killed_run_is_removed_and_said(tmp_path):
    out = _stage(tmp_path, "stage", _gone_pid())
    said: list[str] = []
    assert remove_killed_stage(out, "stage.json", said.append)
    assert not out.exists()
    assert said and "a stage left unsealed by a run that was killed" in said[0] and str(out) in said[0]


def test_a_sealed_stage_a_running_one_or_a_folder_without_the_marker_is_kept(tmp_path):
    kept = [_stage(tmp_path, "sealed", _gone_pid(), sealed=True), _stage(tmp_path, "running", os.getpid()),
            _stage(tmp_path, "someone-elses", None)]
    for out in kept:
        assert not remove_killed_stage(out, "stage.json", print)
        assert (out / "raw" / "evidence.txt").is_file()


def test_a_run_marks_its_stage_with_its_own_process(tmp_path):
    marker = mark_running(tmp_path)
    assert marker.name == f"{MARKER_PREFIX}{os.getpid()}" and marker.is_file()


@pytest.mark.slow
def test_the_rerun_into_the_folder_of_a_killed_run_goes_ahead(tmp_path):
    from evalkit.skilleval import read_stage, run_stage

    from .arms_world import case_doc, world

    plan = world(tmp_path, [case_doc("tally", m) for m in ("committed", "local")])
    plan.out.mkdir(parents=True)
    (plan.out / "raw").mkdir()
    (plan.out / f"{MARKER_PREFIX}{_gone_pid()}").touch()  # what a run killed after its first arm leaves
    lines: list[str] = []
    stage = read_stage(run_stage(plan, lines.append).parent)
    assert lines[0].startswith(f"removed {plan.out}: a stage left unsealed by a run that was killed")
    assert [c.case_id for c in stage.report.cases] == ["tally-committed", "tally-local"]
    assert not list(plan.out.glob(f"{MARKER_PREFIX}*"))  # a sealed stage carries no marker


@pytest.mark.slow
@pytest.mark.parametrize("extra", ["extra.txt", "notes", "tally-local/extra.txt", "tally-local/review"])
def test_resume_refuses_anything_in_raw_but_the_arm_folders(tmp_path, extra):
    import json

    from evalkit.errors import InputError
    from evalkit.skilleval import resume, run_stage

    from .arms_world import case_doc, world

    stage_dir = run_stage(world(tmp_path, [case_doc("tally", m) for m in ("committed", "local")])).parent
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"schema_version": 1, "human_review": "Looked at every arm.", "cases": [
        {"case_id": f"tally-{m}", "human_review": "Fine.", "comparison": "candidate-only"}
        for m in ("committed", "local")]}))
    target = stage_dir / "raw" / extra
    if "." in extra:
        target.write_text("not evidence")
    else:
        target.mkdir()
    with pytest.raises(InputError, match=f"raw/{extra}: not a case's arm folder"):
        resume(stage_dir, answers, tmp_path / "report.json")
    assert not (tmp_path / "report.json").exists()
    (target.unlink() if target.is_file() else target.rmdir())
    assert resume(stage_dir, answers, tmp_path / "report.json").outcome == "pass"
