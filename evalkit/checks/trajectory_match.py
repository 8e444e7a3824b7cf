"""``trajectory-match``: the trace's tool sequence against an expected one.

Modes (``mode``):

- ``exact``: the same calls in the same order, nothing else;
- ``in-order``: the expected calls occur in this order, other calls may come between (a subsequence);
- ``any-order``: every expected call occurs, in any order (as often as it is expected);
- ``graded``: the longest common subsequence of the two, as precision (of the calls made), recall (of the
  calls expected) and F1; passes when ``metric`` (f1 by default) reaches ``threshold`` (1 by default).

``allowExtra: false`` makes ``in-order`` and ``any-order`` refuse calls the expected sequence lacks.
``ignore`` leaves tools out of both sequences before matching (a ``think`` tool, a logger, or the read-only
tools when only the writes are held to the expected ones). ``skipFailed: true`` leaves out the calls that failed
(as ``tool-output-failure`` reads a failure: level ERROR, an ``error`` in the output, output text that reads as an
error): a write the system refused changed nothing, so a retried write is one write. An expected step is a tool
name or ``{tool, args}`` with an argument predicate; ``expectedFrom: {obs, path}`` reads the expected steps
from the trace itself (a benchmark's ground-truth actions in its metadata), each a name or an object with
``name`` (or ``tool``) and arguments (``kwargs``, ``arguments``, ``args`` or ``input``), compared as
``compareArgs`` says: ``none`` (names only, the default), ``exact`` or ``subset``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from evalkit.checks.base import MAX_REFS, Check
from evalkit.checks.primitives import failure_of
from evalkit.checks.reading import TRACE_ROOT, cite, places
from evalkit.checks.tool_calls import (
    ArgsPredicate,
    arguments,
    first_difference,
    json_subset,
    sequence_text,
    tool_calls,
    types_param,
)
from evalkit.contracts.trace import Observation, Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import CheckError

MODES = ("exact", "in-order", "any-order", "graded")
METRICS = ("f1", "precision", "recall")
COMPARE_ARGS = ("none", "exact", "subset")
_NAME_KEYS = ("name", "tool")
_ARG_KEYS = ("kwargs", "arguments", "args", "input")


class Step(NamedTuple):
    """One expected call: the tool's name and, optionally, what its arguments must satisfy."""

    tool: str
    args: ArgsPredicate | None = None
    expected_args: Any = None
    compare: str = "none"

    def matches(self, call: Observation) -> bool:
        if call.name != self.tool:
            return False
        if self.args is not None:
            return self.args.holds(arguments(call))
        if self.compare == "exact":
            return arguments(call) == self.expected_args
        if self.compare == "subset":
            return json_subset(self.expected_args, arguments(call))
        return True

    def mismatch(self, call: Observation) -> str:
        """Why ``call``, a call of this step's tool, does not match it: the first argument that differs."""
        if self.args is not None:
            return "arguments that fail the step's predicate"
        found = first_difference(self.expected_args, arguments(call), subset=self.compare == "subset")
        return f"other arguments ({found})" if found else "other arguments"


