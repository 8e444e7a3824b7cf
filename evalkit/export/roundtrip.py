"""Scores and evaluation events made elsewhere, back into evalkit as verdicts to calibrate.

Readers for Langfuse scores (an ingestion batch, a trace export with ``scores``, a page of the
scores API) and for OpenTelemetry ``gen_ai.evaluation.result`` events (span events in an OTLP
traces document, or log records in an OTLP logs document). Whatever evalkit exported itself comes
back exactly (the verdict rides along); a score from another tool becomes a verdict only through an
explicit reading: a BOOLEAN score (1 = pass) and the words pass/fail/uncertain are read as such,
anything else needs ``value_map`` or a threshold, never a guess. Human labels found in an export
are not verdicts: they are counted and left out.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.contracts.verdict import BlockedBy, CriterionVerdict
from evalkit.errors import InputError, StrictJSONError
from evalkit.export.langfuse import METADATA_KEY
from evalkit.export.otel import EVALUATION_EVENT, KIND_ATTRIBUTE, RECORD_ATTRIBUTE, TRACE_ATTRIBUTE
from evalkit.io.strict_json import loads_strict, read_json_strict

VERDICT_WORDS = ("pass", "fail", "uncertain")


@dataclass(frozen=True)
class ScoreReading:
    """How to read a score that is not pass/fail already.

    ``value_map`` maps a value's text (``"0"``, ``"0.1"``, ``"relevant"``) to pass/fail/uncertain;
    ``pass_at_most`` / ``pass_at_least`` read a numeric score as pass on one side of a threshold
    (``hallucination`` 0.1 with ``pass_at_most=0.5`` is a pass). ``names`` keeps only those scores.
    """

    value_map: dict[str, str] = field(default_factory=dict)
    pass_at_most: float | None = None
    pass_at_least: float | None = None
    names: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.pass_at_most is not None and self.pass_at_least is not None:
            raise InputError("give one threshold: --pass-at-most or --pass-at-least", path="--pass-at-most")


@dataclass
class ImportedVerdicts:
    """What a reader found: verdicts in file order, and what it did not read as verdicts."""

    verdicts: list[CriterionVerdict] = field(default_factory=list)
    human_labels: int = 0
    """Human labels in the file (exported by evalkit with ``--labels``): left out, they are not verdicts."""
    other_names: int = 0
    """Scores whose name was not among ``ScoreReading.names``."""
    duplicates: int = 0
    """Scores equal to an earlier one for the same trace and criterion."""


def _number_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _result(value: Any, label: str | None, data_type: str | None, reading: ScoreReading,
            where: tuple[str, str]) -> str:
    file, path = where
    for text in (label, None if value is None else _number_text(value)):
        if text is None:
            continue
        if text in reading.value_map:
            return reading.value_map[text]
        if text.lower() in VERDICT_WORDS:
            return text.lower()
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if data_type == "BOOLEAN" and number in (0, 1):
        return "pass" if number == 1 else "fail"
    if number is not None and reading.pass_at_most is not None:
        return "pass" if number <= reading.pass_at_most else "fail"
    if number is not None and reading.pass_at_least is not None:
        return "pass" if number >= reading.pass_at_least else "fail"
    shown = label if label is not None else value
    raise InputError(f"score {shown!r}{f' ({data_type})' if data_type else ''} is not pass/fail/uncertain; "
                     "say how to read it with --map VALUE=pass|fail|uncertain, or for numbers "
                     "--pass-at-most X / --pass-at-least X", file=file, path=path)


def _add(out: ImportedVerdicts, seen: dict[tuple[str, str], tuple[CriterionVerdict, str]],
         verdict: CriterionVerdict, where: tuple[str, str]) -> None:
    key = (verdict.trace_id, verdict.criterion_id)
    earlier = seen.get(key)
    if earlier is None:
        seen[key] = (verdict, where[1])
        out.verdicts.append(verdict)
    elif earlier[0] == verdict:
        out.duplicates += 1
    else:
        raise InputError(f"a second, different score {verdict.criterion_id!r} for trace {verdict.trace_id!r} "
                         f"(first at {earlier[1]}); keep one per trace and criterion",
                         file=where[0], path=where[1])


def _from_record(record: Any, where: tuple[str, str]) -> CriterionVerdict:
    try:
        return CriterionVerdict.model_validate(record)
    except ValueError as exc:
        raise InputError(f"the evalkit verdict it carries is not valid: {exc}",
                         file=where[0], path=where[1]) from None


def _verdict(criterion: str, trace_id: str, result: str, critique: str | None,
             where: tuple[str, str]) -> CriterionVerdict:
    extra = {}
    if result == "uncertain":
        # The contract's abstention needs a reason; the honest one is that the source gave none of its own.
        text = f"the source recorded 'uncertain' ({Path(where[0]).name}, {where[1]})"
        extra["blocked_by"] = BlockedBy(kind="scope", text=text)
    return CriterionVerdict(criterion_id=criterion, trace_id=trace_id, result=result, confidence=None,
                            critique=critique or None, **extra)


# --- Langfuse -----------------------------------------------------------------------------------

def _looks_like_score(value: dict[str, Any]) -> bool:
    return "name" in value and "traceId" in value and ("value" in value or "stringValue" in value)


def _langfuse_scores(value: Any, path: str,
                     trace_id: str | None = None) -> Iterator[tuple[str, dict, str | None]]:
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield from _langfuse_scores(item, f"{path}[{i}]", trace_id)
        return
    if not isinstance(value, dict):
        return
    if isinstance(value.get("batch"), list):
        for i, event in enumerate(value["batch"]):
            if (isinstance(event, dict) and event.get("type") == "score-create"
                    and isinstance(event.get("body"), dict)):
                yield f"{path}batch[{i}].body", event["body"], None
        return
    if _looks_like_score(value) and "observations" not in value:
        yield path.rstrip("."), value, trace_id
        return
    own_id = value.get("id") if isinstance(value.get("id"), str) and "observations" in value else trace_id
    if isinstance(value.get("scores"), list):
        for i, score in enumerate(value["scores"]):
            if isinstance(score, dict):
                yield f"{path}scores[{i}]", score, own_id
    for key in ("trace", "data"):
        if isinstance(value.get(key), dict | list):
            inner = f"{path}{key}" + ("." if isinstance(value[key], dict) else "")
            yield from _langfuse_scores(value[key], inner, own_id)


def _metadata(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = loads_strict(raw)
        except StrictJSONError:
            return {}
    return raw if isinstance(raw, dict) else {}


def verdicts_from_langfuse(path: str | Path, reading: ScoreReading | None = None) -> ImportedVerdicts:
    """Verdicts from the Langfuse scores in a file (ingestion batch, trace export, or scores API page).

    Args:
        path: the JSON file.
        reading: how to read scores that are not BOOLEAN or pass/fail words.

    Raises:
        InputError: no scores in the file, a score without a trace id, a value there is no reading for,
            or two different scores of one name for one trace (each naming file and field).
    """
    reading = reading or ScoreReading()
    file = str(path)
    scores = list(_langfuse_scores(read_json_strict(path), ""))
    if not scores:
        raise InputError("no Langfuse scores here (looked for a score-create batch, 'scores' of a trace "
                         "export, and a scores API page)", file=file)
    out = ImportedVerdicts()
    seen: dict[tuple[str, str], tuple[CriterionVerdict, str]] = {}
    for spath, score, parent_trace in scores:
        where = (file, spath)
        meta = _metadata(score.get("metadata")).get(METADATA_KEY)
        if isinstance(meta, dict) and meta.get("kind") == "human":
            out.human_labels += 1
            continue
        name = score.get("name")
        if not isinstance(name, str) or not name:
            raise InputError("score has no name", file=file, path=f"{spath}.name")
        if reading.names is not None and name not in reading.names:
            out.other_names += 1
            continue
        if isinstance(meta, dict) and meta.get("kind") == "judge" and "record" in meta:
            _add(out, seen, _from_record(meta["record"], (file, f"{spath}.metadata")), where)
            continue
        trace_id = score.get("traceId") or parent_trace
        if not isinstance(trace_id, str) or not trace_id:
            raise InputError("score has no traceId (a session or dataset-run score judges no trace)",
                             file=file, path=f"{spath}.traceId")
        label = score.get("stringValue") if isinstance(score.get("stringValue"), str) else None
        value = score.get("value")
        if isinstance(value, str):
            label, value = value, None
        result = _result(value, label, score.get("dataType"), reading, (file, f"{spath}.value"))
        _add(out, seen, _verdict(name, trace_id, result, score.get("comment"), where), where)
    return out


# --- OpenTelemetry ------------------------------------------------------------------------------

def _attributes(raw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in raw if isinstance(raw, list) else ():
        if isinstance(item, dict) and isinstance(item.get("value"), dict) and item["value"]:
            kind, value = next(iter(item["value"].items()))
            if kind == "intValue":
                value = int(value)
            out[item.get("key")] = value
    return out


def _evaluation_events(doc: Any) -> Iterator[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(path, trace id, event attributes, span attributes) of every evaluation event in an OTLP document."""
    if not isinstance(doc, dict):
        return
    for i, rs in enumerate(doc.get("resourceSpans") or ()):
        for j, ss in enumerate(rs.get("scopeSpans") or () if isinstance(rs, dict) else ()):
            for k, span in enumerate(ss.get("spans") or () if isinstance(ss, dict) else ()):
                span_attrs = _attributes(span.get("attributes"))
                for e, event in enumerate(span.get("events") or ()):
                    if isinstance(event, dict) and event.get("name") == EVALUATION_EVENT:
                        yield (f"resourceSpans[{i}].scopeSpans[{j}].spans[{k}].events[{e}]",
                               span.get("traceId"), _attributes(event.get("attributes")), span_attrs)
    for i, rl in enumerate(doc.get("resourceLogs") or ()):
        for j, sl in enumerate(rl.get("scopeLogs") or () if isinstance(rl, dict) else ()):
            for k, rec in enumerate(sl.get("logRecords") or () if isinstance(sl, dict) else ()):
                attrs = _attributes(rec.get("attributes"))
                if rec.get("eventName") == EVALUATION_EVENT or attrs.get("event.name") == EVALUATION_EVENT:
                    yield f"resourceLogs[{i}].scopeLogs[{j}].logRecords[{k}]", rec.get("traceId"), attrs, {}


