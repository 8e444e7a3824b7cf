"""What a judge is shown of a trace: the selected parts, rendered compactly and deterministically.

Each part is one place a ref can cite: the trace itself (``obs`` = the trace id) or one observation
(``obs`` = its id), with the fields the spec selects. Values are written as compact canonical JSON. A
large value already shown earlier in the same trace (agents re-send the whole conversation to every
model call) is written once; later copies become ``«same as OBS PATH»``, a place the judge can cite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from evalkit.contracts.judge import InputSelection
from evalkit.contracts.trace import Observation, Trace
from evalkit.io.canonical import compact_json, compact_sorted_json, orjson_text

REPEAT_MIN_CHARS = 80
"""A value at least this long (as compact JSON) is written once per trace; shorter repeats cost less
than the marker that would replace them."""


@dataclass(frozen=True)
class ViewPart:
    """One citable place the judge sees: ``obs`` and its selected fields, in order."""

    obs: str
    name: str | None
    heading: str
    fields: tuple[tuple[str, Any], ...]


def _selected(obs: Observation, selection: InputSelection) -> bool:
    chosen = selection.observations
    return ((chosen.types is None or obs.type in chosen.types)
            and (chosen.names is None or obs.name in chosen.names)
            and (chosen.ids is None or obs.id in chosen.ids))


def trace_view(trace: Trace, selection: InputSelection) -> list[ViewPart]:
    """The parts of ``trace`` the selection shows, trace first, then observations as recorded.

    A field is shown when the source set it (an explicit ``null`` is shown, an absent field is not).
    """
    on_disk = trace.to_json_obj()
    parts = []
    trace_fields = tuple(_trace_fields(on_disk, selection.trace))
    if trace_fields:
        heading = f"Trace {trace.id}" + (f" (name: {trace.name})" if trace.name and "name" in selection.trace else "")
        parts.append(ViewPart(trace.id, trace.name, heading, tuple((f, v) for f, v in trace_fields if f != "name")))
    for obs, raw in zip(trace.observations, on_disk["observations"], strict=True):
        if not _selected(obs, selection):
            continue
        details = [obs.type]
        if obs.name is not None:
            details.append(f"name: {obs.name}")
        if obs.parent_id is not None:
            details.append(f"parent: {obs.parent_id}")
        fields = tuple((f, raw[f]) for f in selection.fields if f in raw)
        parts.append(ViewPart(obs.id, obs.name, f"Observation {obs.id} ({', '.join(details)})", fields))
    return parts


def _trace_fields(on_disk: dict[str, Any], names: list[str]) -> Any:
    """``(field, value)`` of each selected trace field the trace has: ``metadata.KEY`` is one metadata field,
    shown under that name (a path a ref can cite)."""
    metadata = on_disk.get("metadata")
    for name in names:
        if name.startswith("metadata."):
            key = name[len("metadata."):]
            if isinstance(metadata, dict) and key in metadata:
                yield name, metadata[key]
        elif name in on_disk:
            yield name, on_disk[name]


LABEL_WORDS = frozenset({"label", "labels", "gold", "verdict", "verdicts", "annotation", "annotations",
                         "reward", "rewards", "score", "scores", "success", "outcome", "outcomes", "passed",
                         "correct"})
"""Words that, in a metadata key, usually mean it holds a person's or another judge's answer (``label``,
``true_label``, ``predicted_label``, ``llm_judge_label``, ``goldAnswer``...) or the run's outcome (tau-bench's
``reward``, Inspect's ``scores``, ``success``, ``passed``, ``is_correct``): never shown to a judge, at any
depth of the metadata. A key with ``ground_truth`` (or ``groundTruth``) in it counts too."""
_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_A_WORD = re.compile(r"[^a-z0-9]+")


def _words(key: Any) -> list[str]:
    """A key's words, split at ``_``, ``-``, ``.``, spaces and camelCase humps, case ignored."""
    return _NOT_A_WORD.split(_CAMEL_HUMP.sub("_", str(key)).lower())


def is_label_like(key: Any) -> bool:
    """True for a metadata key that names a label (see :data:`LABEL_WORDS`)."""
    words = _words(key)
    return not LABEL_WORDS.isdisjoint(words) or "ground_truth" in "_".join(words) or "groundtruth" in words


RATIONALE_WORDS = frozenset({"rationale", "rationales", "critique", "critiques", "explanation", "feedback"})
RATIONALE_KEYS = frozenset({"reasoning", "reason", "reasons", "notes", "note", "comment", "comments"})
"""A metadata key with one of ``RATIONALE_WORDS`` in it, or that is one of ``RATIONALE_KEYS``, usually holds
a person's or another judge's reasons (hw3's ``reasoning``, the leasing set's ``Notes`` with its axial
code and ``substantiation_rationale``): shown to a judge only when the spec names it."""


