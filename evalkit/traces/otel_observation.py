"""One OpenTelemetry span's ``Observation``, decided once per kind of span.

Why a module of its own: the importer builds an observation for every span, and most of the work of
deciding how (its type, where its name, model, usage and payloads come from) depends only on which
attribute keys the span has and on the few values that pick the type. The spans of one
instrumentation repeat the same keys, so that decision (a *plan*) is made once per kind of span and
remembered; each span then does only the lookups its plan names. ``plan_of`` is the general decision
(``evalkit.traces.otel_attributes``), so a remembered plan gives what deciding again would.

``PlainSpan`` is a span read by the short path (``otel_spans._plain_span``) with its observation
already built: none of its fields can change later, as only Vercel AI SDK spans are ever joined into
another trace (``evalkit.traces.vercel_ai``), and those stay a general ``Span``.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel

from evalkit.contracts.trace import Observation, Trace
from evalkit.traces.otel_attributes import (
    MISSING,
    UsagePlan,
    first_text,
    observation_type,
    payload_plan,
    payloads,
    planned_payloads,
    planned_usage,
    usage_plan,
)
from evalkit.traces.source import SourceValue
from evalkit.traces.tool_spans import TOOL_NAME, is_tool_span_name, tool_convention
from evalkit.traces.vercel_ai import VERCEL_TOOL_NAME

__all__ = ["NO_EVENTS", "PlainSpan", "built", "new_plain_span", "observation_of", "plan_of"]

M = TypeVar("M", Observation, Trace)

MODEL_KEYS = ("gen_ai.response.model", "ai.response.model", "gen_ai.request.model", "llm.model_name", "ai.model.id")
"""Where a span names its model, the first given wins."""
_TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name", *VERCEL_TOOL_NAME)
_OP, _KIND, _VERCEL_OP = "gen_ai.operation.name", "openinference.span.kind", "ai.operationId"
TOOL_BY = "toolBy"
"""Metadata key naming the convention that made a plain span a TOOL (a ``tool.name`` attribute, a ``tool.*`` name)."""
"""The attributes whose values, besides the keys, decide a span's type (see ``observation_type``)."""

Plan = tuple[str, "tuple[str, ...] | None", "tuple[str, ...]", UsagePlan, "tuple[Any, ...] | None"]
_NO_PAYLOAD = (None, None, False, True)
"""The ``payload_plan`` of a model call or agent without payload attributes: only events may give them."""
_NO_PAYLOAD_NOR_EVENTS = (None, None, False, False)
"""The ``payload_plan`` of any other span without payload attributes: it has none."""
_PLANS: dict[tuple[Any, ...], Plan] = {}
"""Plans by (attribute keys, the values of ``_OP``, ``_KIND`` and ``_VERCEL_OP``). Cleared past the limit:
an export holds a handful of kinds of span, so the limit is only reached by inputs that vary their keys."""
_PLANS_KEPT = 1024

_set = object.__setattr__
_new = object.__new__
# pydantic's BaseModel keeps these in slots: their descriptors set them without object.__setattr__'s lookup.
_set_fields_set = BaseModel.__pydantic_fields_set__.__set__  # type: ignore[attr-defined]
_set_extra = BaseModel.__pydantic_extra__.__set__  # type: ignore[attr-defined]
_set_private = BaseModel.__pydantic_private__.__set__  # type: ignore[attr-defined]


def built(model: type[M], values: dict[str, Any], fields_set: set[str]) -> M:
    """The ``model`` of ``values`` (every field, in the model's order), as ``model_construct`` builds it:
    the same ``__dict__`` and ``model_fields_set``, without its per-field alias lookups, which cost more
    than validating. Only for values of their fields' types by construction (see :func:`observation_of`
    and ``otel._trace``); ``tests/traces/test_otel_built.py`` checks they equal the validated models."""
    model_obj = _new(model)
    _set(model_obj, "__dict__", values)
    _set_fields_set(model_obj, fields_set)
    _set_extra(model_obj, None)
    _set_private(model_obj, None)
    return model_obj


def plan_of(attrs: dict[str, Any]) -> Plan:
    """How to build the observation of a span with these attributes: (type, the tool-name keys present
    for a TOOL else None, the model keys present, whether any usage key is present, the
    ``payload_plan``). It reads only the keys and the values of ``_OP``, ``_KIND`` and ``_VERCEL_OP``."""
    obs_type = observation_type(attrs)
    tool_keys = tuple(k for k in _TOOL_NAME_KEYS if k in attrs) if obs_type == "TOOL" else None
    payload_keys = payload_plan(obs_type, attrs)
    if payload_keys is not None and payload_keys[:3] == _NO_PAYLOAD[:3]:
        payload_keys = _NO_PAYLOAD if payload_keys[3] else _NO_PAYLOAD_NOR_EVENTS
    return obs_type, tool_keys, tuple(k for k in MODEL_KEYS if k in attrs), usage_plan(attrs), payload_keys


def _plan(attrs: dict[str, Any]) -> Plan:
    """The plan of ``attrs``, remembered for the next span with the same keys and deciding values."""
    try:
        return _PLANS[tuple(attrs), attrs.get(_OP), attrs.get(_KIND), attrs.get(_VERCEL_OP)]
    except KeyError:
        pass
    except TypeError:  # a list or map where the type is decided: decided again for each such span
        return plan_of(attrs)
    if len(_PLANS) >= _PLANS_KEPT:
        _PLANS.clear()
    plan = _PLANS[tuple(attrs), attrs.get(_OP), attrs.get(_KIND), attrs.get(_VERCEL_OP)] = plan_of(attrs)
    return plan


