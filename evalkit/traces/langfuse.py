"""Langfuse exports: the public API trace, the UI download and the legacy ``{trace, observations}``.

- API trace: ``{id, name, input, output, metadata, ..., observations: [...], scores: [...]}``, one
  per value (a JSON array of them, a JSONL file of them, or an API page ``{data: [...], meta}``).
- UI download: ``{observations, scores}`` with no trace object; the trace id comes from the
  observations.
- legacy: ``{trace: {...}, observations: [...]}``; ``trace.observations``, when present, repeats
  the top-level list and is not counted twice.

The tree comes from ``parentObservationId``; siblings are ordered by ``startTime``. A payload the
export left out stays absent (omitted), never an empty value.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import ValidationError

from evalkit.contracts.trace import OBSERVATION_TYPES, Observation, Trace
from evalkit.errors import StrictJSONError
from evalkit.io.bulk import paused_gc
from evalkit.io.strict_json import loads_strict
from evalkit.traces.report import ImportContext, ImportReport
from evalkit.traces.source import SourceValue
from evalkit.traces.tool_spans import TOOL_NAME_KEYS, tool_convention
from evalkit.traces.tree import order_observations

_LEVELS = frozenset({"DEBUG", "DEFAULT", "WARNING", "ERROR"})
_TRACE_EXTRAS = ("timestamp", "sessionId", "userId", "tags", "release", "version", "environment")
_OBS_EXTRAS = ("modelParameters", "costDetails", "completionStartTime", "version", "promptName",
               "promptVersion", "environment")
_SCORE_FIELDS = ("name", "value", "stringValue", "dataType", "comment", "observationId", "source")


def _observation_list(value: dict[str, Any]) -> list[Any] | None:
    obs = value.get("observations")
    return obs if isinstance(obs, list) else None


def looks_like_langfuse(value: Any) -> bool:
    """A Langfuse API trace, UI download, legacy export, or an API page of traces."""
    if not isinstance(value, dict):
        return False
    if isinstance(value.get("data"), list) and "meta" in value:
        return any(isinstance(v, dict) and "observations" in v for v in value["data"][:5])
    if "trace" in value and isinstance(value["trace"], dict) and _observation_list(value) is not None:
        return True
    obs = _observation_list(value)
    if obs is None:
        return False
    sample = [o for o in obs[:20] if isinstance(o, dict)]
    markers = ("traceId", "parentObservationId", "startTime", "usageDetails", "projectId")
    return "scores" in value or any(m in o for o in sample for m in markers)


def _as_dict(raw: Any) -> dict[str, Any] | None:
    """Langfuse metadata is an object, or (in several exports) a JSON string of one."""
    if raw is None:
        return None
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = loads_strict(raw)
        except StrictJSONError:
            return {"value": raw}
        return parsed if isinstance(parsed, dict) else {"value": parsed}
    return {"value": raw}


def _usage(o: dict[str, Any]) -> dict[str, int | float] | None:
    for key in ("usageDetails", "usage"):
        raw = o.get(key)
        if isinstance(raw, dict):
            usage = {k: v for k, v in raw.items()
                     if isinstance(v, int | float) and not isinstance(v, bool) and v is not None}
            if usage:
                return usage
    return None


def _obs_type(o: dict[str, Any], metadata: dict[str, Any] | None,
              report: ImportReport) -> tuple[str, str | None]:
    raw = str(o.get("type") or "SPAN").upper()
    otype = raw if raw in OBSERVATION_TYPES else "SPAN"
    attrs = (metadata or {}).get("attributes")
    # OpenTelemetry spans sent to Langfuse arrive as SPANs: Strands marks its tool runs only by the GenAI
    # operation name, BeeAI by a tool.* span name.
    if otype == "SPAN" and (how := tool_convention(o.get("name"), attrs if isinstance(attrs, dict) else None)):
        otype = "TOOL"
        report.mapped(f"SPANs marked as tool calls by {how}", "TOOL")
    return otype, (raw if raw != otype else None)


def _tool_name(metadata: dict[str, Any] | None) -> str | None:
    attrs = (metadata or {}).get("attributes")
    if isinstance(attrs, dict):
        for key in TOOL_NAME_KEYS:
            if isinstance(attrs.get(key), str) and attrs[key]:
                return attrs[key]
    return None


def _observation(sv: SourceValue, o: Any, path: str, report: ImportReport) -> Observation:
    if not isinstance(o, dict):
        raise sv.error("observation must be an object", path)
    if not o.get("id"):
        raise sv.error("required field is missing", f"{path}.id")
    obs_id = _id(sv, o["id"], f"{path}.id")
    metadata = _as_dict(o.get("metadata"))
    otype, source_type = _obs_type(o, metadata, report)
    extras = {k: o[k] for k in _OBS_EXTRAS if o.get(k) not in (None, {}, [])}
    if source_type:
        extras["type"] = source_type
    if extras:
        metadata = {**(metadata or {}), "langfuse": extras}
    fields: dict[str, Any] = {"id": obs_id, "type": otype}
    tool_name = _tool_name(metadata) if otype == "TOOL" else None
    if tool_name and tool_name != o.get("name"):
        # Flow graphs and tool statistics name a tool by its own name, not the span's label
        # ("execute_tool get_weather", "running tool: get_weather"); the label is kept in metadata.
        fields["name"] = tool_name
        metadata = {**(metadata or {}), "spanName": o.get("name")}
    for src, dst in (("name", "name"), ("parentObservationId", "parentId"), ("startTime", "startTime"),
                     ("endTime", "endTime"), ("model", "model"), ("statusMessage", "statusMessage")):
        if o.get(src) is not None and dst not in fields:
            fields[dst] = o[src]
    for key in ("input", "output"):
        if key in o:
            fields[key] = o[key]
    level = o.get("level")
    if level in _LEVELS:
        fields["level"] = level
    usage = _usage(o)
    if usage:
        fields["usage"] = usage
    if metadata is not None:
        fields["metadata"] = metadata
    try:
        return Observation.model_validate(fields)
    except ValidationError as exc:
        from evalkit.contract_files import validation_problems

        sub, msg = validation_problems(exc)[0]
        raise sv.error(msg, f"{path}.{sub}" if sub else path) from None


def _scores(raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        return []
    return [{k: s[k] for k in _SCORE_FIELDS if s.get(k) is not None} for s in raw if isinstance(s, dict)]


def _trace(sv: SourceValue, head: dict[str, Any], raw_obs: list[Any], scores: Any, obs_path: str,
           report: ImportReport) -> Trace:
    observations = [_observation(sv, o, f"{obs_path}[{i}]", report) for i, o in enumerate(raw_obs)]
    trace_id = head.get("id")
    if trace_id:
        trace_id = _id(sv, trace_id, "id" if head is sv.value else "trace.id")
    else:
        ids = {_id(sv, o["traceId"], f"{obs_path}[{i}].traceId")
               for i, o in enumerate(raw_obs) if isinstance(o, dict) and o.get("traceId")}
        if len(ids) != 1:
            raise sv.error("cannot tell the trace id: no trace object and "
                           f"{'no' if not ids else len(ids)} distinct observations[].traceId", "id")
        trace_id = ids.pop()
    metadata = _as_dict(head.get("metadata")) or {}
    extras = {k: head[k] for k in _TRACE_EXTRAS if head.get(k) not in (None, [], {})}
    if extras:
        metadata["langfuse"] = extras
    score_list = _scores(scores)
    if score_list:
        metadata["scores"] = score_list
    metadata["source"] = "langfuse"
    fields: dict[str, Any] = {"id": trace_id, "observations": order_observations(observations),
                              "metadata": metadata}
    if head.get("name") is not None:
        fields["name"] = head["name"]
    for key in ("input", "output"):
        if key in head:
            fields[key] = head[key]
    try:
        return Trace.model_validate(fields)
    except ValidationError as exc:
        from evalkit.contract_files import validation_problems

        sub, msg = validation_problems(exc)[0]
        raise sv.error(msg, sub or None) from None


def _id(sv: SourceValue, value: Any, path: str) -> str:
    """An id as text: a string as it is, an integer in decimal; anything else is an error, never str()."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise sv.error("id must be a string", path)