def verdicts_from_otel(path: str | Path, reading: ScoreReading | None = None) -> ImportedVerdicts:
    """Verdicts from the ``gen_ai.evaluation.result`` events of an OTLP JSON file (spans or logs).

    A verdict's trace id is the evalkit trace id evalkit's own export carries, else the event's
    OTel trace id (hex), which is the id of that trace imported into evalkit from OpenTelemetry.

    Raises:
        InputError: no evaluation events, an event without ``gen_ai.evaluation.name`` or a trace id, a
            score there is no reading for, or two different results of one name for one trace.
    """
    reading = reading or ScoreReading()
    file = str(path)
    events = list(_evaluation_events(read_json_strict(path)))
    if not events:
        raise InputError(f"no {EVALUATION_EVENT} events here (looked in resourceSpans events and "
                         "resourceLogs)", file=file)
    out = ImportedVerdicts()
    seen: dict[tuple[str, str], tuple[CriterionVerdict, str]] = {}
    for epath, otel_trace, attrs, span_attrs in events:
        where = (file, epath)
        if span_attrs.get(KIND_ATTRIBUTE) == "human":
            out.human_labels += 1
            continue
        name = attrs.get("gen_ai.evaluation.name")
        if not isinstance(name, str) or not name:
            raise InputError("evaluation event has no gen_ai.evaluation.name", file=file,
                             path=f"{epath}.attributes")
        if reading.names is not None and name not in reading.names:
            out.other_names += 1
            continue
        if span_attrs.get(KIND_ATTRIBUTE) == "judge" and isinstance(attrs.get(RECORD_ATTRIBUTE), str):
            try:
                record = loads_strict(attrs[RECORD_ATTRIBUTE])
            except StrictJSONError as exc:
                raise InputError(f"{RECORD_ATTRIBUTE} is not JSON: {exc}", file=file, path=epath) from None
            _add(out, seen, _from_record(record, where), where)
            continue
        trace_id = span_attrs.get(TRACE_ATTRIBUTE) or otel_trace
        if not isinstance(trace_id, str) or not trace_id:
            raise InputError("evaluation event has no trace id", file=file, path=f"{epath}.traceId")
        label = attrs.get("gen_ai.evaluation.score.label")
        label = label if isinstance(label, str) else None
        result = _result(attrs.get("gen_ai.evaluation.score.value"), label, None, reading,
                         (file, f"{epath}.attributes"))
        critique = attrs.get("gen_ai.evaluation.explanation")
        _add(out, seen, _verdict(name, trace_id, result, critique, where), where)
    return out
