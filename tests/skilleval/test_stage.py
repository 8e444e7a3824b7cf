"""Decoding a sealed stage: every kind of tampering is refused, and the refusal says what changed."""

from __future__ import annotations

import json
import shutil

import pytest

from evalkit.cli.main import main
from evalkit.contracts.skilleval import stage_seal
from evalkit.errors import InputError
from evalkit.io.canonical import canonical_dumps
from evalkit.skilleval import read_stage, run_stage, stage_inputs
from evalkit.skilleval.facts import render_receipt

from .arms_world import world


@pytest.fixture(scope="module")
def sealed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sealed")
    return run_stage(world(tmp)).parent


@pytest.fixture
def stage(sealed, tmp_path):
    """A private copy of the sealed stage to tamper with."""
    copy = tmp_path / "stage"
    shutil.copytree(sealed, copy, symlinks=True)
    return copy


def _refused(stage, *needles):
    with pytest.raises(InputError) as err:
        read_stage(stage)
    for needle in needles:
        assert needle in err.value.render()
    return err.value


@pytest.mark.slow
def test_untouched_stage_decodes(stage):
    decoded = read_stage(stage)
    assert len(decoded.report.cases) == 4
    inputs = stage_inputs(stage)
    assert sorted(inputs.cases) == ["jot-committed", "jot-local", "tally-committed", "tally-local"]
    assert inputs.policy.tool == "notekeep"


def test_edited_receipt_is_refused_naming_it(stage):
    receipt = stage / "raw" / "jot-committed" / "candidate" / "facts.json"
    facts = json.loads(receipt.read_text())
    facts[2]["exit_code"] = 1
    receipt.write_text(render_receipt(facts))
    _refused(stage, "report.cases[0].candidate: raw evidence in raw/jot-committed/candidate changed since the "
                    "stage was sealed (facts.json changed); refusing to resume")


@pytest.mark.parametrize(("rel", "change", "said"), [
    ("commands/03-add-a-note.stdout", "edit", "commands/03-add-a-note.stdout changed"),
    ("transcript.txt", "edit", "transcript.txt changed"),
    ("log.txt", "remove", "log.txt removed"),
    ("extra-notes.txt", "add", "extra-notes.txt added"),
    ("manifest.json", "edit", "(manifest.json changed)"),
])
def test_changed_raw_file_is_refused_naming_it(stage, rel, change, said):
    path = stage / "raw" / "jot-local" / "baseline" / rel
    if change == "remove":
        path.unlink()
    else:
        path.write_text(path.read_text() + " " if path.exists() else "new\n")
    _refused(stage, "report.cases[1].baseline: raw evidence in raw/jot-local/baseline changed", said)


def test_missing_raw_folder_is_refused(stage):
    shutil.rmtree(stage / "raw" / "tally-local" / "candidate")
    _refused(stage, "the raw evidence folder raw/tally-local/candidate is missing")


def test_the_sandbox_is_evidence_but_for_gits_stat_cache(stage):
    sandbox = stage / "raw" / "jot-local" / "candidate" / "sandbox"
    (sandbox / ".git" / "index").touch()  # inode numbers and times: left out of the digest
    read_stage(stage)
    (sandbox / "scratch.txt").write_text("a reviewer poked around\n")
    with pytest.raises(InputError, match=r"raw evidence in raw/jot-local/candidate changed since the stage was "
                                         r"sealed \(sandbox/scratch.txt added\)"):
        read_stage(stage)


def _stage_json(stage):
    return json.loads((stage / "stage.json").read_text())


def _write(stage, value, *, reseal):
    if reseal:
        value["seal"] = stage_seal(value)
    (stage / "stage.json").write_text(canonical_dumps(value))


def test_edited_stage_is_refused_by_its_seal(stage):
    value = _stage_json(stage)
    value["report"]["cases"][0]["candidate"]["raw_sha256"] = "0" * 64
    value["worksheet"][0]["candidate"]["raw_sha256"] = "0" * 64
    _write(stage, value, reseal=False)
    _refused(stage, "the seal does not match the staged report and worksheet", "seal")


