"""The seven code-check primitives; each reads places of a trace named as refs name them.

Parameters come from a criterion's ``check: {primitive, params}`` in the eval matrix. A place is
``{obs, path}``: ``obs`` an observation name or id, or ``$trace`` for the trace root.
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any
from urllib.parse import urlparse

from evalkit.checks.base import MAX_REFS, Check
from evalkit.checks.fast_schema import SchemaCheck
from evalkit.checks.reading import TRACE_ROOT, cite, places, text_of
from evalkit.contracts.trace import Observation, Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import CheckError


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _place(check: Check, name: str) -> tuple[str, str, str | None]:
    """A ``{obs, path[, pattern]}`` parameter, checked."""
    spec = check.param(name, dict)
    if spec is None:
        raise CheckError(f"{check.primitive}: missing parameter {name}", path=check.where)
    unknown = sorted(set(spec) - {"obs", "path", "pattern"})
    if unknown or not isinstance(spec.get("obs"), str) or not isinstance(spec.get("path", ""), str):
        raise CheckError(f"{check.primitive}: {name} must be {{obs, path[, pattern]}} with string values "
                         f"(got {spec!r})", path=f"{check.where}.{name}")
    pattern = spec.get("pattern")
    if pattern is not None:
        _regex(check, pattern, f"{name}.pattern")
    return spec["obs"], spec.get("path", ""), pattern


def _regex(check: Check, pattern: Any, name: str, flags: int = 0) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise CheckError(f"{check.primitive}: {name} must be a regular expression string", path=f"{check.where}.{name}")
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise CheckError(f"{check.primitive}: {name} is not a valid regular expression: {exc}",
                         path=f"{check.where}.{name}") from None


def _where(obs: str, path: str) -> str:
    return f"{obs}.{path}" if path else obs


class Presence(Check):
    """The named observation exists (``min``..``max`` times), and where ``path`` is given, holds a
    non-empty value there."""

    primitive = "presence"
    required = ("obs",)
    optional = ("path", "min", "max")

    def __init__(self, criterion_id: str, params: Mapping[str, Any], **kw: Any) -> None:
        super().__init__(criterion_id, params, **kw)
        self.obs = self.param("obs", str)
        self.path = self.param("path", str, "")
        self.min = self.param("min", int, 1)
        self.max = self.param("max", int)
        if self.obs == TRACE_ROOT and not self.path:
            raise CheckError("presence: on $trace a path is required", path=f"{self.where}.path")

    def run(self, trace: Trace) -> CriterionVerdict:
        path = self.path or "name"
        found = [(o, v) for o, v in places(trace, self.obs, path) if not _empty(v)]
        n = len(found)
        ok = n >= self.min and (self.max is None or n <= self.max)
        bound = f"at least {self.min}" + ("" if self.max is None else f" and at most {self.max}")
        critique = f"{n} non-empty {_where(self.obs, path)} found, {bound} required."
        return self.verdict(trace, ok, critique, [cite(o, path, v) for o, v in found[:MAX_REFS]])


class StringEquality(Check):
    """Every value at ``actual`` equals the value at ``expected`` (a place, optionally the first match
    of its ``pattern``, or a literal ``value``), after trimming; ``caseSensitive`` defaults to true."""

    primitive = "string-equality"
    required = ("actual",)
    optional = ("expected", "value", "caseSensitive")

    def __init__(self, criterion_id: str, params: Mapping[str, Any], **kw: Any) -> None:
        super().__init__(criterion_id, params, **kw)
        self.actual = _place(self, "actual")
        if ("expected" in self.params) == ("value" in self.params):
            raise CheckError("string-equality: give exactly one of expected (a place) or value (a literal)",
                             path=self.where)
        self.expected = _place(self, "expected") if "expected" in self.params else None
        self.value = self.param("value", str)
        self.case = self.param("caseSensitive", bool, True)
        self.pattern = re.compile(self.expected[2]) if self.expected and self.expected[2] else None

    def _norm(self, text: str) -> str:
        return text.strip() if self.case else text.strip().lower()

    def _expected(self, trace: Trace) -> tuple[str | None, Any]:
        if self.expected is None:
            return None, self.value
        obs, path, _ = self.expected
        for ref_obs, value in places(trace, obs, path):
            text = text_of(value)
            if self.pattern is None:
                return ref_obs, text
            match = self.pattern.search(text)
            if match:
                return ref_obs, match.group(1) if match.groups() else match.group(0)
        return None, None

    def run(self, trace: Trace) -> CriterionVerdict:
        a_obs, a_path, _ = self.actual
        exp_obs, expected = self._expected(trace)
        exp_ref = cite(exp_obs, self.expected[1], expected) if exp_obs and self.expected else None
        if expected is None:
            where = _where(self.expected[0], self.expected[1]) if self.expected else "value"
            return self.verdict(trace, False, f"no expected value at {where}.", [])
        actual = list(places(trace, a_obs, a_path))
        if not actual:
            return self.verdict(trace, False, f"no {_where(a_obs, a_path)} to compare with {expected!r}.", [exp_ref])
        for obs, value in actual:
            if self._norm(text_of(value)) != self._norm(expected):
                return self.verdict(trace, False, f"{_where(a_obs, a_path)} is {text_of(value)!r}, expected "
                                    f"{expected!r}.", [cite(obs, a_path, value), exp_ref])
        return self.verdict(trace, True, f"{len(actual)} {_where(a_obs, a_path)} equal {expected!r}.",
                            [cite(actual[0][0], a_path, actual[0][1]), exp_ref])


def _valid_format(fmt: str, text: str, pattern: re.Pattern[str] | None) -> bool:
    try:
        if fmt == "json":
            json.loads(text)
        elif fmt == "iso-datetime":
            datetime.fromisoformat(text.replace("Z", "+00:00"))
        elif fmt == "date":
            date.fromisoformat(text)
        elif fmt == "uuid":
            uuid.UUID(text)
        elif fmt == "url":
            parts = urlparse(text)
            return parts.scheme in ("http", "https") and bool(parts.netloc)
        elif fmt == "email":
            return re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", text) is not None
        elif fmt == "regex":
            return pattern is not None and pattern.fullmatch(text) is not None
    except ValueError:
        return False
    return True


FORMATS = ("json", "iso-datetime", "date", "uuid", "url", "email", "regex")
"""Formats ``format-validity`` knows; ``regex`` needs ``pattern`` (matched in full)."""


class FormatValidity(Check):
    """Every value at ``obs``/``path`` is text in ``format`` (one of :data:`FORMATS`)."""

    primitive = "format-validity"
    required = ("obs", "format")
    optional = ("path", "pattern")

    def __init__(self, criterion_id: str, params: Mapping[str, Any], **kw: Any) -> None:
        super().__init__(criterion_id, params, **kw)
        self.obs, self.path = self.param("obs", str), self.param("path", str, "")
        self.format = self.param("format", str)
        if self.format not in FORMATS:
            raise CheckError(f"format-validity: unknown format {self.format!r} (one of: {', '.join(FORMATS)})",
                             path=f"{self.where}.format")
        self.pattern = _regex(self, self.params["pattern"], "pattern") if "pattern" in self.params else None
        if self.format == "regex" and self.pattern is None:
            raise CheckError("format-validity: format regex needs pattern", path=f"{self.where}.pattern")

    def run(self, trace: Trace) -> CriterionVerdict:
        found = list(places(trace, self.obs, self.path))
        if not found:
            return self.verdict(trace, False, f"no {_where(self.obs, self.path)} to check.", [])
        for obs, value in found:
            if not isinstance(value, str) or not _valid_format(self.format, value, self.pattern):
                return self.verdict(trace, False, f"{_where(self.obs, self.path)} is not valid {self.format}: "
                                    f"{text_of(value)[:80]!r}.", [cite(obs, self.path, value)])
        return self.verdict(trace, True, f"{len(found)} {_where(self.obs, self.path)} valid {self.format}.",
                            [cite(o, self.path, v) for o, v in found[:MAX_REFS]])


class SchemaConformance(Check):
    """Every value at ``obs``/``path`` (JSON text is parsed) conforms to the JSON Schema ``schema``."""

    primitive = "schema-conformance"
    required = ("obs", "schema")
    optional = ("path",)

    def __init__(self, criterion_id: str, params: Mapping[str, Any], **kw: Any) -> None:
        super().__init__(criterion_id, params, **kw)
        self.obs, self.path = self.param("obs", str), self.param("path", str, "")
        try:
            self.schema = SchemaCheck(self.param("schema", dict))
        except ValueError as exc:
            raise CheckError(f"schema-conformance: {exc}", path=f"{self.where}.schema") from None

    def run(self, trace: Trace) -> CriterionVerdict:
        found = list(places(trace, self.obs, self.path))
        if not found:
            return self.verdict(trace, False, f"no {_where(self.obs, self.path)} to check.", [])
        for obs, value in found:
            doc = value
            if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
                with contextlib.suppress(ValueError):
                    doc = json.loads(value)
            problem = self.schema.problem(doc)
            if problem is not None:
                at, message = problem
                return self.verdict(trace, False, f"{_where(self.obs, self.path)}{at} breaks the schema: "
                                    f"{message}", [cite(obs, self.path, value)])
        return self.verdict(trace, True, f"{len(found)} {_where(self.obs, self.path)} conform to the schema.",
                            [cite(o, self.path, v) for o, v in found[:MAX_REFS]])


class RefIntegrity(Check):
    """Every id that ``pattern`` finds in ``target`` occurs in some ``source`` value: no dangling
    reference (an order id in the answer that no lookup returned). No id found passes."""

    primitive = "ref-integrity"
    required = ("source", "target", "pattern")

    def __init__(self, criterion_id: str, params: Mapping[str, Any], **kw: Any) -> None:
        super().__init__(criterion_id, params, **kw)
        self.source, self.target = _place(self, "source")[:2], _place(self, "target")[:2]
        self.pattern = _regex(self, self.params["pattern"], "pattern")

    def run(self, trace: Trace) -> CriterionVerdict:
        sources = [(o, text_of(v)) for o, v in places(trace, *self.source)]
        ids = 0
        for obs, value in places(trace, *self.target):
            for match in self.pattern.finditer(text_of(value)):
                ident = match.group(1) if match.groups() else match.group(0)
                ids += 1
                if not any(ident in text for _, text in sources):
                    return self.verdict(trace, False, f"{ident!r} in {_where(*self.target)} occurs in no "
                                        f"{_where(*self.source)} ({len(sources)} read).",
                                        [cite(obs, self.target[1], ident)])
                src = next(o for o, text in sources if ident in text)
                first = (obs, ident, src)
        if not ids:
            return self.verdict(trace, True, f"no id in {_where(*self.target)}; nothing can dangle.", [])
        obs, ident, src = first
        return self.verdict(trace, True, f"all {ids} ids in {_where(*self.target)} occur in "
                            f"{_where(*self.source)}.", [cite(obs, self.target[1], ident),
                                                         cite(src, self.source[1], ident)])


DEFAULT_ERROR_KEYS = ("error", "errors")
"""Keys of a tool's (JSON) output whose non-empty value marks the call as failed."""

