"""Strict JSON reading: no byte-order mark, no duplicate keys, no trailing data, no NaN.

Python's ``json`` module accepts duplicate keys (the last one silently wins) and the non-standard
constants ``NaN`` and ``Infinity``. A contract file that relies on either is ambiguous, so evalkit
refuses them, with the line and column of the problem. Values are kept exact or refused as
:mod:`evalkit.io.json_values` says (nesting, number range, lone surrogates), the same way for every
file evalkit reads.

Every record is first parsed by orjson, several times faster; orjson lets a duplicate key win
silently, turns integers beyond 64 bits into floats and nests up to 1024 levels, so its result is
kept only when cheap checks on the text prove none of that happened (see :func:`_fast`); otherwise
the record is read again by the strict parser, which decides.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from json import scanner
from pathlib import Path
from typing import Any

import orjson

from evalkit.errors import StrictJSONError
from evalkit.io.json_values import (
    MAX_NESTING,
    TOO_DEEP,
    ValueProblem,
    check_json_value,
    encodes_as_utf8,
    finite_float,
)
from evalkit.io.regular import open_regular

_BOM = "\ufeff"


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key
        self.pos: int | None = None


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


def _orjson_depth_limit() -> int:
    """The deepest nesting of arrays orjson writes (254 in orjson 3), found by trying."""
    low, high = 1, 4096
    while low < high:
        mid = (low + high + 1) // 2
        value: Any = 0
        for _ in range(mid):
            value = [value]
        try:
            orjson.dumps(value)
            low = mid
        except TypeError:
            high = mid - 1
    return low


_PADDING = _orjson_depth_limit() - MAX_NESTING
"""Arrays wrapped around a value before orjson writes it: the write fails exactly when the value
nests deeper than MAX_NESTING, which makes orjson's own limit the nesting check."""
assert _PADDING > 0, "orjson writes fewer levels than MAX_NESTING"


class _Padding(threading.local):
    """One chain of _PADDING nested lists per thread; the value is put into the innermost one."""

    def __init__(self) -> None:
        self.inner: list[Any] = []
        outer = self.inner
        for _ in range(_PADDING - 1):
            outer = [outer]
        self.outer = outer


_padding = _Padding()
_SLOW = object()
# Digits become "0", quotes stay, everything else becomes a space: a number of 19 digits or more
# outside a string (orjson makes it a float beyond 64 bits) shows as a space and nineteen zeros.
_DIGIT_RUNS = bytes(b"0"[0] if chr(c).isdigit() and c < 128 else (c if c == 34 else 32) for c in range(256))
_LONG_NUMBER = b" " + b"0" * 19
_SHORT = 2 * MAX_NESTING + 1
"""A text no longer than this cannot nest deeper than MAX_NESTING: each level takes two brackets."""
_COUNTED_BELOW = 2048
"""Texts up to this size have their brackets counted to be written back without the padding."""


def _fast(raw: bytes) -> Any:
    """orjson's value of ``raw``, or ``_SLOW`` when only the strict parser can decide.

    The checks, each a scan in C:
    - parsing fails (syntax, a lone surrogate, a number beyond a double): the strict parser says why;
    - writing the value back inside _PADDING arrays fails: it nests deeper than MAX_NESTING (a text
      with no more brackets than MAX_NESTING cannot, so it is written back without the padding);
    - the value written back is the text itself (compact JSON as evalkit and most tools write it), or
      is the text but for spaces (as Python's ``json.dumps`` puts after ``:`` and ``,`` by default):
      then nothing was dropped or changed, and the value is kept. Spaces are all the two may differ
      by: what orjson loses (a duplicate key's entry, the digits of an integer beyond 64 bits) holds
      other bytes, so its loss would show. Otherwise:
    - 19 digits or more outside a string: the number may be an integer orjson made a float;
    - duplicate keys: each key of the text is followed by a colon and so is each key of the value;
      every other colon is a literal one inside a string, written as is by orjson. A duplicate key
      drops its entry, so the value written back holds fewer colons than the text. A colon written
      as ``\\u003a`` would break the count, so any ``\\u003`` escape takes the strict path.
    """
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _SLOW
    body = raw.rstrip()
    size = len(raw)
    # A text with no more brackets than levels allowed (those in strings count too) cannot nest too
    # deeply, so the value is written without the padding: cheaper for short texts, and a text of at
    # most _SHORT bytes proves it without counting. A long text is written with the padding without
    # counting: the counts would cost more than the padding saves.
    if size <= _SHORT or (size <= _COUNTED_BELOW and raw.count(b"[") + raw.count(b"{") <= MAX_NESTING):
        try:
            written = orjson.dumps(value)
        except TypeError:
            return _SLOW
        if written == body or (b" " in body and written.replace(b" ", b"") == body.replace(b" ", b"")):
            return value
    else:
        pad = _padding.inner
        pad.append(value)
        try:
            written = orjson.dumps(_padding.outer)
        except TypeError:  # nested too deeply
            return _SLOW
        finally:
            pad.clear()
        if len(body) == len(written) - 2 * _PADDING and written.startswith(body, _PADDING):
            return value
        if b" " in body and (written[_PADDING:len(written) - _PADDING].replace(b" ", b"")
                             == body.replace(b" ", b"")):
            return value
    if b"\\" in raw and b"\\u003" in raw:  # one byte looked for first: most texts have no escape
        return _SLOW
    digits = raw.translate(_DIGIT_RUNS)
    # Nineteen zeros looked for first: quick to rule out, where the space before them is not.
    if _LONG_NUMBER[1:] in digits and (_LONG_NUMBER in digits or digits.startswith(_LONG_NUMBER[1:])):
        return _SLOW
    if written.count(b":") != raw.count(b":"):
        return _SLOW
    return value


