"""The text a consumer actually received: its input with strings as they are, JSON text decoded.

The reference method (mutagent) looks for a produced value in the consumer's input serialized as
JSON. On chat data that misses what plainly was passed on: a model call's input is a list of
messages, so an earlier reply with a newline or a quote appears there escaped (``\\n``, ``\\"``), and
a tool result that was JSON text is read into an object at import while the next call received the
text. Here both sides are written the same way, as what a reader of the message would see: string
leaves unescaped, and a string that holds a JSON object or array replaced by that object's text, so
a value is found in a later input exactly when that input carried it.

A structured value (an object, an array, JSON text) that is mostly one text is also followed by
that text, its main text: a model's reply recorded with metadata (``finish_reason``, ids) reappears in
the next call's conversation without it, and the reply, not the metadata, is what was passed on. A
record of several fields of like size (an order's items) has no main text: one short field found
elsewhere (a product name the user also typed) does not mean the record was passed on.
"""

from __future__ import annotations

import json
import marshal
import operator
from typing import Any

from evalkit.flow.defaults import SEMANTICS as SEMANTICS  # build.py reads them here
from evalkit.flow.defaults import Semantics as Semantics


class ReceivedText:
    """Writes payloads as received text, remembering what it wrote: each message of a conversation
    recurs in every later model input, and is decoded and written once."""

    def __init__(self) -> None:
        self._strings: dict[str, str] = {}
        self._items: dict[bytes, str] = {}
        self._same: dict[int, tuple[dict, str]] = {}  # by id, the item kept alive so its id is not reused
        self._last_list: tuple[list, list[str]] | None = None  # the items of the last long list, its parts

    def __call__(self, value: Any) -> str:
        """The received text of a payload: strings as they are, containers written JSON-like with
        keys sorted and their string leaves unescaped, numbers and literals as JSON."""
        parts: list[str] = []
        self._write(value, parts)
        return "".join(parts)

    def needles(self, value: Any) -> list[str]:
        """The texts a produced value is looked for as: its received text, trimmed, and for a
        structured value also its main text (longest string leaf, trimmed) when that differs."""
        whole = self(value).strip()
        main = main_text(value)
        return [whole] if main is None or main == whole else [whole, main]

    def _string(self, text: str) -> str:
        known = self._strings.get(text)
        if known is None:
            parsed = decoded_json(text)
            known = text if parsed is None else self(parsed)
            if parsed is not None or len(text) >= _REMEMBER_LEN:
                self._strings[text] = known
        return known

    def _item(self, item: dict) -> str:
        same = self._same.get(id(item))
        if same is not None and same[0] is item:  # one message object shared by several inputs
            return same[1]
        known = self._equal_item(item)
        self._same[id(item)] = (item, known)
        return known

    def _equal_item(self, item: dict) -> str:
        # marshal's bytes tell 1, 1.0 and True apart (== does not) and cost little next to writing.
        try:
            key = marshal.dumps(item)
        except ValueError:  # not plain data: written every time
            return self(item)
        known = self._items.get(key)
        if known is None:
            known = self._items[key] = self(item)
        return known

    def _sequence(self, value: list | tuple, parts: list[str]) -> None:
        # A conversation a turn later is the same message objects and a few more: the parts written
        # for the last long list are taken over when this one starts with its very objects.
        mark, start = len(parts), 0
        last = self._last_list
        if last is not None and len(value) >= len(last[0]) and all(map(operator.is_, last[0], value)):
            parts.extend(last[1])
            start = len(last[0])
        else:
            parts.append("[")
        for k in range(start, len(value)):
            item = value[k]
            if k:
                parts.append(",")
            if isinstance(item, dict):
                parts.append(self._item(item))
            else:
                self._write(item, parts)
        if len(value) >= _REMEMBER_ITEMS:
            self._last_list = (list(value), parts[mark:])
        parts.append("]")

    def _write(self, value: Any, parts: list[str]) -> None:
        if isinstance(value, str):
            parts.append(self._string(value) if value[:1] in _JSON_HEADS or len(value) >= _REMEMBER_LEN
                         else value)
        elif isinstance(value, dict):
            parts.append("{")
            try:
                keys = sorted(value)
            except TypeError:  # keys of mixed types: ordered as text
                keys = sorted(value, key=str)
            first = True
            for key in keys:
                parts.append(f'"{key}":' if first else f',"{key}":')
                first = False
                self._write(value[key], parts)
            parts.append("}")
        elif isinstance(value, list | tuple):
            self._sequence(value, parts)
        elif value is None:  # the literals and plain numbers as json.dumps writes them, without its setup
            parts.append("null")
        elif value is True or value is False:
            parts.append("true" if value else "false")
        elif value.__class__ is int:
            parts.append(int.__repr__(value))
        elif value.__class__ is float and value - value == 0:  # finite (NaN and infinities are not)
            parts.append(float.__repr__(value))
        else:
            parts.append(json.dumps(value))


_JSON_HEADS = frozenset('{["' + " \t\n\r")
"""First characters of a string that may hold JSON text (leading whitespace is allowed)."""

_REMEMBER_ITEMS = 8
"""Lists this long are remembered (the last one), for a longer list that starts with the same objects."""

_REMEMBER_LEN = 256
"""Strings this long are looked up in a table even when they are not JSON (long replies recur)."""


def decoded_json(text: str) -> dict | list | None:
    """The object or array a string holds as JSON text (also JSON-encoded twice), else None."""
    head = text.lstrip()[:1]
    if head not in ("{", "[", '"'):
        return None
    try:
        parsed = json.loads(text)
    except ValueError:  # not JSON after all: received as it is
        return None
    if isinstance(parsed, str):
        return decoded_json(parsed) if head == '"' else None
    return parsed if isinstance(parsed, dict | list) else None


MAIN_TEXT_SHARE = 0.5
"""The longest string leaf is a value's main text when it holds at least this share of the
characters of all its string leaves (trimmed): the reply in a message, not a field of a record."""


def main_text(value: Any) -> str | None:
    """The longest string leaf of a structured value (JSON text decoded), trimmed, the first of equally
    long ones, when it holds :data:`MAIN_TEXT_SHARE` of the value's text. None for a plain string, a
    value without string leaves, or one whose text is spread over several leaves."""
    if isinstance(value, str):
        value = decoded_json(value)
        if value is None:
            return None
    best: str | None = None
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            inner = decoded_json(item)
            if inner is not None:
                stack.append(inner)
            else:
                leaf = item.strip()
                total += len(leaf)
                if best is None or len(leaf) > len(best):
                    best = leaf
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))
    return best if best and len(best) >= MAIN_TEXT_SHARE * total else None