DEFAULT_ERROR_PATTERNS = (r"^\s*error\b", r"traceback \(most recent call last\)", r"^\s*exception\b")
"""Output text that marks a tool call as failed (case-insensitive); override per criterion."""


class _FailureRule(Check):
    optional = ("obs", "types", "errorKeys", "errorPatterns")

    def __init__(self, criterion_id: str, params: Mapping[str, Any], **kw: Any) -> None:
        super().__init__(criterion_id, params, **kw)
        obs = self.param("obs", (str, list))
        self.names = None if obs is None else {obs} if isinstance(obs, str) else set(obs)
        self.types = set(self.param("types", list, ["TOOL"]))
        self.keys = tuple(self.param("errorKeys", list, list(DEFAULT_ERROR_KEYS)))
        patterns = self.param("errorPatterns", list, list(DEFAULT_ERROR_PATTERNS))
        self.patterns = [_regex(self, p, "errorPatterns", re.IGNORECASE | re.MULTILINE) for p in patterns]

    def watched(self, o: Observation) -> bool:
        if self.names is not None:
            return o.name in self.names or o.id in self.names
        return o.type in self.types

    def failure(self, o: Observation) -> tuple[str, str, Any] | None:
        """Why the observation failed, as ``(reason, path, cited value)``, or None."""
        return failure_of(o, self.keys, self.patterns)


