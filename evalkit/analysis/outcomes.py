"""A trace's recorded outcome (tau-bench's ``reward``, Inspect's ``scores``, a ``success`` flag) as a failure signal.

Sources that grade their runs keep the grade in trace metadata. Failure-driven sampling reads it through
an :class:`Outcome`: a metadata field (a dotted path into nested metadata), a comparison and a value,
written ``reward<1``, ``success==false`` or ``scores.includes.value!=C``; a trace for which it holds
failed. When none is given, :func:`detect_outcome` looks for the fields graded sources write.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.contracts.trace import Trace
from evalkit.errors import InputError

__all__ = ["Outcome", "detect_outcome", "parse_outcome"]

_EXPRESSION = re.compile(r"^\s*([A-Za-z_][\w.-]*)\s*(<=|>=|==|!=|<|>|=)\s*(.+?)\s*$")
_BOOLEAN_FIELDS = ("success", "passed", "correct", "is_correct", "resolved", "solved")
_INSPECT_PASS = "C"
"""Inspect's CORRECT; its other letters (I incorrect, P partial, N no answer) are not a pass."""
_INSPECT_LETTERS = frozenset({"C", "I", "P", "N"})


@dataclass(frozen=True)
class Outcome:
    """A failure by a metadata field: the trace failed when ``metadata.FIELD OP VALUE`` holds."""

    field: str
    op: str
    value: Any

    def describe(self) -> str:
        """The expression as written on the command line, e.g. ``reward<1``."""
        value = str(self.value).lower() if isinstance(self.value, bool) else self.value
        return f"{self.field}{self.op}{value}"

    def failed(self, trace: Trace) -> bool | None:
        """Whether ``trace`` failed by this outcome; None when it does not record the field."""
        found = _lookup(trace.metadata, self.field)
        if found is _ABSENT:
            return None
        return _compare(found, self.op, self.value)


_ABSENT: Any = object()


def _lookup(metadata: Any, path: str) -> Any:
    value = metadata
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return _ABSENT
        value = value[key]
    return value


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _compare(found: Any, op: str, wanted: Any) -> bool:
    if op in ("<", "<=", ">", ">="):
        a, b = _number(found), _number(wanted)
        if a is None or b is None:
            return False
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    same = (found == wanted and type(found) is type(wanted)) or (
        _number(found) is not None and _number(found) == _number(wanted))
    return same if op == "==" else not same


def _value(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text.strip("'\"")


def parse_outcome(text: str) -> Outcome:
    """An outcome from its expression: ``FIELD OP VALUE`` with OP one of ``< <= > >= == != =``.

    Raises:
        InputError: the text is not such an expression.
    """
    match = _EXPRESSION.match(text)
    if match is None:
        raise InputError(f"not an outcome expression: {text!r}; write FIELD OP VALUE with a metadata field, "
                         "e.g. reward<1, success==false or scores.includes.value!=C", path="--outcome")
    field, op, value = match.groups()
    return Outcome(field, "==" if op == "=" else op, _value(value))


def detect_outcome(traces: Iterable[Trace]) -> Outcome | None:
    """The outcome field the traces record, as graded sources write it; None when they record none.

    ``reward`` (numbers from 0 to 1: below 1 failed), ``success`` / ``passed`` / ``correct`` /
    ``resolved`` (false failed), Inspect's ``scores.NAME.value`` (a letter other than ``C``, or a number
    below 1, failed); the first found in this order, over every trace.
    """
    traces = list(traces)
    rewards = [_lookup(t.metadata, "reward") for t in traces]
    numbers = [_number(r) for r in rewards if r is not _ABSENT]
    if numbers and all(n is not None and 0 <= n <= 1 for n in numbers):
        return Outcome("reward", "<", 1)
    for name in _BOOLEAN_FIELDS:
        values = [_lookup(t.metadata, name) for t in traces]
        if any(v is not _ABSENT for v in values) and all(isinstance(v, bool) for v in values if v is not _ABSENT):
            return Outcome(name, "==", False)
    return _inspect_score(traces)


def _inspect_score(traces: Sequence[Trace]) -> Outcome | None:
    names = sorted({name for t in traces if isinstance((t.metadata or {}).get("scores"), dict)
                    for name in t.metadata["scores"]})  # type: ignore[index]
    for name in names:
        values = [v for t in traces if (v := _lookup(t.metadata, f"scores.{name}.value")) is not _ABSENT]
        if values and all(isinstance(v, str) and v in _INSPECT_LETTERS for v in values):
            return Outcome(f"scores.{name}.value", "!=", _INSPECT_PASS)
        if values and all(_number(v) is not None and 0 <= _number(v) <= 1 for v in values):  # type: ignore[operator]
            return Outcome(f"scores.{name}.value", "<", 1)
    return None
