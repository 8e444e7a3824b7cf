"""Budgets of one trace: ``step-budget`` (model calls, tool calls, seconds, tokens) and ``no-loop`` (the same
tool with the same arguments at most K times in a row).

Model calls are the innermost generation observations (:func:`model_calls`). A budget the trace cannot be
measured against (no timestamps for ``maxSeconds``, no token counts for
``maxTokens``) gives an ``uncertain`` verdict that says so, unless another budget was already exceeded:
a trace is never passed on a count it does not record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.checks.base import MAX_REFS, Check
from evalkit.checks.reading import cite, text_of
from evalkit.checks.tool_calls import arguments, call_label, names_param, tool_calls, types_param
from evalkit.contracts.trace import Observation, Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import CheckError
from evalkit.traces import utc_micros

MODEL_TYPES = ("GENERATION",)
"""Observation types that are model calls unless a criterion says otherwise (``modelTypes``)."""

TOTAL_KEYS = ("total", "total_tokens", "totalTokens")
PART_KEYS = (("input", "prompt_tokens", "input_tokens", "promptTokens"),
             ("output", "completion_tokens", "output_tokens", "completionTokens"))
"""Where a model call's usage holds its tokens: a total, else input plus output (the keys importers write)."""

DEFAULT_MAX_REPEATS = 2
"""``no-loop``'s K when none is given: one retry of the same call (after a transient failure) is not a loop,
a third identical call in a row is."""


def _tokens(usage: Mapping[str, Any] | None) -> float | None:
    if not usage:
        return None
    for key in TOTAL_KEYS:
        if isinstance(usage.get(key), int | float):
            return float(usage[key])
    parts = [next((usage[k] for k in keys if isinstance(usage.get(k), int | float)), None) for keys in PART_KEYS]
    return None if all(p is None for p in parts) else float(sum(p for p in parts if p is not None))


def _seconds(trace: Trace) -> float | None:
    """From the first start to the last end (or start) of the trace's observations; None without times."""
    micros = [m for o in trace.observations for t in (o.start_time, o.end_time) if t
              for m in (utc_micros(t),) if m is not None]
    return (max(micros) - min(micros)) / 1e6 if micros else None


def model_calls(trace: Trace, types: tuple[str, ...] = MODEL_TYPES) -> list[Observation]:
    """The trace's model calls: observations of ``types`` with none of those types beneath them. Instrumentations
    nest several generation spans for one call (Google ADK's ``call_llm`` around ``generate_content`` around the
    SDK's ``openai.chat``): the innermost is the call, as the importers count its tokens there
    (``evalkit.traces`` folds a wrapper's repeated usage into ``metadata.usageFolded``), so calls and tokens are
    not doubled."""
    models = [o for o in trace.observations if o.type in types]
    if len(models) < 2:
        return models
    parent_of = {o.id: o.parent_id for o in trace.observations}
    wrappers: set[str] = set()
    for o in models:
        parent, seen = parent_of.get(o.id), {o.id}
        while parent is not None and parent not in seen:  # a cycle in a corrupt export ends the walk
            seen.add(parent)
            wrappers.add(parent)
            parent = parent_of.get(parent)
    return [o for o in models if o.id not in wrappers]