_DEFAULT_PATTERNS = tuple(re.compile(p, re.IGNORECASE | re.MULTILINE) for p in DEFAULT_ERROR_PATTERNS)


def failure_of(o: Observation, keys: tuple[str, ...] = DEFAULT_ERROR_KEYS,
               patterns: Sequence[re.Pattern[str]] = _DEFAULT_PATTERNS) -> tuple[str, str, Any] | None:
    """Why a call failed, as ``(reason, path, cited value)``, or None: level ERROR, a non-empty error key in its
    (JSON) output, or output text matching an error pattern (the defaults unless a criterion gives its own)."""
    if o.level == "ERROR":
        return "level ERROR", "level", "ERROR"
    out = o.output
    if isinstance(out, str) and out.lstrip()[:1] == "{":
        with contextlib.suppress(ValueError):
            out = json.loads(out)
    if isinstance(out, dict):
        for key in keys:
            if not _empty(out.get(key)) and out.get(key) is not False:
                return f"output.{key} set", f"output.{key}", out[key]
    text = o.output if isinstance(o.output, str) else None
    if text is not None:
        for pattern in patterns:
            match = pattern.search(text)
            if match:
                return f"output matches {pattern.pattern!r}", "output", match.group(0)
    return None


class ToolOutputFailure(_FailureRule):
    """No watched observation (TOOL by default, or those named in ``obs``) failed: level ERROR, an
    ``error`` key in its output, or output text that reads as an error."""

    primitive = "tool-output-failure"

    def run(self, trace: Trace) -> CriterionVerdict:
        watched = 0
        for o in trace.observations:
            if not self.watched(o):
                continue
            watched += 1
            why = self.failure(o)
            if why:
                reason, path, value = why
                return self.verdict(trace, False, f"{o.name or o.type} {o.id} failed ({reason}).",
                                    [cite(o.id, path, value)])
        return self.verdict(trace, True, f"none of {watched} watched observations failed.", [])