def is_rationale_like(key: Any) -> bool:
    """True for a metadata key that names reasons or notes (see :data:`RATIONALE_KEYS`)."""
    words = _words(key)
    return not RATIONALE_WORDS.isdisjoint(words) or "_".join(words).strip("_") in RATIONALE_KEYS


def metadata_labels(parts: list[ViewPart]) -> list[str]:
    """Where a trace's or observation's metadata shown in the view holds a label-like key
    (:func:`is_label_like`), at any depth: a dataset keeps its ground truth there, an importer the run's
    outcome, and a judge shown it agrees with the labels for the wrong reason.

    Returns:
        ``OBS PATH`` of each occurrence, in view order.
    """
    hits: list[str] = []
    for part in parts:
        for field, value in part.fields:
            if field == "metadata" and isinstance(value, dict):
                hits += [f"{part.obs} {path}" for path in _label_paths(value, "metadata")]
            elif field.startswith("metadata."):
                if is_label_like(field[len("metadata."):]):
                    hits.append(f"{part.obs} {field}")
                else:  # a field the spec names: what it holds is shown too
                    hits += [f"{part.obs} {path}" for path in _label_paths(value, field)]
    return hits


def _label_paths(value: Any, where: str) -> list[str]:
    """The paths of label-like keys anywhere inside ``value`` (``metadata.info.reward_info.reward``)."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, sub in value.items():
            path = f"{where}.{key}"
            if is_label_like(key):
                found.append(path)
            else:
                found += _label_paths(sub, path)
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            found += _label_paths(sub, f"{where}[{i}]")
    return found


def metadata_rationales(parts: list[ViewPart]) -> list[str]:
    """Where a whole metadata shown in the view holds reasons or notes (:func:`is_rationale_like`). A field
    the spec names (``metadata.reasoning``) is not listed: the spec chose to show it.

    Returns:
        ``OBS PATH`` of each occurrence, in view order.
    """
    return [f"{part.obs} metadata.{key}" for part in parts for field, value in part.fields
            if field == "metadata" and isinstance(value, dict) for key in value if is_rationale_like(key)]


def _key(key: Any) -> str:
    return str(key).lower().replace("-", "_")


def _repeat_key(value: Any) -> bytes | str | None:
    """A value's identity for spotting repeats (None when too short to be worth a marker)."""
    if isinstance(value, str):
        return value if len(value) >= REPEAT_MIN_CHARS else None
    if not isinstance(value, dict | list):
        return None
    text = orjson_text(value)  # sorted keys; only an identity here, never shown
    if text is None:
        text = compact_json(value).encode()
    return text if len(text) >= REPEAT_MIN_CHARS else None


def _without_repeats(value: Any, where: str, seen: dict[bytes | str, str]) -> Any:
    key = _repeat_key(value)
    if key is not None:
        if key in seen:
            return f"«same as {seen[key]}»"
        seen[key] = where
    if isinstance(value, dict):
        return {k: _without_repeats(v, f"{where}.{k}", seen) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_repeats(v, f"{where}[{i}]", seen) for i, v in enumerate(value)]
    return value


def render_view(parts: list[ViewPart]) -> str:
    """The parts as text: a heading per part, then ``field: <compact JSON>`` per field."""
    seen: dict[bytes | str, str] = {}
    lines: list[str] = []
    for part in parts:
        lines.append(part.heading)
        for field, value in part.fields:
            shown = _without_repeats(value, f"{part.obs} {field}", seen)
            lines.append(f"  {field}: {compact_sorted_json(shown)}")
    return "\n".join(lines)


def render_trace(trace: Trace, selection: InputSelection) -> str:
    """What the judge is shown of ``trace`` under ``selection``, as deterministic text."""
    return render_view(trace_view(trace, selection))


def fields_named(parts: list[ViewPart], name: str) -> list[str]:
    """Where a mapping key equal to ``name`` (ignoring case, ``-`` as ``_``) occurs in the view.

    Returns:
        ``OBS PATH`` of each occurrence, in view order.
    """
    wanted = _key(name)
    hits: list[str] = []

    def walk(value: Any, where: str) -> None:
        if isinstance(value, dict):
            for key, sub in value.items():
                if _key(key) == wanted:
                    hits.append(f"{where}.{key}")
                walk(sub, f"{where}.{key}")
        elif isinstance(value, list):
            for i, sub in enumerate(value):
                walk(sub, f"{where}[{i}]")

    for part in parts:
        for field, value in part.fields:
            walk(value, f"{part.obs} {field}")
    return hits
