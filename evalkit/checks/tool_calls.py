"""A trace's tool calls as the trajectory checks read them, and the predicates on their arguments.

A tool call is an observation of one of the watched types (``TOOL`` by default), named as the importer
named it: an OpenAI ``tool_calls`` entry, an Anthropic ``tool_use`` block, an OpenTelemetry
``execute_tool`` span, a Langfuse TOOL observation. Calls are taken in the order the trace records its
observations (every importer writes them in start order). Arguments are the call's ``input``; JSON text
is read into an object, so ``{"order_id": "..."}`` and ``'{"order_id": "..."}'`` are the same arguments.

An argument predicate says which calls count, in one of three ways:

- ``equals``: the arguments equal this value exactly (after JSON text is read);
- ``subset``: this JSON value is contained in the arguments: every key of an object with a contained
  value, every item of a list contained in some item of the other, other values equal;
- ``matches``: ``{path: regex}``; the text at each path (``order_id``, ``flights[0].date``) matches its
  regular expression (searched, as Python's ``re.search``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from evalkit.checks.base import Check
from evalkit.checks.reading import steps_of, text_of
from evalkit.contracts.trace import Observation, Trace
from evalkit.errors import CheckError
from evalkit.trace_paths import MISSING, step_into

TOOL_TYPES = ("TOOL",)
"""Observation types that are tool calls unless a criterion says otherwise (``types``)."""

PREDICATES = ("equals", "subset", "matches")
"""The ways an argument predicate can be given (exactly one per predicate)."""

_calls_of: list[Any] = [None, None, []]  # [trace, types, calls]: the trace every criterion is reading


def tool_calls(trace: Trace, types: tuple[str, ...] = TOOL_TYPES) -> list[Observation]:
    """The trace's calls of the watched types, in trace order (cached for the trace being checked: the
    router runs every criterion on one trace before the next)."""
    if _calls_of[0] is not trace or _calls_of[1] != types:
        _calls_of[0], _calls_of[1] = trace, types
        _calls_of[2] = [o for o in trace.observations if o.type in types]
    return _calls_of[2]


def arguments(call: Observation) -> Any:
    """A call's arguments: its input, JSON text read into a value (text that is not JSON stays text)."""
    value = call.input
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def json_subset(expected: Any, actual: Any) -> bool:
    """Whether ``expected`` is contained in ``actual`` (see the module docstring)."""
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(
            k in actual and json_subset(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and all(any(json_subset(e, a) for a in actual) for e in expected)
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    return expected == actual


def first_difference(expected: Any, actual: Any, *, subset: bool = False, path: str = "") -> str | None:
    """Where ``actual`` first departs from ``expected``, in words (``nonfree_baggages: expected 0, got 1``),
    or None when they agree. With ``subset``, keys ``expected`` lacks are not differences (as
    :func:`json_subset` reads it); lists are compared item by item either way, which is what a reader of the
    critique wants to see first."""
    def shown(value: Any) -> str:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)
        return text if len(text) <= 60 else text[:57] + "..."

    where = path or "the arguments"
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        for key in expected:
            if key not in actual:
                return f"{path + '.' if path else ''}{key}: expected {shown(expected[key])}, missing"
            found = first_difference(expected[key], actual[key], subset=subset,
                                     path=f"{path + '.' if path else ''}{key}")
            if found is not None:
                return found
        extra = [] if subset else [k for k in actual if k not in expected]
        return f"{path + '.' if path else ''}{extra[0]}: not expected, got {shown(actual[extra[0]])}" if extra else None
    if isinstance(expected, list) and isinstance(actual, list):
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):  # lengths compared below
            found = first_difference(e, a, subset=subset, path=f"{path}[{i}]")
            if found is not None:
                return found
        if len(expected) != len(actual) and not (subset and len(actual) > len(expected)):
            return f"{where}: expected {len(expected)} item(s), got {len(actual)}"
        return None
    same = expected is actual if isinstance(expected, bool) or isinstance(actual, bool) else expected == actual
    return None if same else f"{where}: expected {shown(expected)}, got {shown(actual)}"


