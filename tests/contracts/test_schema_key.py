"""Every contract file may name its JSON Schema under ``$schema`` (for editors); it is kept, never invented."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.cli.main import main
from evalkit.contracts import CONTRACTS
from evalkit.io.canonical import canonical_dumps

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "contracts"
NOT_A_FILE_OBJECT = {"skill-eval-facts", "judge-output"}  # a JSON array; the judge's reply to a model


@pytest.mark.parametrize("kind", sorted(set(CONTRACTS) - NOT_A_FILE_OBJECT))
def test_a_file_naming_its_schema_validates_and_keeps_it(kind, tmp_path):
    model = CONTRACTS[kind]
    assert "$schema" in model.model_json_schema()["properties"]
    assert "$schema" not in json.dumps(model.model_json_schema().get("required", []))


@pytest.mark.parametrize("name", ["eval-matrix.json", "criterion-verdict.json", "subject.json",
                                  "skill-eval-policy.json", "dataset.json"])
def test_a_schema_key_round_trips_through_validate_and_the_model(name, tmp_path, capsys):
    value = json.loads((EXAMPLES / name).read_text())
    value = {"$schema": f"schemas/{name.removesuffix('.json')}.schema.json", **value}
    path = tmp_path / name
    path.write_text(canonical_dumps(value))
    assert main(["validate", str(path)]) == 0, capsys.readouterr().err
    model = CONTRACTS[name.removesuffix(".json")].model_validate(value)
    assert model.to_json_obj()["$schema"] == value["$schema"]
    assert model.model_dump(mode="json", by_alias=True)["$schema"] == value["$schema"]


def test_a_model_built_in_code_writes_no_schema_key():
    from evalkit.contracts import HumanLabel

    label = HumanLabel(trace_id="t1", label="pass")
    assert "$schema" not in label.model_dump(mode="json", by_alias=True)
    assert "$schema" not in label.to_json_obj()


def test_the_judge_reply_schema_sent_to_models_is_unchanged():
    from evalkit.contracts import JudgeOutput

    assert "$schema" not in JudgeOutput.model_json_schema()["properties"]


def test_schema_files_name_the_key_editors_look_for(tmp_path, capsys):
    shutil.rmtree(tmp_path / "schemas", ignore_errors=True)
    assert main(["schema", "--out", str(tmp_path / "schemas")]) == 0
    schema = json.loads((tmp_path / "schemas" / "eval-matrix.schema.json").read_text())
    assert {"type": "string"} in schema["properties"]["$schema"]["anyOf"]
