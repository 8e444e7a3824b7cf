"""Strict JSON reading: no byte-order mark, no duplicate keys, no trailing data, no NaN.

Python's ``json`` module accepts duplicate keys (the last one silently wins) and the non-standard
constants ``NaN`` and ``Infinity``. A contract file that relies on either is ambiguous, so evalkit
refuses them, with the line and column of the problem.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalkit.io.errors import InputError

_BOM = "\ufeff"


class StrictJSONError(InputError):
    """A JSON text that is not plain, unambiguous JSON."""


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _pairs_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey(key)
        obj[key] = value
    return obj


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _decode(data: bytes | str, file: str | None, line: int | None) -> str:
    if isinstance(data, bytes):
        if data.startswith(b"\xef\xbb\xbf"):
            raise StrictJSONError("byte-order mark at start of file; save as UTF-8 without BOM",
                                  file=file, line=line)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError(f"not valid UTF-8 at byte {exc.start}", file=file, line=line) from None
    if data.startswith(_BOM):
        raise StrictJSONError("byte-order mark at start of file; save as UTF-8 without BOM",
                              file=file, line=line)
    return data


def loads_strict(data: bytes | str, *, file: str | None = None, line: int | None = None) -> Any:
    """Parse one JSON value strictly.

    Args:
        data: the JSON text (bytes are decoded as UTF-8).
        file: the file name to put in errors.
        line: the line the text starts on, for JSONL records.

    Returns:
        The parsed value.

    Raises:
        StrictJSONError: on a BOM, invalid UTF-8, a syntax error, a duplicate key, NaN/Infinity,
            or data after the value.
    """
    text = _decode(data, file, line)
    try:
        return json.loads(text, object_pairs_hook=_pairs_without_duplicates,
                          parse_constant=_reject_constant)
    except _DuplicateKey as exc:
        raise StrictJSONError(f"duplicate key {exc.key!r}", file=file, line=line) from None
    except json.JSONDecodeError as exc:
        where = exc.lineno if line is None else line + exc.lineno - 1
        msg = exc.msg
        if msg == "Extra data":
            msg = "trailing data after the JSON value"
        raise StrictJSONError(f"{msg} (column {exc.colno})", file=file, line=where) from None
    except ValueError as exc:
        raise StrictJSONError(str(exc), file=file, line=line) from None
    except RecursionError:
        raise StrictJSONError("nested too deeply", file=file, line=line) from None


def read_json_strict(path: str | Path) -> Any:
    """Read a whole file as one strict JSON value; errors name the file."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", file=str(path)) from None
    return loads_strict(data, file=str(path))


def iter_jsonl_strict(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for each non-blank line of a JSONL file, strictly parsed."""
    p = Path(path)
    try:
        fh = p.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", file=str(path)) from None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raise StrictJSONError("byte-order mark at start of file; save as UTF-8 without BOM",
                                      file=str(path), line=1)
            if not raw.strip():
                continue
            # Parse without the line break, so an error at the end of the record stays on its line.
            yield lineno, loads_strict(raw.rstrip(b"\r\n"), file=str(path), line=lineno)