def observation_of(span_id: str, parent_id: str | None, span_name: str | None, kind: Any, start: str | None,
                   end: str | None, attrs: dict[str, Any], events: list[dict[str, Any]], error: bool,
                   status_message: str | None, resource: dict[str, Any], scope: str | None,
                   joined_from: str | None) -> Observation:
    """The Observation of a span's normalized fields (absent fields left unset).

    Built without validation, as each value is already of its field's type: ids and names are strings
    (``otel_spans`` checks them), times come from ``otel_ids`` as ISO text ``datetime.fromisoformat``
    reads (the check ``Observation`` makes), the type is one of the mapped ``ObservationType`` values,
    usage holds only ints and floats, and metadata is a fresh dict.
    """
    obs_type, tool_keys, model_keys, usage_keys, payload_keys = _plan(attrs)
    tool_by = None
    if obs_type == "SPAN" and is_tool_span_name(span_name):
        tool_by = TOOL_NAME
        # A tool call known only by its span name (``tool.search.duckduckgo``): read as a TOOL's payloads.
        obs_type, tool_keys, payload_keys = "TOOL", tuple(k for k in _TOOL_NAME_KEYS if k in attrs), None
    elif obs_type == "TOOL" and not attrs.get(_OP) and not attrs.get(_KIND) and not attrs.get(_VERCEL_OP):
        tool_by = tool_convention(span_name, attrs)
    name = span_name
    if tool_keys is not None:
        name = first_text(attrs, *tool_keys) or (name.removeprefix("execute_tool ") if name else None)
    model = None
    for key in model_keys:  # as first_text, over the keys present only
        value = attrs[key]
        if isinstance(value, str) and value:
            model = value
            break
    metadata: dict[str, Any] = {"attributes": attrs}
    if resource:
        metadata["resource"] = resource
    if scope:
        metadata["scope"] = scope
    if kind is not None:
        metadata["spanKind"] = kind
    if span_name is not None and span_name != name:
        metadata["spanName"] = span_name
    if events:
        metadata["events"] = events
    if joined_from is not None:
        metadata["sourceTraceId"] = joined_from
    if tool_by is not None:
        metadata[TOOL_BY] = tool_by
    if payload_keys is None:
        inp, out = payloads(obs_type, attrs, events)
    elif payload_keys is _NO_PAYLOAD_NOR_EVENTS or payload_keys is _NO_PAYLOAD and not events:
        inp = out = MISSING  # what planned_payloads gives, without the call
    else:
        inp, out = planned_payloads(payload_keys, attrs, events)
    fields_set = {"id", "type", "metadata"}
    if name is not None:
        fields_set.add("name")
    if parent_id is not None:
        fields_set.add("parent_id")
    if start is not None:
        fields_set.add("start_time")
    if end is not None:
        fields_set.add("end_time")
    if model is not None:
        fields_set.add("model")
    tokens = planned_usage(usage_keys, attrs) if usage_keys else None
    if tokens is not None:
        fields_set.add("usage")
    level = None
    if error:
        level = "ERROR"
        fields_set.add("level")
        if status_message is not None:
            fields_set.add("status_message")
    else:
        status_message = None
    if inp is MISSING:
        inp = None
    else:
        fields_set.add("input")
    if out is MISSING:
        out = None
    else:
        fields_set.add("output")
    values = {"id": span_id, "type": obs_type, "name": name, "input": inp, "output": out,
              "parent_id": parent_id, "start_time": start, "end_time": end, "model": model,
              "usage": tokens, "level": level, "status_message": status_message, "metadata": metadata,
              "input_repeats": None}
    model_obj = _new(Observation)  # as built() does, without the call
    _set(model_obj, "__dict__", values)
    _set_fields_set(model_obj, fields_set)
    _set_extra(model_obj, None)
    _set_private(model_obj, None)
    return model_obj


class PlainSpan(NamedTuple):
    """A span read by the short path, with its observation built. It reads as a ``Span`` where the
    importer groups spans and puts them in order (ids, raw value, where it was read, start key)."""

    observation: Observation
    sv: SourceValue
    path: str
    raw: dict[str, Any]
    trace_id: str
    id: str
    """The span id (``tree.order_observations`` reads it as ``id``)."""
    parent_id: str | None
    start_key: int

    @property
    def span_id(self) -> str:
        """The span id."""
        return self.id

    @property
    def id_key(self) -> str:
        """The key the span id was read from (the short path reads only ``spanId``)."""
        return "spanId"

    @property
    def attributes(self) -> dict[str, Any]:
        """The decoded attributes (``vercel_ai.join_orphans`` reads them)."""
        return self.observation.metadata["attributes"]  # type: ignore[index]

    @property
    def start(self) -> str | None:
        """The ISO start time."""
        return self.observation.start_time

    @property
    def end(self) -> str | None:
        """The ISO end time."""
        return self.observation.end_time

    @property
    def joined_from(self) -> None:
        """Never joined: only Vercel AI SDK spans are, and those are read the general way."""
        return None


new_plain_span = functools.partial(tuple.__new__, PlainSpan)
"""A ``PlainSpan`` of a tuple of its fields, without the Python-level ``__new__`` of a named tuple."""
NO_EVENTS: list[dict[str, Any]] = []
"""The events of every span of the short path (it takes none); never changed."""