class StepBudget(Check):
    """At most ``maxModelCalls`` model calls, ``maxToolCalls`` tool calls, ``maxSeconds`` from the first
    observation's start to the last one's end, and ``maxTokens`` tokens over the model calls (give at least
    one)."""

    primitive = "step-budget"
    optional = ("maxModelCalls", "maxToolCalls", "maxSeconds", "maxTokens", "types", "modelTypes")

    def __init__(self, criterion_id: str, params: Mapping[str, Any], **kw: Any) -> None:
        super().__init__(criterion_id, params, **kw)
        self.limits = {name: self.param(name, int if name.endswith("Calls") else (int, float))
                       for name in ("maxModelCalls", "maxToolCalls", "maxSeconds", "maxTokens")}
        self.limits = {k: v for k, v in self.limits.items() if v is not None}
        if not self.limits:
            raise CheckError("step-budget: give at least one of maxModelCalls, maxToolCalls, maxSeconds, maxTokens",
                             path=self.where)
        bad = [k for k, v in self.limits.items() if v < 0]
        if bad:
            raise CheckError(f"step-budget: {', '.join(bad)} must not be negative", path=self.where)
        self.types = types_param(self)
        self.model_types = tuple(self.param("modelTypes", list, list(MODEL_TYPES)))

    def _measure(self, trace: Trace) -> tuple[dict[str, float], dict[str, str]]:
        """The measured amounts, and why each one that could not be measured could not be."""
        got: dict[str, float] = {}
        unknown: dict[str, str] = {}
        models = model_calls(trace, self.model_types) \
            if "maxModelCalls" in self.limits or "maxTokens" in self.limits else []
        if "maxModelCalls" in self.limits:
            got["maxModelCalls"] = len(models)
        if "maxToolCalls" in self.limits:
            got["maxToolCalls"] = len(tool_calls(trace, self.types))
        if "maxSeconds" in self.limits:
            seconds = _seconds(trace)
            if seconds is None:
                unknown["maxSeconds"] = "the trace records no start or end times"
            else:
                got["maxSeconds"] = seconds
        if "maxTokens" in self.limits:
            counts = [_tokens(o.usage) for o in models]
            known = [c for c in counts if c is not None]
            got["maxTokens"] = sum(known)
            if len(known) < len(counts) or not counts:
                unknown["maxTokens"] = f"tokens recorded on {len(known)} of {len(counts)} model call(s)"
        return got, unknown

    def run(self, trace: Trace) -> CriterionVerdict:
        got, unknown = self._measure(trace)
        words = {"maxModelCalls": "model calls", "maxToolCalls": "tool calls", "maxSeconds": "seconds",
                 "maxTokens": "tokens"}
        shown = "; ".join(f"{words[k]} {got[k]:g}{' (at least)' if k in unknown else ''} of at most {v:g}"
                          for k, v in self.limits.items() if k in got)
        over = [k for k, v in self.limits.items() if k in got and got[k] > v]
        if over:
            return self.verdict(trace, False, f"over budget in {', '.join(words[k] for k in over)}: {shown}.", [])
        if unknown:
            why = "; ".join(f"{words[k]}: {reason}" for k, reason in unknown.items())
            return self.undecided(trace, f"cannot hold the trace to its budget ({why}); within it where measured: "
                                  f"{shown or 'nothing measured'}.")
        return self.verdict(trace, True, f"within budget: {shown}.", [])


class NoLoop(Check):
    """No tool called with the same arguments more than ``maxRepeats`` times in a row (default
    :data:`DEFAULT_MAX_REPEATS`); ``tool`` limits the check to some tools; ``sameOutput`` counts a repeat only
    when the output repeats too (polling a running command returns new output each time: not stuck)."""

    primitive = "no-loop"
    optional = ("maxRepeats", "tool", "sameOutput", "types")

    def __init__(self, criterion_id: str, params: Mapping[str, Any], **kw: Any) -> None:
        super().__init__(criterion_id, params, **kw)
        self.max = self.param("maxRepeats", int, DEFAULT_MAX_REPEATS)
        if self.max < 1:
            raise CheckError("no-loop: maxRepeats must be at least 1", path=f"{self.where}.maxRepeats")
        self.tools = names_param(self, "tool") if "tool" in self.params else None
        self.same_output = self.param("sameOutput", bool, False)
        self.types = types_param(self)

    def run(self, trace: Trace) -> CriterionVerdict:
        calls = tool_calls(trace, self.types)
        run_start, longest = 0, (0, 0)
        keys = [(c.name, text_of(arguments(c)), text_of(c.output) if self.same_output else None) for c in calls]
        for i in range(1, len(calls) + 1):
            if i == len(calls) or keys[i] != keys[run_start]:
                if i - run_start > longest[1] - longest[0] and (self.tools is None or calls[run_start].name in self.tools):
                    longest = (run_start, i)
                run_start = i
        start, end = longest
        n = end - start
        if n > self.max:
            loop = calls[start:end]
            same = "the same arguments and output" if self.same_output else "the same arguments"
            return self.verdict(trace, False, f"{call_label(loop[0])} and the next {n - 1} call(s) repeat the same "
                                f"tool with {same} {n} times in a row (at most {self.max} allowed).",
                                [cite(c.id, "name", c.name) for c in loop[:MAX_REFS]]
                                + ([cite(loop[0].id, "input", loop[0].input)] if loop[0].input is not None else []))
        return self.verdict(trace, True, f"{len(calls)} tool call(s); the longest run of the same call is {n} "
                            f"(at most {self.max} allowed).", [])
