
"""Short texts (no more brackets than the nesting limit, as tool arguments in trace attributes) take
a cheaper check in ``loads_strict``: it must read every one as the strict parser alone does."""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.io.json_values import MAX_NESTING
from evalkit.io.strict_json import _strict, loads_strict
from tests.strict_outcomes import outcome

pytestmark = pytest.mark.slow

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**25), max_value=10**25)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(VALUES, st.sampled_from([(",", ":"), (", ", ": "), (" , ", " : ")]), st.booleans(),
       st.sampled_from(["", "dup", "dup-nested", "colon-escape", "long-int"]))
def test_short_texts_read_as_the_strict_parser_reads_them(value: Any, separators: tuple[str, str],
                                                          ascii_only: bool, twist: str) -> None:
    text = json.dumps(value, separators=separators, ensure_ascii=ascii_only)
    if twist == "dup":
        text = '{"k": ' + text + ', "k": 1}'
    elif twist == "dup-nested":
        text = '[{"a": 1, "b": ' + text + ', "a": 2}]'
    elif twist == "colon-escape":
        text = '{"x\\u003a": ' + text + ', "x:": 1}'
    elif twist == "long-int":
        text = "[" + text + ", 123456789012345678901234]"
    assert text.count("[") + text.count("{") <= MAX_NESTING
    assert outcome(loads_strict, text) == outcome(lambda t: _strict(t, None, None), text)