def read_argument(args: Any, path: str) -> Any:
    """The value at ``path`` inside the arguments, or :data:`MISSING`."""
    value = args
    for step in steps_of(path):
        value = step_into(value, step)
        if value is MISSING:
            return MISSING
    return value


def compile_pattern(check: Check, pattern: Any, where: str) -> re.Pattern[str]:
    """A regular expression parameter, compiled.

    Raises:
        CheckError: not a string, or not a valid regular expression (naming the parameter's place).
    """
    if not isinstance(pattern, str):
        raise CheckError(f"{check.primitive}: {where} must be a regular expression string",
                         path=f"{check.where}.{where}")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise CheckError(f"{check.primitive}: {where} is not a valid regular expression: {exc}",
                         path=f"{check.where}.{where}") from None


class ArgsPredicate:
    """One argument predicate (``{equals: ...}``, ``{subset: ...}`` or ``{matches: {path: regex}}``)."""

    def __init__(self, check: Check, spec: Any, where: str) -> None:
        if not isinstance(spec, Mapping) or len(spec) != 1 or next(iter(spec)) not in PREDICATES:
            raise CheckError(f"{check.primitive}: {where} must be one of {{equals: VALUE}}, {{subset: VALUE}} or "
                             f"{{matches: {{PATH: REGEX}}}} (got {spec!r})", path=f"{check.where}.{where}")
        self.kind, self.value = next(iter(spec.items()))
        self.patterns: list[tuple[str, re.Pattern[str]]] = []
        if self.kind == "matches":
            if not isinstance(self.value, Mapping) or not self.value:
                raise CheckError(f"{check.primitive}: {where}.matches must map argument paths to regular "
                                 "expressions", path=f"{check.where}.{where}.matches")
            for path, pattern in self.value.items():
                try:
                    steps_of(path)
                except ValueError as exc:
                    raise CheckError(f"{check.primitive}: {exc}", path=f"{check.where}.{where}.matches") from None
                self.patterns.append((path, compile_pattern(check, pattern, f"{where}.matches.{path}")))

    def holds(self, args: Any) -> bool:
        """Whether a call with these arguments satisfies the predicate."""
        if self.kind == "equals":
            return args == self.value
        if self.kind == "subset":
            return json_subset(self.value, args)
        for path, pattern in self.patterns:
            found = read_argument(args, path)
            if found is MISSING or pattern.search(text_of(found)) is None:
                return False
        return True

    def describe(self) -> str:
        """The predicate in a few words, for a critique."""
        if self.kind == "matches":
            return "arguments matching " + ", ".join(f"{p}~/{r.pattern}/" for p, r in self.patterns)
        return f"arguments {'equal to' if self.kind == 'equals' else 'containing'} {text_of(self.value)[:80]}"


def names_param(check: Check, name: str) -> frozenset[str]:
    """A tool name or a list of names (any of them counts).

    Raises:
        CheckError: neither a non-empty string nor a non-empty list of them.
    """
    value = check.params.get(name)
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        raise CheckError(f"{check.primitive}: {name} must be a tool name or a list of tool names (got {value!r})",
                         path=f"{check.where}.{name}")
    return frozenset(names)


def types_param(check: Check) -> tuple[str, ...]:
    """The observation types that are tool calls for this criterion (``types``, default ``["TOOL"]``)."""
    from evalkit.contracts.trace import OBSERVATION_TYPES

    types = check.param("types", list, list(TOOL_TYPES))
    unknown = [t for t in types if t not in OBSERVATION_TYPES]
    if not types or unknown:
        raise CheckError(f"{check.primitive}: types must list observation types (one of {', '.join(OBSERVATION_TYPES)})"
                         f"{'; unknown: ' + ', '.join(map(str, unknown)) if unknown else ''}",
                         path=f"{check.where}.types")
    return tuple(types)


def call_label(call: Observation) -> str:
    """How a critique names a call: its tool name and id."""
    return f"{call.name or call.type} {call.id}"


def sequence_text(names: Sequence[str | None], limit: int = 12) -> str:
    """A tool sequence as ``a > b > c`` (cut after ``limit`` names, saying how many more)."""
    shown = " > ".join(n or "?" for n in names[:limit])
    return (shown or "(no calls)") + (f" > ... ({len(names) - limit} more)" if len(names) > limit else "")
