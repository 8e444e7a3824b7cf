"""Trajectory checks on single tool calls: was a tool called (with what arguments), was it not, and were its
arguments right.

Tool calls and argument predicates are read as :mod:`evalkit.checks.tool_calls` says: observations of the
watched types (``TOOL`` by default) under the names the importer gave them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.checks.base import MAX_REFS, Check
from evalkit.checks.fast_schema import SchemaCheck
from evalkit.checks.reading import cite
from evalkit.checks.tool_calls import (
    ArgsPredicate,
    arguments,
    call_label,
    names_param,
    sequence_text,
    tool_calls,
    types_param,
)
from evalkit.contracts.trace import Observation, Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import CheckError


class _ToolRule(Check):
    """What tool-called and tool-not-called share: the tool (a name or names), an argument predicate, the
    watched types."""

    required = ("tool",)
    optional = ("args", "types")

    def __init__(self, criterion_id: str, params: Mapping[str, Any], **kw: Any) -> None:
        super().__init__(criterion_id, params, **kw)
        self.tools = names_param(self, "tool")
        self.types = types_param(self)
        self.args = ArgsPredicate(self, self.params["args"], "args") if "args" in self.params else None
        self.tool_text = " or ".join(sorted(self.tools))

    def named(self, trace: Trace) -> list[Observation]:
        return [c for c in tool_calls(trace, self.types) if c.name in self.tools]

    def matching(self, calls: list[Observation]) -> list[Observation]:
        if self.args is None:
            return calls
        return [c for c in calls if self.args.holds(arguments(c))]

    def what(self) -> str:
        return self.tool_text + ("" if self.args is None else f" with {self.args.describe()}")


class ToolCalled(_ToolRule):
    """``tool`` was called ``min``..``max`` times (default at least once), counting only calls whose
    arguments satisfy ``args`` when it is given."""

    primitive = "tool-called"
    optional = (*_ToolRule.optional, "min", "max")

    def __init__(self, criterion_id: str, params: Mapping[str, Any], **kw: Any) -> None:
        super().__init__(criterion_id, params, **kw)
        self.min = self.param("min", int, 1)
        self.max = self.param("max", int)
        if self.min < 0 or (self.max is not None and self.max < self.min):
            raise CheckError(f"tool-called: need 0 <= min <= max (min {self.min}, max {self.max})", path=self.where)

    def run(self, trace: Trace) -> CriterionVerdict:
        named = self.named(trace)
        hits = self.matching(named)
        n = len(hits)
        bound = f"at least {self.min}" + ("" if self.max is None else f" and at most {self.max}")
        if n >= self.min and (self.max is None or n <= self.max):
            return self.verdict(trace, True, f"{self.what()} called {n} time(s), {bound} required.",
                                [cite(c.id, "name", c.name) for c in hits[:MAX_REFS]])
        if self.max is not None and n > self.max:
            extra = hits[self.max:][:MAX_REFS]
            return self.verdict(trace, False, f"{self.what()} called {n} time(s), {bound} allowed; the calls past "
                                f"the limit: {', '.join(c.id for c in extra)}.", [cite(c.id, "name", c.name) for c in extra])
        if named and self.args is not None:  # called, but not with those arguments: cite what it was called with
            matched = {c.id for c in hits}
            near = [c for c in named if c.id not in matched][:MAX_REFS]
            return self.verdict(trace, False, f"{self.what()} called {n} time(s), {bound} required; "
                                f"{self.tool_text} was called {len(named)} time(s) with other arguments.",
                                [cite(c.id, "input", c.input) for c in near])
        seen = [c.name for c in tool_calls(trace, self.types)]
        return self.verdict(trace, False, f"{self.what()} called {n} time(s), {bound} required; the calls were: "
                            f"{sequence_text(seen)}.", [])


class ToolNotCalled(_ToolRule):
    """``tool`` was never called (with arguments satisfying ``args``, when it is given)."""

    primitive = "tool-not-called"

    def run(self, trace: Trace) -> CriterionVerdict:
        hits = self.matching(self.named(trace))
        if not hits:
            return self.verdict(trace, True, f"{self.what()} never called ({len(tool_calls(trace, self.types))} "
                                "tool call(s) read).", [])
        first = hits[0]
        refs = [cite(first.id, "name", first.name)]
        if self.args is not None:
            refs.append(cite(first.id, "input", first.input))
        return self.verdict(trace, False, f"{self.what()} was called {len(hits)} time(s), first as "
                            f"{call_label(first)}.", refs)


CALLS = ("all", "first", "last")
"""Which calls of the tool ``argument-correct`` checks."""


class ArgumentCorrect(Check):
    """The arguments of ``tool``'s calls (``calls``: all, the first or the last) conform to the JSON Schema
    ``schema`` or satisfy the predicate ``expected``; a trace without such a call passes saying so, unless
    ``required`` is true."""

    primitive = "argument-correct"
    required = ("tool",)
    optional = ("schema", "expected", "calls", "required", "types")

    def __init__(self, criterion_id: str, params: Mapping[str, Any], **kw: Any) -> None:
        super().__init__(criterion_id, params, **kw)
        self.tools = names_param(self, "tool")
        self.types = types_param(self)
        if ("schema" in self.params) == ("expected" in self.params):
            raise CheckError("argument-correct: give exactly one of schema (a JSON Schema) or expected (an argument "
                             "predicate: {equals}, {subset} or {matches})", path=self.where)
        self.schema = None
        if "schema" in self.params:
            try:
                self.schema = SchemaCheck(self.param("schema", dict))
            except ValueError as exc:
                raise CheckError(f"argument-correct: {exc}", path=f"{self.where}.schema") from None
        self.expected = ArgsPredicate(self, self.params["expected"], "expected") if "expected" in self.params else None
        self.calls = self.param("calls", str, "all")
        if self.calls not in CALLS:
            raise CheckError(f"argument-correct: calls must be one of {', '.join(CALLS)}", path=f"{self.where}.calls")
        self.required_call = self.param("required", bool, False)
        self.tool_text = " or ".join(sorted(self.tools))

    def _problem(self, args: Any) -> str | None:
        if self.schema is not None:
            problem = self.schema.problem(args)
            return None if problem is None else f"arguments{problem[0]} break the schema: {problem[1]}"
        assert self.expected is not None
        return None if self.expected.holds(args) else f"arguments are not {self.expected.describe()}"

    def run(self, trace: Trace) -> CriterionVerdict:
        calls = [c for c in tool_calls(trace, self.types) if c.name in self.tools]
        if not calls:
            note = f"no call of {self.tool_text}"
            if self.required_call:
                return self.verdict(trace, False, f"{note}, and one is required.", [])
            return self.verdict(trace, True, f"{note}; no arguments to check.", [])
        chosen = calls if self.calls == "all" else [calls[0] if self.calls == "first" else calls[-1]]
        for call in chosen:
            problem = self._problem(arguments(call))
            if problem is not None:
                return self.verdict(trace, False, f"{call_label(call)}: {problem}.", [cite(call.id, "input", call.input)])
        which = "the first" if self.calls == "first" else "the last" if self.calls == "last" else f"all {len(chosen)}"
        return self.verdict(trace, True, f"{which} call(s) of {self.tool_text} have correct arguments.",
                            [cite(c.id, "input", c.input) for c in chosen[:MAX_REFS]])
