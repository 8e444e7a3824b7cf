"""Decoding OTel attribute values: OTLP ``AnyValue`` lists, Jaeger typed tags and plain maps to a dict.

Helpers here raise ``BadField`` (a message plus the field path below the span); the importer in
``evalkit.traces.otel`` turns it into a located ``InputError``.
"""

from __future__ import annotations

import math
from typing import Any

from evalkit.traces.otel_ids import BadField

__all__ = ["any_value", "decode_attributes"]

_NOT_A_LIST: Any = object()
"""Stands for a container that is not a map, so not a list of values either."""


def any_value(value: Any) -> Any:
    """The plain value of an OTLP ``AnyValue`` (``{"stringValue": ...}`` and friends)."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return _to_number(value["intValue"], int)
    if "doubleValue" in value:
        return _to_number(value["doubleValue"], float)
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        return [any_value(v) for v in _values(value["arrayValue"], "arrayValue")]
    if "kvlistValue" in value:
        out = {}
        for i, kv in enumerate(_values(value["kvlistValue"], "kvlistValue")):
            if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
                raise BadField("kvlistValue entry must be an object with a string key",
                               f"kvlistValue.values[{i}]")
            out[kv["key"]] = any_value(kv.get("value"))
        return out
    if "bytesValue" in value:
        return value["bytesValue"]
    return value or None


def _values(container: Any, name: str) -> list[Any]:
    """The ``values`` list of an OTLP ``arrayValue`` / ``kvlistValue``."""
    if container is None:
        return []
    values = container.get("values") if isinstance(container, dict) else _NOT_A_LIST
    if values is None:
        return []
    if not isinstance(values, list):
        raise BadField(f"{name} must be an object with a list of values", name)
    return values


def _to_number(value: Any, kind: type) -> Any:
    """The number a string holds; the string itself when it holds none, or none a double can
    hold exactly enough to write back ("NaN", "Infinity", "1e400"): kept as written, never changed."""
    if isinstance(value, str):
        try:
            number = kind(value)
        except ValueError:
            return value
        return number if kind is not float or math.isfinite(number) else value
    return value


JAEGER_TAG_TYPES = ("string", "bool", "int64", "float64", "binary")
"""The value types a Jaeger tag may name."""


def _jaeger_value(tag: dict[str, Any], path: str) -> Any:
    kind, value = tag.get("type"), tag.get("value")
    # Jaeger's tags hold scalars only: an object or a list would reach the trace as a value nobody wrote
    if kind not in JAEGER_TAG_TYPES:
        raise BadField(f"a Jaeger tag's type is one of {', '.join(JAEGER_TAG_TYPES)}, not {kind!r}", f"{path}.type")
    if isinstance(value, (dict, list)):
        raise BadField(f"a Jaeger tag's value is a string, number or boolean, not {type(value).__name__}",
                       f"{path}.value")
    if kind == "int64":
        return _to_number(value, int)
    if kind == "float64":
        return _to_number(value, float)
    if kind == "bool" and isinstance(value, str):
        return value.lower() == "true"
    return value


def decode_attributes(raw: Any, path: str) -> dict[str, Any]:
    """A plain dict from a plain map, an OTLP ``[{key, value}]`` list or Jaeger ``[{key, type, value}]`` tags."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return dict(raw)
    if not isinstance(raw, list):
        raise BadField("attributes must be an object or a list of {key, value}", path)
    out: dict[str, Any] = {}
    for i, item in enumerate(raw):
        key = item.get("key") if item.__class__ is dict or isinstance(item, dict) else None
        if key.__class__ is not str and not isinstance(key, str):
            raise BadField("attribute must be an object with a string key", f"{path}[{i}]")
        value = item.get("value")
        if value.__class__ is dict and "stringValue" in value:  # the usual case, as any_value reads it
            out[key] = value["stringValue"]
        elif value.__class__ is dict and "intValue" in value:  # token counts: as any_value reads them
            number = value["intValue"]
            if number.__class__ is str:
                try:  # noqa: SIM105 (contextlib.suppress costs more than the rest of this branch)
                    number = int(number)
                except ValueError:  # kept as written, as _to_number does
                    pass
            out[key] = number
        elif "type" in item:  # Jaeger's typed tag (before the object case: its value is never one)
            out[item["key"]] = _jaeger_value(item, f"{path}[{i}]")
        elif isinstance(value, dict):
            try:
                out[key] = any_value(value)
            except BadField as exc:
                raise BadField(exc.message, f"{path}[{i}].value.{exc.path}") from None
        else:
            out[item["key"]] = value
    return out