def lcs_pairs(steps: Sequence[Step], calls: Sequence[Observation]) -> list[tuple[int, int]]:
    """The (step index, call index) pairs of a longest common subsequence of steps and calls."""
    n, m = len(steps), len(calls)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = table[i], table[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if steps[i].matches(calls[j]) else max(below[j], row[j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if steps[i].matches(calls[j]) and table[i][j] == table[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _assign(steps: Sequence[Step], calls: Sequence[Observation]) -> dict[int, int]:
    """A largest matching of steps to distinct calls (Kuhn's augmenting paths; the sizes are small)."""
    owner: dict[int, int] = {}

    def place(i: int, seen: set[int]) -> bool:
        for j, call in enumerate(calls):
            if j in seen or not steps[i].matches(call):
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(steps)):
        place(i, set())
    return {i: j for j, i in owner.items()}


class TrajectoryMatch(Check):
    """The tool sequence against ``expected`` (or ``expectedFrom``), in ``mode`` (see the module docstring)."""

    primitive = "trajectory-match"
    optional = ("expected", "expectedFrom", "compareArgs", "mode", "allowExtra", "metric", "threshold", "ignore",
                "skipFailed", "types")

    def __init__(self, criterion_id: str, params: Mapping[str, Any], **kw: Any) -> None:
        super().__init__(criterion_id, params, **kw)
        self.mode = self.param("mode", str, "exact")
        if self.mode not in MODES:
            raise CheckError(f"trajectory-match: mode must be one of {', '.join(MODES)}", path=f"{self.where}.mode")
        self.types = types_param(self)
        self.ignore = frozenset(self.param("ignore", list, []))
        self.allow_extra = self.param("allowExtra", bool, True)
        self.skip_failed = self.param("skipFailed", bool, False)
        self.metric = self.param("metric", str, "f1")
        if self.metric not in METRICS:
            raise CheckError(f"trajectory-match: metric must be one of {', '.join(METRICS)}",
                             path=f"{self.where}.metric")
        self.threshold = float(self.param("threshold", (int, float), 1))
        if not 0 <= self.threshold <= 1:
            raise CheckError("trajectory-match: threshold must be between 0 and 1", path=f"{self.where}.threshold")
        self.compare = self.param("compareArgs", str, "none")
        if self.compare not in COMPARE_ARGS:
            raise CheckError(f"trajectory-match: compareArgs must be one of {', '.join(COMPARE_ARGS)}",
                             path=f"{self.where}.compareArgs")
        if ("expected" in self.params) == ("expectedFrom" in self.params):
            raise CheckError("trajectory-match: give exactly one of expected (a list of steps) or expectedFrom "
                             "({obs, path}: where the trace holds its expected steps)", path=self.where)
        self.steps = self._literal_steps(self.param("expected", list)) if "expected" in self.params else None
        self.source = self._place(self.param("expectedFrom", dict)) if "expectedFrom" in self.params else None

    def _literal_steps(self, items: list[Any]) -> list[Step]:
        steps = []
        for i, item in enumerate(items):
            where = f"expected[{i}]"
            if isinstance(item, str) and item:
                steps.append(Step(item))
            elif isinstance(item, dict) and isinstance(item.get("tool"), str) and set(item) <= {"tool", "args"}:
                args = ArgsPredicate(self, item["args"], f"{where}.args") if "args" in item else None
                steps.append(Step(item["tool"], args))
            else:
                raise CheckError(f"trajectory-match: {where} must be a tool name or {{tool, args}} (got {item!r})",
                                 path=f"{self.where}.{where}")
        return steps

    def _place(self, spec: dict[str, Any]) -> tuple[str, str]:
        if set(spec) - {"obs", "path"} or not isinstance(spec.get("obs", TRACE_ROOT), str) \
                or not isinstance(spec.get("path"), str):
            raise CheckError(f"trajectory-match: expectedFrom must be {{obs, path}} (got {spec!r})",
                             path=f"{self.where}.expectedFrom")
        return spec.get("obs", TRACE_ROOT), spec["path"]

    def _steps_from(self, trace: Trace) -> list[Step] | str:
        """The expected steps the trace holds, or why they cannot be read."""
        assert self.source is not None
        obs, path = self.source
        found = next(places(trace, obs, path), None)
        if found is None:
            return f"the trace holds no expected steps at {obs} {path}"
        value = found[1]
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return f"{obs} {path} is text, not a list of steps"
        if not isinstance(value, list):
            return f"{obs} {path} is not a list of steps"
        steps = []
        for i, item in enumerate(value):
            name = item if isinstance(item, str) else next(
                (item[k] for k in _NAME_KEYS if isinstance(item, dict) and isinstance(item.get(k), str)), None)
            if name is None:
                return f"{obs} {path}[{i}] names no tool (a name, or an object with name or tool)"
            args = next((item[k] for k in _ARG_KEYS if isinstance(item, dict) and k in item), None)
            if isinstance(args, str) and args.lstrip()[:1] in ("{", "["):
                args = json.loads(args)
            steps.append(Step(name, None, args, self.compare if isinstance(item, dict) else "none"))
        return steps

    def run(self, trace: Trace) -> CriterionVerdict:
        steps = self.steps if self.steps is not None else self._steps_from(trace)
        if isinstance(steps, str):
            return self.undecided(trace, f"{steps}; nothing to match the calls against.")
        steps = [s for s in steps if s.tool not in self.ignore]
        calls = [c for c in tool_calls(trace, self.types) if c.name not in self.ignore
                 and not (self.skip_failed and failure_of(c) is not None)]
        seen = f"expected {sequence_text([s.tool for s in steps])}; made {sequence_text([c.name for c in calls])}"
        if self.mode == "graded":
            return self._graded(trace, steps, calls, seen)
        if self.mode == "exact" or (self.mode == "in-order" and not self.allow_extra):
            return self._exact(trace, steps, calls, seen)
        if self.mode == "in-order":
            return self._in_order(trace, steps, calls, seen)
        return self._any_order(trace, steps, calls, seen)

    def _matched(self, trace: Trace, calls: Sequence[Observation], used: Sequence[int], critique: str) -> CriterionVerdict:
        return self.verdict(trace, True, critique, [cite(calls[j].id, "name", calls[j].name) for j in used[:MAX_REFS]])

    def _exact(self, trace: Trace, steps: list[Step], calls: list[Observation], seen: str) -> CriterionVerdict:
        for i in range(max(len(steps), len(calls))):
            if i >= len(steps):
                return self.verdict(trace, False, f"call {i + 1} ({calls[i].name}) is past the expected "
                                    f"{len(steps)}; {seen}.", [cite(calls[i].id, "name", calls[i].name)])
            if i >= len(calls):
                return self.verdict(trace, False, f"expected step {i + 1} ({steps[i].tool}) was never made; {seen}.", [])
            if not steps[i].matches(calls[i]):
                what = steps[i].mismatch(calls[i]) if calls[i].name == steps[i].tool else calls[i].name
                return self.verdict(trace, False, f"step {i + 1}: expected {steps[i].tool}, got {what}; {seen}.",
                                    [cite(calls[i].id, "name", calls[i].name)])
        return self._matched(trace, calls, range(len(calls)), f"the {len(calls)} calls match exactly; {seen}.")

    def _in_order(self, trace: Trace, steps: list[Step], calls: list[Observation], seen: str) -> CriterionVerdict:
        used, j = [], 0
        for i, step in enumerate(steps):
            while j < len(calls) and not step.matches(calls[j]):
                j += 1
            if j == len(calls):
                after = f" after {calls[used[-1]].name} {calls[used[-1]].id}" if used else ""
                return self.verdict(trace, False, f"expected step {i + 1} ({step.tool}) not made{after}; {seen}.",
                                    [cite(calls[used[-1]].id, "name", calls[used[-1]].name)] if used else [])
            used.append(j)
            j += 1
        return self._matched(trace, calls, used, f"the {len(steps)} expected calls occur in order; {seen}.")

    def _any_order(self, trace: Trace, steps: list[Step], calls: list[Observation], seen: str) -> CriterionVerdict:
        assigned = _assign(steps, calls)
        lacking = Counter(steps[i].tool for i in range(len(steps)) if i not in assigned)
        if lacking:
            missing = ", ".join(f"{t}" + (f" ({n} times)" if n > 1 else "") for t, n in sorted(lacking.items()))
            return self.verdict(trace, False, f"no call matches expected {missing}; {seen}.", [])
        used = sorted(assigned.values())
        if not self.allow_extra and len(calls) > len(steps):
            taken = set(used)
            extra = [c for j, c in enumerate(calls) if j not in taken]
            return self.verdict(trace, False, f"{len(extra)} call(s) the expected steps lack (allowExtra is false); "
                                f"{seen}.", [cite(c.id, "name", c.name) for c in extra[:MAX_REFS]])
        return self._matched(trace, calls, used, f"every expected call was made (any order); {seen}.")

    def _graded(self, trace: Trace, steps: list[Step], calls: list[Observation], seen: str) -> CriterionVerdict:
        pairs = lcs_pairs(steps, calls)
        common = len(pairs)
        precision = common / len(calls) if calls else (1.0 if not steps else 0.0)
        recall = common / len(steps) if steps else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        score = {"f1": f1, "precision": precision, "recall": recall}[self.metric]
        text = (f"longest common subsequence {common}: precision {precision:.2f}, recall {recall:.2f}, F1 {f1:.2f}; "
                f"{self.metric} {'reaches' if score >= self.threshold else 'is below'} {self.threshold:g}; {seen}.")
        if score >= self.threshold:
            return self._matched(trace, calls, [j for _, j in pairs], text)
        unmatched = [c for j, c in enumerate(calls) if j not in {b for _, b in pairs}]
        return self.verdict(trace, False, text, [cite(c.id, "name", c.name) for c in unmatched[:MAX_REFS]])
