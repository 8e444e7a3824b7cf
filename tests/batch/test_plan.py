"""A batch file read and expanded: names per sweep value, the runs' own subject files, what is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from evalkit.batch import plan_batch, plan_subjects, write_run_subject
from evalkit.errors import InputError
from evalkit.subjects import load_subject

SUBJECT = {"name": "agent", "traces": "traces.jsonl", "verdicts": "verdicts.jsonl", "seed": 7,
           "judge_runs": ["old.jsonl"], "notebooks": ["01_error_analysis", "02_judge_calibration"],
           "parameters": {"01_error_analysis": {"by": "intent", "pairwise_file": "pairs.json",
                                                "eval_run_path": "../runs/eval"}}}


@pytest.fixture
def subject(tmp_path) -> Path:
    folder = tmp_path / "data" / "agent"
    folder.mkdir(parents=True)
    for name in ("traces.jsonl", "verdicts.jsonl", "v1.jsonl", "v2.jsonl", "old.jsonl", "pairs.json"):
        (folder / name).write_text("{}\n", encoding="utf-8")
    (folder / "subject.yaml").write_text(yaml.safe_dump(SUBJECT), encoding="utf-8")
    return folder / "subject.yaml"


def _batch(tmp_path: Path, *entries: dict, name: str = "sweep") -> Path:
    path = tmp_path / "batches" / "sweep.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump({"name": name, "subjects": list(entries)}, sort_keys=False), encoding="utf-8")
    return path


def test_a_sweep_runs_every_combination_named_by_its_values(tmp_path, subject):
    batch = _batch(tmp_path, {"subject": "../data/agent/subject.yaml", "only": ["02_judge_calibration"],
                              "sweep": {"verdicts": {"v1": "v1.jsonl", "v2": "v2.jsonl"}, "seed": [1, 2]},
                              "override": {"01_error_analysis.by": "channel"}})
    plan = plan_batch(batch)
    assert [r.name for r in plan.runs] == ["agent_v1_seed-1", "agent_v1_seed-2", "agent_v2_seed-1", "agent_v2_seed-2"]
    assert plan.runs[2].values == {"01_error_analysis.by": "channel", "verdicts": "v2.jsonl", "seed": 1}
    assert all(r.only == ("02_judge_calibration",) and r.derived for r in plan.runs)


def test_list_values_name_files_by_their_stem(tmp_path, subject):
    plan = plan_batch(_batch(tmp_path, {"subject": "../data/agent/subject.yaml",
                                        "sweep": {"verdicts": ["v1.jsonl", "v2.jsonl"]}}))
    assert [r.name for r in plan.runs] == ["agent_verdicts-v1", "agent_verdicts-v2"]


def test_a_run_gets_a_subject_file_of_its_own_leading_to_the_same_files(tmp_path, subject):
    plan = plan_batch(_batch(tmp_path, {"subject": "../data/agent/subject.yaml", "name": "tuned",
                                        "override": {"verdicts": "v2.jsonl", "seed": 3,
                                                     "02_judge_calibration.method": "bootstrap"}}))
    (run,) = plan.runs
    out = tmp_path / "out"
    path = write_run_subject(run, out, allow_outside=False, batch_file=plan.file)
    assert path == out / "subjects" / "tuned.json"
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["name"] == "tuned" and written["seed"] == 3
    assert written["parameters"]["02_judge_calibration"] == {"method": "bootstrap"}
    resolved = load_subject(path, allow_outside=True)
    base = subject.parent.resolve()
    assert resolved.resolve(resolved.subject.verdicts) == base / "v2.jsonl"
    assert resolved.resolve(resolved.subject.judge_runs[0]) == base / "old.jsonl"
    params = resolved.subject.parameters["01_error_analysis"]
    assert (path.parent / params["pairwise_file"]).resolve() == base / "pairs.json"
    assert (path.parent / params["eval_run_path"]).resolve() == (base / "../runs/eval").resolve()


def test_a_subject_run_as_it_is_keeps_its_own_file(tmp_path, subject):
    (run,) = plan_subjects([subject]).runs
    assert run.name == "agent" and not run.derived
    assert write_run_subject(run, tmp_path / "out", allow_outside=False, batch_file=None) == subject.resolve()


def test_a_value_leading_out_of_the_subjects_folder_is_refused_naming_the_entry(tmp_path, subject):
    shutil.copy(subject.parent / "v1.jsonl", tmp_path / "secret.jsonl")
    plan = plan_batch(_batch(tmp_path, {"subject": "../data/agent/subject.yaml",
                                        "sweep": {"verdicts": {"out": "../../secret.jsonl"}}}))
    with pytest.raises(InputError, match=r"subjects\[0\]\.verdicts: \.\./\.\./secret\.jsonl is outside"):
        write_run_subject(plan.runs[0], tmp_path / "out", allow_outside=False, batch_file=plan.file)
    assert write_run_subject(plan.runs[0], tmp_path / "out", allow_outside=True, batch_file=plan.file).is_file()


def test_a_value_the_subject_contract_refuses_is_named_by_its_entry(tmp_path, subject):
    plan = plan_batch(_batch(tmp_path, {"subject": "../data/agent/subject.yaml", "override": {"seed": "x"}}))
    with pytest.raises(InputError, match=r"sweep\.yaml: subjects\[0\]\.seed: "):
        write_run_subject(plan.runs[0], tmp_path / "out", allow_outside=False, batch_file=plan.file)


@pytest.mark.parametrize(("entries", "message"), [
    ([{"subject": "../data/agent/subject.yaml", "sweep": {"sed": [1]}}], r"sweep\.sed: not a subject field"),
    ([{"subject": "../data/agent/subject.yaml", "sweep": {"seed": []}}], r"sweep\.seed: give at least one value"),
    ([{"subject": "../data/agent/subject.yaml", "override": {"seed": 1}, "sweep": {"seed": [2]}}],
     r"sweep\.seed: also set under override"),
    ([{"subject": "../data/agent/subject.yaml"}, {"subject": "../data/agent/subject.yaml"}],
     r"subjects\[1\]: two runs are named 'agent' \(the other is subjects\[0\]\)"),
    ([{"subject": "../data/agent/subject.yaml", "name": "history"}], r"names a folder the batch keeps"),
    ([{"subject": "../data/agent/nope.yaml"}], r"subjects\[0\]\.subject: subject file not found"),
    ([{"subject": "../data/agent/subject.yaml", "sweep": {"judge": [{"provider": "a", "model": "b"}]}}],
     r"cannot name a run: give the values as a mapping"),
])
def test_a_bad_batch_is_refused_before_anything_runs(tmp_path, subject, entries, message):
    with pytest.raises(InputError, match=message):
        plan_batch(_batch(tmp_path, *entries))


def test_an_unreadable_subject_is_planned_as_a_failed_run_not_a_stopped_batch(tmp_path, subject):
    broken = subject.parent / "broken.yaml"
    broken.write_text("name: [\n", encoding="utf-8")
    plan = plan_subjects([subject, broken])
    assert [r.name for r in plan.runs] == ["agent", "broken"]
    assert plan.runs[0].error is None and "broken.yaml" in plan.runs[1].error
