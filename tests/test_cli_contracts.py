"""``evalkit schema --out DIR`` and ``evalkit validate FILE... [--kind KIND]`` end to end, on real files."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.cli import main
from evalkit.contracts.registry import CONTRACTS, LIST_ROOTED
from evalkit.io import canonical_dumps, read_json_strict
from evalkit.schema import contract_schema

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "contracts"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.json"))

AGENT_EVAL_KINDS = frozenset({
    "eval-matrix", "dataset", "behavior-tree", "flow-graph", "expected-flow", "methodology-review",
    "edd-change-request", "change-request-response", "criterion-verdict", "human-label", "validation-result",
    "trace",
})
SKILL_EVAL_KINDS = frozenset({
    "skill-eval-case", "skill-eval-facts", "skill-eval-stage", "skill-eval-answers", "skill-eval-report",
    "skill-eval-seed", "skill-eval-policy",
})
ALL_KINDS = AGENT_EVAL_KINDS | SKILL_EVAL_KINDS
"""The kinds the issue requires; the registry may hold more, and ``schema`` writes one file for each."""


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """Run the CLI in-process; (exit code, stdout, stderr)."""
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    return code, out.out, out.err


def lines_of(out: str, err: str) -> list[str]:
    return (out + err).splitlines()


def example(kind: str) -> Any:
    return read_json_strict(EXAMPLES / f"{kind}.json")


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    return path


def set_at(value: Any, where: list[str | int], new: Any) -> None:
    for step in where[:-1]:
        value = value[step]
    value[where[-1]] = new


def del_at(value: Any, where: list[str | int]) -> None:
    for step in where[:-1]:
        value = value[step]
    del value[where[-1]]


def assert_problem(code: int, out: str, err: str, file: Path | str, field: str, *words: str) -> str:
    """Exit 1 and a line ``FILE: field: ...`` (containing ``words``); returns that line."""
    assert code == 1, (out, err)
    prefix = f"{file}: {field}: "
    hits = [line for line in lines_of(out, err) if line.startswith(prefix)]
    assert hits, f"no line starting {prefix!r} in:\n{out}{err}"
    for word in words:
        assert any(word in h for h in hits), (word, hits)
    assert f"{file}: ok" not in out
    return hits[0]


def property_names(schema: Any) -> set[str]:
    names: set[str] = set()
    if isinstance(schema, dict):
        for key, sub in schema.items():
            if key == "properties" and isinstance(sub, dict):
                names.update(sub)
                for prop in sub.values():
                    names |= property_names(prop)
            else:
                names |= property_names(sub)
    elif isinstance(schema, list):
        for sub in schema:
            names |= property_names(sub)
    return names


def required_fields(kind: str) -> list[str]:
    """The top-level required field names of a kind (of its items for a list-rooted kind)."""
    schema = contract_schema(kind)
    if schema.get("type") == "array":
        ref = schema["items"]["$ref"].rsplit("/", 1)[-1]
        schema = schema["$defs"][ref]
    return sorted(schema["required"])


# --- schema ---------------------------------------------------------------------------------------


def test_registry_knows_every_required_contract_kind() -> None:
    assert set(CONTRACTS) >= ALL_KINDS


def test_schema_writes_exactly_one_file_per_kind(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_dir = tmp_path / "schemas"
    code, out, err = run(capsys, "schema", "--out", out_dir)
    assert code == 0, err
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(f"{k}.schema.json" for k in CONTRACTS)
    assert {f"{k}.schema.json" for k in ALL_KINDS} <= {p.name for p in out_dir.iterdir()}
    assert f"wrote {len(CONTRACTS)} schemas" in out


@pytest.fixture(scope="module")
def schema_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out_dir = tmp_path_factory.mktemp("schemas")
    assert main(["schema", "--out", str(out_dir)]) == 0
    return out_dir


@pytest.mark.parametrize("kind", list(CONTRACTS))
def test_each_schema_is_canonical_json_with_dialect(schema_dir: Path, kind: str) -> None:
    path = schema_dir / f"{kind}.schema.json"
    schema = read_json_strict(path)
    assert path.read_text(encoding="utf-8") == canonical_dumps(schema)
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert schema.get("type") in ("object", "array")


@pytest.mark.parametrize("kind", sorted(AGENT_EVAL_KINDS))
def test_agent_eval_schemas_use_camel_case_names(schema_dir: Path, kind: str) -> None:
    schema = read_json_strict(schema_dir / f"{kind}.schema.json")
    names = property_names(schema)
    assert names
    assert not [n for n in names if "_" in n], names
    assert not [n for n in schema.get("required", []) if "_" in n]


@pytest.mark.parametrize("kind", sorted(SKILL_EVAL_KINDS))
def test_skill_eval_schemas_use_snake_case_names(schema_dir: Path, kind: str) -> None:
    names = property_names(read_json_strict(schema_dir / f"{kind}.schema.json"))
    assert names
    assert not [n for n in names if n != n.lower()], names


@pytest.mark.parametrize(("kind", "names"), [
    ("eval-matrix", {"designPrinciples", "generatedAt", "componentType", "checkMethod", "passCondition"}),
    ("criterion-verdict", {"criterionId", "traceId", "blockedBy", "independentVerify"}),
    ("validation-result", {"judgeModel", "labelCount", "observedPassRate", "correctionValid"}),
    ("skill-eval-report", {"session_id", "tested_head", "deterministic_checks", "human_review"}),
    ("skill-eval-facts", {"exit_code", "stdout_sha256", "storage_paths", "validation_passed"}),
    ("skill-eval-seed", {"schema_version", "storage_mode", "git_init", "tool_init"}),
    ("skill-eval-policy", {"schema_version", "tool", "operations", "init", "storage_modes", "baseline_skills"}),
])
def test_schemas_name_properties_as_on_disk(schema_dir: Path, kind: str, names: set[str]) -> None:
    assert names <= property_names(read_json_strict(schema_dir / f"{kind}.schema.json"))


def test_top_level_required_use_on_disk_names(schema_dir: Path) -> None:
    verdict = read_json_strict(schema_dir / "criterion-verdict.schema.json")
    assert {"criterionId", "traceId", "result", "confidence", "critique"} <= set(verdict["required"])
    report = read_json_strict(schema_dir / "skill-eval-report.schema.json")
    assert {"session_id", "generated_at", "outcome"} <= set(report["required"])


def test_second_schema_run_is_byte_identical(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_dir = tmp_path / "s"
    assert run(capsys, "schema", "--out", out_dir)[0] == 0
    first = {p.name: p.read_bytes() for p in out_dir.iterdir()}
    assert run(capsys, "schema", "--out", out_dir)[0] == 0
    second = {p.name: p.read_bytes() for p in out_dir.iterdir()}
    assert first == second  # same bytes, and no temp files left behind
    other = tmp_path / "t"
    assert run(capsys, "schema", "--out", other)[0] == 0
    assert {p.name: p.read_bytes() for p in other.iterdir()} == first


def test_schema_out_onto_a_file_is_one_clear_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    not_a_folder = tmp_path / "taken"
    not_a_folder.write_text("keep me\n")
    code, out, err = run(capsys, "schema", "--out", not_a_folder)
    assert code == 1
    assert len(err.strip().splitlines()) == 1
    assert str(not_a_folder) in err and "cannot write" in err
    assert not_a_folder.read_text() == "keep me\n"


def test_schema_overwrites_a_stale_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    stale = tmp_path / "human-label.schema.json"
    stale.write_text("stale\n")
    assert run(capsys, "schema", "--out", tmp_path)[0] == 0
    assert read_json_strict(stale)["$schema"]


# --- validate: the examples -----------------------------------------------------------------------


def test_examples_are_one_canonical_file_per_kind() -> None:
    kinds = {p.stem for p in EXAMPLE_FILES}
    assert kinds <= set(CONTRACTS)
    assert ALL_KINDS - kinds <= {"trace"}
    for path in EXAMPLE_FILES:
        assert path.read_text(encoding="utf-8") == canonical_dumps(read_json_strict(path)), path


def test_validate_all_examples_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "validate", *EXAMPLE_FILES)
    assert code == 0, err
    assert err == ""
    for path in EXAMPLE_FILES:
        assert f"{path}: ok (1 {path.stem} record)" in out


@pytest.mark.parametrize("source", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_neutral_name_is_detected_by_content(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                             source: Path) -> None:
    kind = source.stem
    neutral = tmp_path / f"x{source.suffix}"
    shutil.copyfile(source, neutral)
    code, out, err = run(capsys, "validate", neutral)
    assert code == 0, err
    assert f"{neutral}: ok (1 {kind} record)" in out
    code, out, err = run(capsys, "validate", "--kind", kind, neutral)
    assert code == 0, err
    assert f"(1 {kind} record)" in out


def test_record_of_no_known_kind_asks_for_kind(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    neutral = tmp_path / "x.json"
    neutral.write_text('{"something": 1}\n', encoding="utf-8")
    code, out, err = run(capsys, "validate", neutral)
    assert code == 1
    problems = [line for line in lines_of(out, err) if line.startswith(f"{neutral}: ")]
    assert problems and all("--kind" in line for line in problems)


@pytest.mark.slow
@pytest.mark.parametrize("source", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_example_as_yaml_validates_too(capsys: pytest.CaptureFixture[str], tmp_path: Path, source: Path) -> None:
    as_yaml = tmp_path / "x.yaml"
    as_yaml.write_text(yaml.safe_dump(read_json_strict(source), sort_keys=False), encoding="utf-8")
    code, out, err = run(capsys, "validate", "--kind", source.stem, as_yaml)
    assert code == 0, err


def test_content_that_fits_no_kind_asks_for_kind(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = write_json(tmp_path / "x.json", {"hello": "world"})
    code, out, err = run(capsys, "validate", f)
    assert code == 1
    problems = [line for line in lines_of(out, err) if line.startswith(f"{f}: ")]
    assert len(problems) == 1
    assert "--kind" in problems[0]


def test_content_that_fits_several_kinds_is_ambiguous(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    both = {**example("criterion-verdict"), **example("validation-result")}
    f = write_json(tmp_path / "x.json", both)
    code, out, err = run(capsys, "validate", f)
    assert code == 1
    line = next(line for line in lines_of(out, err) if line.startswith(f"{f}: "))
    assert "ambiguous" in line and "criterion-verdict" in line and "validation-result" in line
    assert "--kind" in line


def test_file_name_declares_the_kind(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "run1.criterion-verdict.json"
    shutil.copyfile(EXAMPLES / "criterion-verdict.json", f)
    code, out, _ = run(capsys, "validate", f)
    assert code == 0
    assert "(1 criterion-verdict record)" in out


def test_kind_option_overrides_detection(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    shutil.copyfile(EXAMPLES / "human-label.json", f)
    code, out, err = run(capsys, "validate", "--kind", "criterion-verdict", f)
    assert_problem(code, out, err, f, "result", "required")


def test_unknown_kind_is_rejected_by_argparse(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["validate", "--kind", "no-such-kind", str(EXAMPLES / "human-label.json")])
    assert info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_validate_without_files_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["validate"])
    assert info.value.code == 2


# --- validate: broken copies ----------------------------------------------------------------------

MISSING_CASES = [(p.stem, field) for p in EXAMPLE_FILES for field in required_fields(p.stem)]


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "field"), MISSING_CASES, ids=[f"{k}-{f}" for k, f in MISSING_CASES])
def test_missing_required_field(capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, field: str) -> None:
    value = example(kind)
    at: list[str | int] = [0, field] if kind in LIST_ROOTED else [field]
    del_at(value, at)
    f = write_json(tmp_path / f"{kind}.json", value)
    code, out, err = run(capsys, "validate", f)
    path = f"[0].{field}" if kind in LIST_ROOTED else field
    assert_problem(code, out, err, f, path, "required field is missing")


@pytest.mark.parametrize("source", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_extra_field(capsys: pytest.CaptureFixture[str], tmp_path: Path, source: Path) -> None:
    kind = source.stem
    value = example(kind)
    name = "unexpected_field" if kind in SKILL_EVAL_KINDS else "unexpectedField"
    target = value[0] if kind in LIST_ROOTED else value
    target[name] = "surprise"
    f = write_json(tmp_path / f"{kind}.json", value)
    code, out, err = run(capsys, "validate", f)
    path = f"[0].{name}" if kind in LIST_ROOTED else name
    assert_problem(code, out, err, f, path, "unknown field")


ENUM_CASES: list[tuple[str, list[str | int], str]] = [
    ("criterion-verdict", ["result"], "result"),
    ("human-label", ["label"], "label"),
    ("human-label", ["split"], "split"),
    ("validation-result", ["status"], "status"),
    ("change-request-response", ["status"], "status"),
    ("eval-matrix", ["components", 0, "componentType"], "components[0].componentType"),
    ("eval-matrix", ["components", 0, "criteria", 1, "severity"], "components[0].criteria[1].severity"),
    ("behavior-tree", ["nodes", 0, "decisionType"], "nodes[0].decisionType"),
    ("criterion-verdict", ["assumptions", 1, "kind"], "assumptions[1].kind"),
    ("skill-eval-seed", ["storage_mode"], "storage_mode"),
    ("skill-eval-answers", ["cases", 0, "comparison"], "cases[0].comparison"),
    ("skill-eval-case", ["oracle", "assertions", 0, "predicate"], "oracle.assertions[0].predicate"),
    ("skill-eval-policy", ["storage_modes", 1], "storage_modes[1]"),
]


@pytest.mark.parametrize(("kind", "where", "field"), ENUM_CASES, ids=[f"{k}-{f}" for k, _, f in ENUM_CASES])
def test_wrong_enum_value(capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str,
                          where: list[str | int], field: str) -> None:
    value = example(kind)
    set_at(value, where, "not-a-choice")
    f = write_json(tmp_path / "x.json", value)
    code, out, err = run(capsys, "validate", "--kind", kind, f)
    assert_problem(code, out, err, f, field, "'not-a-choice'")


def _verdict_without_blocked_by() -> Any:
    value = example("criterion-verdict")
    assert value["result"] == "uncertain"
    del value["blockedBy"]
    return value


def _verdict_with_null_blocked_by() -> Any:
    value = example("criterion-verdict")
    value["blockedBy"] = None
    return value


def _interval_upside_down() -> Any:
    value = example("validation-result")
    value["ci"]["lo"], value["ci"]["hi"] = 0.9, 0.1
    return value


def _tree_with_unknown_root() -> Any:
    value = example("behavior-tree")
    value["root"] = "n-nowhere"
    return value


def _tree_edge_to_unknown_node() -> Any:
    value = example("behavior-tree")
    value["nodes"][0]["edges"][1]["to"] = "n-nowhere"
    return value


def _seed_with_wrong_init() -> Any:
    value = example("skill-eval-seed")
    value["tool_init"] = ["init", ""]
    return value


def _policy_without_local_init() -> Any:
    value = example("skill-eval-policy")
    del value["init"]["local"]
    return value


def _seed_local_without_decoy() -> Any:
    value = example("skill-eval-seed")
    assert value["storage_mode"] == "local"
    del value["decoy"]
    return value


def _answers_with_duplicate_case() -> Any:
    value = example("skill-eval-answers")
    value["cases"][1]["case_id"] = value["cases"][0]["case_id"]
    return value


def _facts_with_duplicate_action() -> Any:
    value = example("skill-eval-facts")
    value[1]["action"] = value[0]["action"]
    return value


CROSS_FIELD_CASES = [
    ("criterion-verdict", _verdict_without_blocked_by, "blockedBy", "uncertain"),
    ("criterion-verdict", _verdict_with_null_blocked_by, "blockedBy", "uncertain"),
    ("validation-result", _interval_upside_down, "ci.hi", "lo"),
    ("behavior-tree", _tree_with_unknown_root, "root", "n-nowhere"),
    ("behavior-tree", _tree_edge_to_unknown_node, "nodes[0].edges[1].to", "n-nowhere"),
    ("skill-eval-seed", _seed_with_wrong_init, "tool_init[1]", "non-empty"),
    ("skill-eval-policy", _policy_without_local_init, "init.local", "required"),
    ("skill-eval-seed", _seed_local_without_decoy, "decoy", "required"),
    ("skill-eval-answers", _answers_with_duplicate_case, "cases[1].case_id", "duplicate"),
    ("skill-eval-facts", _facts_with_duplicate_action, "[1].action", "duplicate"),
]


@pytest.mark.parametrize(("kind", "make", "field", "word"), CROSS_FIELD_CASES,
                         ids=[f"{k}-{m.__name__.strip('_')}" for k, m, _, _ in CROSS_FIELD_CASES])
def test_cross_field_rule(capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, make: Any,
                          field: str, word: str) -> None:
    f = write_json(tmp_path / f"{kind}.json", make())
    code, out, err = run(capsys, "validate", f)
    assert_problem(code, out, err, f, field, word)


def test_array_of_records_names_the_item(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = example("criterion-verdict")
    f = write_json(tmp_path / "verdicts.json", [good, good, _verdict_without_blocked_by()])
    code, out, err = run(capsys, "validate", "--kind", "criterion-verdict", f)
    assert_problem(code, out, err, f, "[2].blockedBy", "uncertain")
    assert not [line for line in lines_of(out, err) if line.startswith((f"{f}: [0]", f"{f}: [1]"))]


def test_valid_and_invalid_files_together(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = write_json(tmp_path / "criterion-verdict.json", _verdict_without_blocked_by())
    good = EXAMPLES / "human-label.json"
    code, out, err = run(capsys, "validate", good, bad)
    assert_problem(code, out, err, bad, "blockedBy")
    assert f"{good}: ok" in out
    assert "1 of 2" in err


# --- validate: JSONL and YAML line numbers --------------------------------------------------------


@pytest.mark.parametrize("name", ["human-labels.jsonl", "x.jsonl"])
def test_jsonl_bad_third_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str) -> None:
    label = example("human-label")
    records = [dict(label, traceId=f"t-{i}") for i in range(5)]
    records[2]["label"] = "probably"
    f = tmp_path / name
    f.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    code, out, err = run(capsys, "validate", f)
    assert code == 1
    problems = [line for line in lines_of(out, err) if line.startswith(f"{f}:")]
    assert len(problems) == 1
    assert problems[0].startswith(f"{f}:3: label: ")
    assert "'probably'" in problems[0]


def test_jsonl_valid_counts_records(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    label = example("human-label")
    f = tmp_path / "human-labels.jsonl"
    f.write_text("".join(json.dumps(dict(label, traceId=f"t-{i}")) + "\n" for i in range(4)) + "\n")
    code, out, err = run(capsys, "validate", f)
    assert code == 0, err
    assert "(4 human-label records)" in out


def test_jsonl_syntax_error_names_its_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    label = json.dumps(example("human-label"))
    f = tmp_path / "human-labels.jsonl"
    # The record stops short at the end of line 3: the error is still on line 3, not the next one.
    f.write_text(f'{label}\n{label}\n{{"traceId": "t-3", "label": \n{label}\n', encoding="utf-8")
    code, out, err = run(capsys, "validate", f)
    assert code == 1
    problems = [line for line in lines_of(out, err) if line.startswith(f"{f}")]
    assert len(problems) == 1
    assert problems[0].startswith(f"{f}:3: ")


@pytest.mark.parametrize("name", ["eval-matrix.yaml", "x.yml"])
def test_yaml_eval_matrix_bad_field_reports_its_own_line(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                          name: str) -> None:
    matrix = example("eval-matrix")
    f = tmp_path / name
    f.write_text(yaml.safe_dump(matrix, sort_keys=False), encoding="utf-8")
    assert run(capsys, "validate", f)[0] == 0
    matrix["components"][0]["criteria"][0]["severity"] = "URGENT"
    text = yaml.safe_dump(matrix, sort_keys=False)
    f.write_text(text, encoding="utf-8")
    at = next(i for i, line in enumerate(text.splitlines(), start=1) if "severity: URGENT" in line)
    assert at > 1
    code, out, err = run(capsys, "validate", f)
    line = assert_problem(code, out, err, f"{f}:{at}", "components[0].criteria[0].severity", "'URGENT'")
    assert line.startswith(f"{f}:{at}: ")


def test_yaml_second_document_reports_its_own_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = example("eval-matrix")
    bad = copy.deepcopy(good)
    bad["designPrinciples"] = "not a list"
    text = yaml.safe_dump_all([good, bad], explicit_start=True, sort_keys=False)
    f = tmp_path / "eval-matrix.yaml"
    f.write_text(text, encoding="utf-8")
    starts = [i for i, line in enumerate(text.splitlines(), start=1) if line.startswith("---")]
    assert len(starts) == 2
    code, out, err = run(capsys, "validate", f)
    assert code == 1
    problems = [line for line in lines_of(out, err) if line.startswith(f"{f}:")]
    assert len(problems) == 2
    # a matrix is one document: the second is refused as every command refuses it, and still checked
    assert problems[0].startswith(f"{f}:") and problems[0].endswith("expected one document, found 2")
    at = next(i for i, line in enumerate(text.splitlines(), start=1) if line.startswith("designPrinciples: not"))
    assert at > starts[1]
    assert problems[1].startswith(f"{f}:{at}: designPrinciples: ")


def test_yaml_valid_multi_document_counts_records(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    label = example("human-label")
    f = tmp_path / "x.yaml"
    f.write_text(yaml.safe_dump_all([label, dict(label, traceId="t-2")], explicit_start=True), encoding="utf-8")
    code, out, err = run(capsys, "validate", f)
    assert code == 0, err
    assert "(2 human-label records)" in out


# --- validate: unreadable and ambiguous input -----------------------------------------------------


def _bad_input(tmp_path: Path, case: str) -> tuple[Path, str]:
    label = json.dumps(example("human-label"))
    if case == "json-duplicate-key":
        f = tmp_path / "human-label.json"
        f.write_text('{"traceId": "a", "label": "pass", "traceId": "b"}\n')
        return f, "duplicate key 'traceId'"
    if case == "yaml-duplicate-key":
        f = tmp_path / "human-label.yaml"
        f.write_text("traceId: a\nlabel: pass\ntraceId: b\n")
        return f, "duplicate key 'traceId'"
    if case == "jsonl-duplicate-key":
        f = tmp_path / "human-labels.jsonl"
        f.write_text(f'{label}\n{{"traceId": "a", "label": "pass", "label": "fail"}}\n')
        return f, "duplicate key 'label'"
    if case == "json-bom":
        f = tmp_path / "human-label.json"
        f.write_bytes(b"\xef\xbb\xbf" + label.encode())
        return f, "byte-order mark"
    if case == "yaml-bom":
        f = tmp_path / "human-label.yaml"
        f.write_bytes(b"\xef\xbb\xbftraceId: a\nlabel: pass\n")
        return f, "byte-order mark"
    if case == "jsonl-bom":
        f = tmp_path / "human-labels.jsonl"
        f.write_bytes(b"\xef\xbb\xbf" + label.encode() + b"\n")
        return f, "byte-order mark"
    if case == "trailing-data":
        f = tmp_path / "human-label.json"
        f.write_text(f"{label}\n{label}\n")
        return f, "trailing data"
    if case == "missing":
        return tmp_path / "does-not-exist.json", "cannot read file"
    if case == "directory":
        d = tmp_path / "folder.json"
        d.mkdir()
        return d, "cannot read file"
    if case == "directory-jsonl":
        d = tmp_path / "folder.jsonl"
        d.mkdir()
        return d, "cannot read file"
    if case == "missing-yaml":
        return tmp_path / "nope.yaml", "cannot read file"
    if case == "not-utf8":
        f = tmp_path / "human-label.json"
        f.write_bytes(b'{"traceId": "caf\xe9", "label": "pass"}')
        return f, "UTF-8"
    if case == "empty-json":
        f = tmp_path / "human-label.json"
        f.write_text("")
        return f, "Expecting value"
    if case == "yaml-syntax":
        f = tmp_path / "human-label.yaml"
        f.write_text("traceId: [a\nlabel: pass\n")
        return f, "invalid YAML"
    if case == "deep-json":
        f = tmp_path / "human-label.json"
        f.write_text("[" * 100_000 + "]" * 100_000)
        return f, "nested too deeply"
    if case == "deep-yaml":
        f = tmp_path / "human-label.yaml"
        f.write_text("[" * 100_000 + "]" * 100_000 + "\n")
        return f, "nested too deeply"
    if case == "nan":
        f = tmp_path / "validation-result.json"
        f.write_text(json.dumps(example("validation-result")).replace("0.91", "NaN"))
        return f, "NaN"
    raise AssertionError(case)


BAD_INPUTS = ["json-duplicate-key", "yaml-duplicate-key", "jsonl-duplicate-key", "json-bom", "yaml-bom",
              "jsonl-bom", "trailing-data", "missing", "directory", "directory-jsonl", "missing-yaml",
              "not-utf8", "empty-json", "yaml-syntax", "nan", "deep-json", "deep-yaml"]


@pytest.mark.slow
@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_gives_one_clear_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str) -> None:
    f, phrase = _bad_input(tmp_path, case)
    code, out, err = run(capsys, "validate", f)
    assert code == 1
    problems = [line for line in lines_of(out, err) if line.startswith(str(f))]
    assert len(problems) == 1, problems
    assert phrase in problems[0]
    assert "Traceback" not in out + err
    assert "1 of 1 file(s) invalid" in err


def test_bad_input_line_numbers(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for case, line in [("yaml-duplicate-key", 3), ("jsonl-duplicate-key", 2), ("jsonl-bom", 1),
                       ("trailing-data", 2)]:
        folder = tmp_path / case
        folder.mkdir()
        f, _ = _bad_input(folder, case)
        code, out, err = run(capsys, "validate", f)
        assert code == 1
        assert f"{f}:{line}: " in err, (case, err)


def test_bad_input_with_kind_is_still_one_clear_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    f.write_text('{"traceId": "a", "traceId": "b", "label": "pass"}')
    code, out, err = run(capsys, "validate", "--kind", "human-label", f)
    assert code == 1
    assert [line for line in lines_of(out, err) if line.startswith(str(f))] == [f"{f}:1: duplicate key 'traceId' (in the object at column 1)"]


def test_empty_jsonl_has_no_records(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "human-labels.jsonl"
    f.write_text("\n\n")
    code, out, err = run(capsys, "validate", f)
    assert code == 1
    assert f"{f}: no records found" in err


# --- the console entry point ----------------------------------------------------------------------


def _evalkit_command() -> list[str]:
    script = Path(sys.executable).parent / "evalkit"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "evalkit.cli"]


def test_console_entry_point_runs(tmp_path: Path) -> None:
    cmd = _evalkit_command()
    ok = subprocess.run([*cmd, "validate", str(EXAMPLES / "criterion-verdict.json")],
                        capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "ok (1 criterion-verdict record)" in ok.stdout

    bad = write_json(tmp_path / "criterion-verdict.json", _verdict_without_blocked_by())
    failed = subprocess.run([*cmd, "validate", str(bad)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert failed.returncode == 1
    assert f"{bad}: blockedBy: " in failed.stderr
    assert "Traceback" not in failed.stdout + failed.stderr

    schemas = subprocess.run([*cmd, "schema", "--out", str(tmp_path / "schemas")],
                             capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert schemas.returncode == 0, schemas.stderr
    assert len(list((tmp_path / "schemas").glob("*.schema.json"))) == len(CONTRACTS)

    usage = subprocess.run([*cmd, "validate", "--kind", "nope", str(bad)], capture_output=True, text=True,
                           cwd=tmp_path, timeout=120)
    assert usage.returncode == 2


def test_a_criterion_without_evidence_source_is_refused_naming_it_and_saying_how_to_add_it(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    matrix = example("eval-matrix")
    criterion = matrix["components"][0]["criteria"][1]
    del criterion["evidenceSource"]
    criterion["criterionId"] = "refund-within-total"
    f = tmp_path / "eval-matrix.json"
    f.write_text(json.dumps(matrix), encoding="utf-8")
    code, out, err = run(capsys, "validate", f)
    line = assert_problem(code, out, err, str(f), "components[0].criteria[1]",
                          "criterion refund-within-total has no evidenceSource")
    assert "add evidenceSource: 'Intended behavior: ...'" in line
    criterion["evidenceSource"] = "   "
    f.write_text(json.dumps(matrix), encoding="utf-8")
    assert run(capsys, "validate", f)[0] == 1                 # blank is no evidence either