def _traces_of(sv: SourceValue, report: ImportReport) -> Iterator[Trace]:
    value = sv.value
    if not isinstance(value, dict):
        raise sv.error("expected a Langfuse trace object")
    if isinstance(value.get("data"), list) and "meta" in value:
        for i, item in enumerate(value["data"]):
            yield from _traces_of(SourceValue(item, sv.file, sv.line, i if sv.index is None else sv.index), report)
        return
    if isinstance(value.get("trace"), dict):
        head = value["trace"]
        raw_obs = value.get("observations") or []
        scores = value.get("scores", head.get("scores"))
        yield _trace(sv, head, raw_obs, scores, "observations", report)
        return
    raw_obs = _observation_list(value)
    if raw_obs is None:
        raise sv.error("required field is missing", "observations")
    head = value if "id" in value else {}
    yield _trace(sv, head, raw_obs, value.get("scores"), "observations", report)


def read_langfuse(values: Iterable[SourceValue], context: ImportContext | None = None) -> Iterator[Trace]:
    """Traces from Langfuse export values (see the module docstring for the shapes); SPANs that are tool
    calls by a framework's convention become TOOLs, counted in ``context.report``."""
    report = context.report if context is not None else ImportReport()
    for sv in values:
        with paused_gc():
            traces = list(_traces_of(sv, report))
        yield from traces
