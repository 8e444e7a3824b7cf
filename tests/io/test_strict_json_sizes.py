"""Strict parsing decides the same whatever the text's length: the cheaper checks for short texts
and for long ones (no bracket count) refuse and keep exactly what the strict parser does."""

import json

import pytest

from evalkit.errors import StrictJSONError
from evalkit.io.json_values import MAX_NESTING
from evalkit.io.strict_json import loads_strict

SIZES = [20, MAX_NESTING - 1, MAX_NESTING, MAX_NESTING + 1, 2 * MAX_NESTING, 2 * MAX_NESTING + 1,
         2 * MAX_NESTING + 2, 700, 2047, 2048, 2049, 5000]


def _sized(template, size):
    """``template`` (with a ``PAD`` placeholder string) padded to about ``size`` bytes."""
    text = template.replace("PAD", "")
    return template.replace("PAD", "x" * max(0, size - len(text)))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("spaced", [False, True])
def test_values_kept_and_refused_alike_at_every_size(size, spaced):
    sep = (", ", ": ") if spaced else (",", ":")
    ok = _sized(json.dumps({"p": "PAD", "n": [1, 2.5, {"k": None}], "big": 10**25, "s": "a:b"},
                           separators=sep), size)
    assert loads_strict(ok)["big"] == 10**25 and isinstance(loads_strict(ok)["big"], int)
    assert loads_strict(ok.encode()) == json.loads(ok)
    duplicate = _sized('{"p"' + sep[1] + '"PAD"' + sep[0] + '"a"' + sep[1] + '1' + sep[0] + '"a"' + sep[1] + '2}',
                       size)
    with pytest.raises(StrictJSONError, match="duplicate key 'a'"):
        loads_strict(duplicate)
    escaped_colon = _sized('{"p": "PAD\\u003a", "a": 1, "a": 2}', size)
    with pytest.raises(StrictJSONError, match="duplicate key"):
        loads_strict(escaped_colon)


@pytest.mark.parametrize("size", [0, 200, 3000])
def test_nesting_is_refused_past_the_limit_at_every_size(size):
    # With no padding, the deepest text allowed is 2 * MAX_NESTING + 2 bytes: no shorter text can be too deep.
    pad = "x" * size
    fine = "[" * MAX_NESTING + f'"{pad}"' + "]" * MAX_NESTING
    assert loads_strict(fine) is not None
    too_deep = "[" * (MAX_NESTING + 1) + f'"{pad}"' + "]" * (MAX_NESTING + 1)
    with pytest.raises(StrictJSONError):
        loads_strict(too_deep)
    # Brackets inside strings are no nesting: many of them, in a long or a short text, are kept.
    brackets = json.dumps({"t": "[{" * (MAX_NESTING + 5) + pad})
    assert loads_strict(brackets) == json.loads(brackets)