def test_edited_seal_is_refused(stage):
    value = _stage_json(stage)
    value["seal"] = "f" * 64
    _write(stage, value, reseal=False)
    _refused(stage, "the seal does not match")


def test_reformatted_stage_is_refused(stage):
    value = _stage_json(stage)
    (stage / "stage.json").write_text(json.dumps(value))
    _refused(stage, "not the canonical rendering")


def test_stage_with_trailing_data_or_bom_is_refused(stage):
    text = (stage / "stage.json").read_bytes()
    (stage / "stage.json").write_bytes(text + b"{}")
    _refused(stage, "trailing data")
    (stage / "stage.json").write_bytes(b"\xef\xbb\xbf" + text)
    _refused(stage, "byte-order mark")


def test_resealed_grade_is_refused_by_the_recorded_facts(stage):
    value = _stage_json(stage)
    for arm in (value["report"]["cases"][2]["candidate"], value["worksheet"][2]["candidate"]):
        arm["deterministic_grade"] = arm["outcome"] = "fail"
    value["report"]["outcome"] = "fail"
    _write(stage, value, reseal=True)
    _refused(stage, "report.cases[2].candidate.deterministic_grade: staged 'fail' but the recorded facts give 'pass'")


def test_resealed_raw_digest_is_refused(stage):
    value = _stage_json(stage)
    for arm in (value["report"]["cases"][3]["candidate"], value["worksheet"][3]["candidate"]):
        arm["raw_sha256"] = "1" * 64
    _write(stage, value, reseal=True)
    _refused(stage, "report.cases[3].candidate: raw evidence in raw/tally-local/candidate changed",
             "manifest.json changed")


def test_resealed_local_path_is_refused(stage):
    value = _stage_json(stage)
    value["report"]["model"] = {"name": "/home/me/models/local.gguf"}
    _write(stage, value, reseal=True)
    _refused(stage, "report.model.name: must not contain a producer-local absolute or home path")


def test_changed_registry_copy_is_refused(stage):
    case = stage / "registry" / "cases" / "jot" / "jot-local" / "case.json"
    case.write_text(case.read_text().replace("add a note", "add two notes"))
    _refused(stage, "the registry copy no longer matches report.fixtures_sha256")


def test_current_inputs_must_be_the_staged_ones(stage, sealed, tmp_path, capsys):
    base = sealed.parent
    answers = {"schema_version": 1, "human_review": "Reviewed.", "cases": [
        {"case_id": c, "comparison": k, "human_review": "Fine."} for c, k in
        (("jot-committed", "same"), ("jot-local", "same"), ("tally-committed", "candidate-only"),
         ("tally-local", "candidate-only"))]}
    (tmp_path / "a.json").write_text(json.dumps(answers))
    args = ["skill-eval", "resume", str(stage), "--answers", str(tmp_path / "a.json"), "--out",
            str(tmp_path / "r.json"), "--registry", str(base / "registry"), "--candidate", str(base / "candidate"),
            "--baseline", str(base / "baseline")]
    assert main(args) == 0
    edited = tmp_path / "candidate"
    shutil.copytree(base / "candidate", edited)
    (edited / "jot" / "SKILL.md").write_text("changed after the run\n")
    assert main([*args[:-4], "--candidate", str(edited)]) == 1
    assert "the candidate skills changed since the run" in capsys.readouterr().err


def test_cli_resume_refuses_a_tampered_stage(stage, tmp_path, capsys):
    (stage / "raw" / "jot-committed" / "baseline" / "transcript.txt").write_text("rewritten\n")
    (tmp_path / "a.json").write_text("{}")
    assert main(["skill-eval", "resume", str(stage), "--answers", str(tmp_path / "a.json"),
                 "--out", str(tmp_path / "report.json")]) == 1
    err = capsys.readouterr().err
    assert "raw/jot-committed/baseline changed since the stage was sealed (transcript.txt changed)" in err
    assert not (tmp_path / "report.json").exists()