class RecoveryAfterFailure(_FailureRule):
    """Every failed watched observation is followed, later in the trace, by a call of the same name (or
    one named in ``recoveredBy``) that did not fail. A trace without a failure passes."""

    primitive = "recovery-after-failure"
    optional = (*_FailureRule.optional, "recoveredBy")

    def __init__(self, criterion_id: str, params: Mapping[str, Any], **kw: Any) -> None:
        super().__init__(criterion_id, params, **kw)
        self.recovered_by = set(self.param("recoveredBy", list, []))

    def run(self, trace: Trace) -> CriterionVerdict:
        obs = trace.observations
        failures = 0
        last_ok = None
        for i, o in enumerate(obs):
            if not self.watched(o):
                continue
            why = self.failure(o)
            if why is None:
                continue
            failures += 1
            names = {o.name} | self.recovered_by
            ok = next((later for later in obs[i + 1:] if later.name in names and self.failure(later) is None), None)
            if ok is None:
                reason, path, value = why
                return self.verdict(trace, False, f"{o.name or o.type} {o.id} failed ({reason}) and no later "
                                    f"{' or '.join(sorted(n for n in names if n))} succeeded.",
                                    [cite(o.id, path, value)])
            last_ok = (o, why, ok)
        if last_ok is None:
            return self.verdict(trace, True, "no watched observation failed; nothing to recover from.", [])
        o, (reason, path, value), ok = last_ok
        return self.verdict(trace, True, f"{failures} failure(s) each followed by a successful call, e.g. "
                            f"{o.id} ({reason}) by {ok.id}.", [cite(o.id, path, value), cite(ok.id, "id", ok.id)])
