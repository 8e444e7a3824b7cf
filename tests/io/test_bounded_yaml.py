"""The one YAML reader's bounds: alias bombs, alias counts, self-containing values, sizes per kind, lines."""

from __future__ import annotations

import time

import pytest

from evalkit.errors import InputError
from evalkit.io.documents import read_records
from evalkit.io.yaml_text import MAX_ALIAS_VALUES, MAX_ALIASES, YAML_DEFAULT_LIMIT, yaml_documents, yaml_limit

LAUGHS = "".join(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9) if prev else ', '.join(['lol'] * 9)}]\n"
                 for prev, name in zip([None, *"abcdefgh"], "abcdefghi", strict=True))


def _error(text: str, **kwargs) -> str:
    with pytest.raises(InputError) as caught:
        yaml_documents(text.encode(), file="f.yaml", **kwargs)
    return caught.value.render()


def test_billion_laughs_is_refused_at_once_and_says_why():
    started = time.monotonic()
    message = _error(LAUGHS)
    assert time.monotonic() - started < 1
    assert message.startswith("f.yaml:1: YAML whose aliases expand to 490,329,064 values") and "alias bomb" in message


def test_aliases_that_add_few_values_are_kept():
    doc = yaml_documents(b"base: &b {x: 1, y: [1, 2]}\nthis: *b\nthat: {<<: *b, y: 3}\n", file="f.yaml")[0]
    assert doc.value == {"base": {"x": 1, "y": [1, 2]}, "this": {"x": 1, "y": [1, 2]}, "that": {"x": 1, "y": 3}}


def test_the_values_aliases_add_are_bounded_even_without_nesting():
    block = ", ".join(["v"] * 1000)
    text = f"a: &a [{block}]\nb: [{', '.join(['*a'] * (MAX_ALIAS_VALUES // 1000 + 1))}]\n"
    assert "alias bomb" in _error(text)


def test_alias_uses_are_counted():
    text = "a: &a 1\nb: [" + ", ".join(["*a"] * (MAX_ALIASES + 1)) + "]\n"
    assert f"more than {MAX_ALIASES} alias uses" in _error(text)


def test_a_value_that_contains_itself_is_refused():
    assert "a value inside itself" in _error("a: &a [1, *a]\n")


def test_deep_nesting_through_aliases_is_refused():
    lines = ["l0: &l0 [x]"] + [f"l{i}: &l{i} [*l{i - 1}]" for i in range(1, 120)]
    assert "nested too deeply" in _error("\n".join(lines) + "\n")


def test_size_limits_are_per_kind_and_checked_before_parsing(tmp_path):
    big = tmp_path / "subject.yaml"
    big.write_bytes(b"name: x\nnotes: '" + b"a" * YAML_DEFAULT_LIMIT + b"'\n")
    with pytest.raises(InputError, match=r"a subject file may hold 1 MiB at most.*write it as JSON") as caught:
        read_records(big, kind="subject")
    assert caught.value.file == str(big)
    assert len(read_records(big, kind="dataset")) == 1  # a dataset may be larger
    assert yaml_limit("skill-frontmatter") < yaml_limit("subject") < yaml_limit("dataset") == yaml_limit(None)


def test_each_field_knows_its_line():
    doc = yaml_documents(b"---\nname: s\ninput:\n  trace: [a, b]\n  fields:\n    - x\n    - y\n", file="f.yaml")[0]
    assert doc.line == 2
    assert doc.lines == {"name": 2, "input": 3, "input.trace": 4, "input.trace[0]": 4, "input.trace[1]": 4,
                         "input.fields": 5, "input.fields[0]": 6, "input.fields[1]": 7}
