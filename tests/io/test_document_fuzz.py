"""Strict JSON/JSONL/YAML documents and `validate`, fed odd files: a clean InputError naming the file, or values.

Whatever is read must be a value evalkit can write back (canonical JSON) and read again unchanged.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.contract_files import validate_file
from evalkit.io import InputError, canonical_dumps, canonical_line
from evalkit.io.documents import read_records
from evalkit.io.strict_json import loads_strict

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.function_scoped_fixture])

# Pieces that have broken a reader before, glued together at random.
JSON_PIECES = st.sampled_from([
    "{", "}", "[", "]", ",", ":", '"id"', '"a"', '"\\ud800"', '"\\udc00\\ud800"', '"\\u003a"', "1e400", "-1e400",
    "123456789012345678901234567890", "1" * 5000, "NaN", "Infinity", "null", "true", "1.5", "-0", '"x"',
    "\ufeff", "\x00", " ", "\n", '{"id": 1, "id": 2}', "[" * 120 + "]" * 120, "[" * 100 + "]" * 100,
])
YAML_PIECES = st.sampled_from([
    "a: 1\n", "? [a, b]\n: x\n", "1: x\n", "yes: x\n", "x: .inf\n", "x: .nan\n", "x: !!binary aGk=\n",
    "x: !!set {a, b}\n", "x: 2024-01-01\n", "x: " + "9" * 6000 + "\n", "x: &a [1]\ny: *a\n", "<<: {a: 1}\n",
    "x: \"\\ud800\"\n", "---\n", "- 1\n", "a: 1\na: 2\n", "x: [" * 60 + "]" * 60 + "\n", "\t", ": :\n", "%YAML 1.1\n",
    "x: !!python/object:os.system {}\n", "x: 1e400\n", "x: 1.0e+400\n",
])


def _json_texts() -> st.SearchStrategy[bytes]:
    glued = st.lists(JSON_PIECES, max_size=8).map(lambda parts: "".join(parts).encode("utf-8", "surrogatepass"))
    return st.one_of(glued, st.binary(max_size=64))


def _yaml_texts() -> st.SearchStrategy[bytes]:
    glued = st.lists(YAML_PIECES, max_size=6).map(lambda parts: "".join(parts).encode("utf-8", "surrogatepass"))
    return st.one_of(glued, st.binary(max_size=64))


def _writes_back_unchanged(value: object) -> None:
    assert loads_strict(canonical_dumps(value)) == value
    assert loads_strict(canonical_line(value)) == value


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml"])
def test_documents_read_cleanly_or_fail_naming_the_file(tmp_path_factory: pytest.TempPathFactory,
                                                       suffix: str) -> None:
    @SETTINGS
    @given(_yaml_texts() if suffix == ".yaml" else _json_texts())
    def check(data: bytes) -> None:
        path = tmp_path_factory.mktemp("doc") / f"x{suffix}"
        path.write_bytes(data)
        try:
            records = read_records(path)
        except InputError as exc:
            assert exc.file == str(path), exc.render()
            return
        for record in records:
            _writes_back_unchanged(record.value)

    check()


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml"])
def test_validate_reports_problems_and_never_raises(tmp_path_factory: pytest.TempPathFactory, suffix: str) -> None:
    label = json.dumps({"traceId": "t-1", "label": "pass", "annotator": "ana"})

    @SETTINGS
    @given(st.one_of(_yaml_texts() if suffix == ".yaml" else _json_texts(),
                     st.sampled_from([label.replace('"pass"', p) for p in ('"\\ud800"', "1e400", "[" * 300 + "]" * 300,
                                                                            "99999999999999999999999")])
                     .map(str.encode)))
    def check(data: bytes) -> None:
        path = tmp_path_factory.mktemp("val") / f"human-label{suffix}"
        path.write_bytes(data)
        _kind, _count, problems = validate_file(path)
        assert all(p.file == str(path) for p in problems), [p.render() for p in problems]

    check()
