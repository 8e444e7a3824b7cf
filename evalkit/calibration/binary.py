"""Turning judge predictions and human labels into 0/1 arrays, refusing anything that is not binary.

judgy casts its inputs with ``np.asarray(..., dtype=int)``, which silently truncates ``0.7`` to ``0``.
Here a value that is not exactly 0/1, ``True``/``False`` or ``"pass"``/``"fail"`` is an error naming
the argument and the position of the first bad value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from evalkit.errors import InputError

_WORDS = {"pass": 1, "fail": 0}


def _bad(name: str, index: int, value: Any) -> InputError:
    return InputError(f"must be 0/1 or 'pass'/'fail' (got {value!r}); nothing is rounded or truncated",
                      path=f"{name}[{index}]")


def as_binary(values: Sequence[Any] | np.ndarray, name: str) -> np.ndarray:
    """``values`` as an int8 array of 0 (fail) and 1 (pass).

    Args:
        values: 0/1 numbers, booleans, or the words ``"pass"``/``"fail"`` (any case).
        name: the argument's name, used in errors.

    Raises:
        InputError: at the first value that is none of these, e.g. ``test_preds[3]: must be 0/1 ...``.
    """
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InputError(f"must be a flat sequence (got {arr.ndim} dimensions)", path=name)
    if arr.dtype == bool:
        return arr.astype(np.int8)
    if arr.dtype.kind in "iuf":
        ok = (arr == 0) | (arr == 1)
        if not ok.all():
            i = int(np.argmin(ok))
            raise _bad(name, i, arr[i].item())
        return arr.astype(np.int8)
    out = np.empty(len(arr), dtype=np.int8)
    for i, value in enumerate(values):
        out[i] = _one(value, name, i)
    return out


def _one(value: Any, name: str, index: int) -> int:
    if isinstance(value, bool | np.bool_):
        return int(value)
    if isinstance(value, str):
        word = _WORDS.get(value.strip().lower())
        if word is None:
            raise _bad(name, index, value)
        return word
    if isinstance(value, int | float | np.integer | np.floating) and value in (0, 1):
        return int(value)
    raise _bad(name, index, value)