def _duplicate_position(text: str) -> int | None:
    """Where the object holding the first duplicate key starts (the strict parser cannot say)."""
    decoder = json.JSONDecoder(object_pairs_hook=_pairs_without_duplicates)
    plain = decoder.parse_object

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> Any:
        try:
            return plain(s_and_end, *args)
        except _DuplicateKey as exc:
            if exc.pos is None:
                exc.pos = s_and_end[1] - 1
            raise

    decoder.parse_object = parse_object
    decoder.scan_once = scanner.py_make_scanner(decoder)
    try:
        decoder.decode(text)
    except _DuplicateKey as exc:
        return exc.pos
    except (ValueError, RecursionError):
        return None
    return None


def _may_hold_surrogate(text: str) -> bool:
    """False when no string of ``text`` can hold a lone surrogate: UTF-8 bytes cannot, so only an
    escape (or a str handed in that holds one, which has no UTF-8 form) can make one."""
    return "\\ud" in text or "\\uD" in text or not text.isascii() and not encodes_as_utf8(text)


def _strict(text: str, file: str | None, line: int | None) -> Any:
    try:
        value = json.loads(text, object_pairs_hook=_pairs_without_duplicates,
                           parse_constant=_reject_constant, parse_float=finite_float)
    except _DuplicateKey as exc:
        pos = _duplicate_position(text)
        if pos is None:
            raise StrictJSONError(f"duplicate key {exc.key!r}", file=file, line=line) from None
        lineno = text.count("\n", 0, pos) + 1
        column = pos - text.rfind("\n", 0, pos)
        raise StrictJSONError(f"duplicate key {exc.key!r} (in the object at column {column})", file=file,
                              line=lineno if line is None else line + lineno - 1) from None
    except json.JSONDecodeError as exc:
        where = exc.lineno if line is None else line + exc.lineno - 1
        msg = exc.msg
        if msg == "Extra data":
            msg = "trailing data after the JSON value"
        raise StrictJSONError(f"{msg} (column {exc.colno})", file=file, line=where) from None
    except ValueProblem as exc:
        raise StrictJSONError(exc.message, file=file, line=line) from None
    except ValueError as exc:
        msg = str(exc)
        if "integer string conversion" in msg:
            msg = "integer with more than 4300 digits; write it as a string to keep it"
        raise StrictJSONError(msg, file=file, line=line) from None
    except RecursionError:
        raise StrictJSONError(TOO_DEEP, file=file, line=line) from None
    try:
        check_json_value(value, check_text=_may_hold_surrogate(text))
    except ValueProblem as exc:
        raise StrictJSONError(exc.message, file=file, line=line, path=exc.path or None) from None
    return value


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
            data after the value, or a value :mod:`evalkit.io.json_values` refuses (too deep, a
            number beyond a double, a lone surrogate).
    """
    raw: bytes | None = None
    if isinstance(data, bytes):
        raw = data
    elif not data.startswith(_BOM):
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError:
            raw = None
    if raw is not None and not raw.startswith(b"\xef\xbb\xbf"):
        value = _fast(raw)
        if value is not _SLOW:
            return value
    text = _decode(data, file, line)
    # A JSONL record is parsed without its line break, so an error at its end stays on its line.
    return _strict(text if line is None else text.rstrip("\r\n"), file, line)


def read_json_strict(path: str | Path) -> Any:
    """Read a whole file as one strict JSON value; errors name the file."""
    with open_regular(path) as fh:
        data = fh.read()
    return loads_strict(data, file=str(path))


def iter_jsonl_strict(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for each non-blank line of a JSONL file, strictly parsed."""
    with open_regular(path) as fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raise StrictJSONError("byte-order mark at start of file; save as UTF-8 without BOM",
                                      file=str(path), line=1)
            if not raw.strip():
                continue
            # Parse without the line break, so an error at the end of the record stays on its line.
            yield lineno, loads_strict(raw.rstrip(b"\r\n"), file=str(path), line=lineno)
