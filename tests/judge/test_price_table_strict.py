"""A price table is read by the one strict YAML reader: unknown fields and tags are errors, not ignored."""

from __future__ import annotations

import pytest

from evalkit.errors import InputError
from evalkit.judge import PriceTable


@pytest.mark.parametrize(("text", "message"), [
    ("models:\n  m: {input: 1, output: 2}\nmodel:\n  x: {input: 1, output: 2}\n", "unknown field 'model'"),
    ("models: !!set {a, b}\n", "a set is not a JSON value"),
    ("models:\n  m: {input: !!binary aGk=, output: 2}\n", "a bytes is not a JSON value"),
    ("models:\n  m: {input: 1, output: 2}\n  m: {input: 3, output: 4}\n", "duplicate key 'm'"),
])
def test_a_price_table_with_unknown_fields_or_tags_is_refused(tmp_path, text, message):
    path = tmp_path / "prices.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        PriceTable.load(path)


def test_a_good_price_table_adds_its_models(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text("models:\n  my-local: {input: 0, output: 0}\n", encoding="utf-8")
    assert PriceTable.load(path).cost("my-local", 1000, 1000) == 0
