"""What every code check shares: parameters read strictly from the matrix, and the verdict it writes.

A code check is certain: it passes or fails with confidence 1, a critique that says what it read, and refs
to the values it read (resolvable with ``resolve_ref``). The one exception is a trace that does not record
what the check measures (no timestamps for a time budget): that verdict is ``uncertain``, saying so.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from evalkit.checks.reading import holds
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import BlockedBy, CriterionVerdict, Ref
from evalkit.errors import CheckError

MAX_REFS = 3
"""Refs a verdict cites at most: the first places read, enough to re-check it by hand."""


class Check(ABC):
    """One code check of one criterion, built once from the matrix and run on every trace."""

    primitive: ClassVar[str]
    required: ClassVar[tuple[str, ...]] = ()
    optional: ClassVar[tuple[str, ...]] = ()

    def __init__(self, criterion_id: str, params: Mapping[str, Any], *, where: str = "check.params") -> None:
        self.criterion_id = criterion_id
        self.where = where
        params = dict(params)
        self.when = _when(params.pop("when", None), f"{where}.when")
        unknown = sorted(set(params) - set(self.required) - set(self.optional))
        if unknown:
            known = ", ".join((*self.required, *self.optional, "when"))
            raise CheckError(f"{self.primitive}: unknown parameter(s) {', '.join(unknown)} (known: {known})",
                             path=where)
        missing = [p for p in self.required if p not in params]
        if missing:
            raise CheckError(f"{self.primitive}: missing parameter(s) {', '.join(missing)}", path=where)
        self.params = dict(params)

    def param(self, name: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
        """A parameter of the expected type, or ``default`` when optional and absent."""
        if name not in self.params:
            return default
        value = self.params[name]
        if not isinstance(value, kind) or isinstance(value, bool) and bool not in _as_tuple(kind):
            names = " or ".join(k.__name__ for k in _as_tuple(kind))
            raise CheckError(f"{self.primitive}: {name} must be {names} (got {value!r})", path=f"{self.where}.{name}")
        return value

    @abstractmethod
    def run(self, trace: Trace) -> CriterionVerdict:
        """The verdict of this check on one trace (its ``when`` not consulted)."""

    def decide(self, trace: Trace) -> CriterionVerdict:
        """The verdict on one trace: a pass that says so when ``when`` does not hold (the criterion does
        not apply, as a pass condition's "otherwise passing is automatic"), else :meth:`run`."""
        for obs, path, value in self.when:
            if not holds(trace, obs, path, value):
                return self.verdict(trace, True, f"does not apply: {value!r} is not at {obs}.{path}.", [])
        return self.run(trace)

    def verdict(self, trace: Trace, passed: bool, critique: str, refs: list[Ref | None]) -> CriterionVerdict:
        """A certain verdict; refs that came out empty are left out."""
        kept = [r for r in refs if r is not None]
        fields = {"criterion_id": self.criterion_id, "trace_id": trace.id, "result": "pass" if passed else "fail",
                  "confidence": 1.0, "critique": f"[{self.primitive}] {critique}"}
        if kept:
            fields["refs"] = kept
        return CriterionVerdict(**fields)

    def undecided(self, trace: Trace, critique: str) -> CriterionVerdict:
        """An ``uncertain`` verdict for a trace that does not record what the check measures (a time budget
        on a trace without timestamps): never a pass it cannot show, never a fail it cannot show either."""
        text = f"[{self.primitive}] {critique}"
        return CriterionVerdict(criterion_id=self.criterion_id, trace_id=trace.id, result="uncertain",
                                confidence=None, critique=text, blocked_by=BlockedBy(kind="scope", text=critique))


def _when(spec: Any, where: str) -> list[tuple[str, str, str]]:
    """The ``when`` precondition: a list of ``{obs, path, value}`` that must all hold for the check to apply."""
    if spec is None:
        return []
    items = spec if isinstance(spec, list) else [spec]
    out = []
    for i, item in enumerate(items):
        if (not isinstance(item, dict) or set(item) - {"obs", "path", "value"}
                or not all(isinstance(item.get(k), str) for k in ("obs", "value"))
                or not isinstance(item.get("path", ""), str)):
            raise CheckError(f"when must be {{obs, path, value}} (or a list of them) with string values (got {item!r})",
                             path=f"{where}[{i}]")
        out.append((item["obs"], item.get("path", ""), item["value"]))
    return out


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)
