"""The output guard on its own: each refusal it makes, and the paths it lets through."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit.errors import InputError
from evalkit.io import guard_outputs


def _refused(outputs, inputs=None, folders=()) -> str:
    with pytest.raises(InputError) as caught:
        guard_outputs(outputs, inputs, folders=folders)
    return caught.value.render()


def test_devices_and_descriptors_are_refused_by_name():
    assert "is a character device" in _refused({"--out": "/dev/null"})
    for stream in ("/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/1"):
        assert f"--out ({stream}) is a process's file descriptor" in _refused({"--out": stream})
    assert "is a device or process path (/dev/evalkit-new-node)" in _refused({"--out": "/dev/evalkit-new-node"})


def test_a_folder_output_that_is_a_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    assert "(named pipe), not a folder" in _refused({"--out": tmp_path / "pipe"}, folders=["--out"])


def test_ordinary_outputs_pass(tmp_path):
    (tmp_path / "in.jsonl").write_text("x\n", encoding="utf-8")
    guard_outputs({"--out": tmp_path / "new" / "out.jsonl", "--other": None},
                  {"TRACES": tmp_path / "in.jsonl", "--labels": None, "--spec": [tmp_path / "in.jsonl"]})
    if Path("/dev/shm").is_dir():
        guard_outputs({"--out": "/dev/shm/evalkit-guard-test.jsonl"})  # regular files in memory


def test_an_input_listed_among_several_is_found(tmp_path):
    specs = [tmp_path / "a.yaml", tmp_path / "b.yaml"]
    for spec in specs:
        spec.write_text("id: x\n", encoding="utf-8")
    message = _refused({"--out": specs[1]}, {"--spec": specs})
    assert f"--out ({specs[1]}) is also the input --spec ({specs[1]})" in message


def test_a_folder_output_holding_an_input_and_an_output_inside_an_input_folder(tmp_path):
    (tmp_path / "subject").mkdir()
    subject = tmp_path / "subject" / "subject.yaml"
    subject.write_text("name: s\n", encoding="utf-8")
    message = _refused({"--out": tmp_path}, {"SUBJECT": subject}, folders=["--out"])
    assert f"--out ({tmp_path}) holds the input SUBJECT ({subject})" in message
    # a file output may sit beside the input folder's contents only outside it
    message = _refused({"--out": tmp_path / "subject" / "x.json"}, {"STAGE": tmp_path / "subject"})
    assert "is inside the input STAGE" in message
    guard_outputs({"--out": tmp_path / "x.json"}, {"STAGE": tmp_path / "subject"})


def test_anything_inside_a_sealed_stage_is_refused_whatever_the_inputs(tmp_path):
    stage = tmp_path / "stage"
    (stage / "raw").mkdir(parents=True)
    (stage / "stage.json").write_text("{}\n", encoding="utf-8")
    for out in (stage / "stage.json", stage / "raw" / "x" / "facts.json", stage / "worksheet.html"):
        assert f"is inside the sealed skill-eval stage {stage}" in _refused({"--out": out})
    assert "sealed" in _refused({"--out": stage}, folders=["--out"])
    guard_outputs({"--out": tmp_path / "worksheet.html"})
    (stage / "stage.json").unlink()  # a folder is sealed by its stage.json
    guard_outputs({"--out": stage / "worksheet.html"})


def test_two_outputs_that_are_one_file(tmp_path):
    message = _refused({"--out": tmp_path / "v.jsonl", "--record": tmp_path / "v.jsonl"})
    assert f"--record ({tmp_path / 'v.jsonl'}) is also --out ({tmp_path / 'v.jsonl'})" in message


def test_an_output_that_cannot_be_written_is_refused_before_work(tmp_path):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert "is a file, not a folder" in _refused({"--out": tmp_path / "file" / "below.json"})
