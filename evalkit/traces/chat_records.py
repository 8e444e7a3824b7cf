"""A chat-style record's trace id and metadata, read the same way by every record-per-trace importer.

``openai-chat`` and ``single-turn`` records name their trace by one of a few usual fields (or by the
user's ``--id-key``), number an id seen again in the same file (``root``, ``root#2``), and keep their
other fields as trace metadata (or the ``--keep`` ones).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from evalkit.traces.chat_mapping import ID_SEPARATOR, ChatMapping

if TYPE_CHECKING:
    from evalkit.traces.report import ImportReport
    from evalkit.traces.source import SourceValue

__all__ = ["numbered_trace_id", "record_metadata", "record_trace_id"]

# Record fields tried, in order, for the trace id; the first that is present wins. A plain ``id`` comes
# last because chat-log exports often reuse it for the conversation's root ("root" in every record).
ID_KEYS = ("trace_id", "conversation_id", "session_id", "lsmith_id", "run_id", "id")


def _id_part(value: Any) -> str | None:
    if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
        return str(value)
    return None


def record_trace_id(sv: SourceValue, record: dict[str, Any], mapping: ChatMapping) -> str:
    """The trace id of ``record``: its ``--id-key`` fields joined by ``/``, else the first of
    :data:`ID_KEYS` present, else ``record-LINE`` (or ``record-INDEX`` in a JSON array).

    Raises:
        evalkit.errors.InputError: a field named by ``--id-key`` is missing or not a string or integer.
    """
    if mapping.id_keys:
        parts = []
        for key in mapping.id_keys:
            part = _id_part(record.get(key))
            if part is None:
                raise sv.error("id field named by --id-key is missing or not a string/integer", key)
            parts.append(part)
        return ID_SEPARATOR.join(parts)
    for key in ID_KEYS:
        part = _id_part(record.get(key))
        if part is not None:
            return part
    where = sv.line if sv.line is not None else sv.index
    return f"record-{where}"


def numbered_trace_id(trace_id: str, seen: Counter[str]) -> str:
    """``trace_id`` the first time this file gives it, ``trace_id#N`` the Nth time (counted in ``seen``)."""
    seen[trace_id] += 1
    return trace_id if seen[trace_id] == 1 else f"{trace_id}#{seen[trace_id]}"


def record_metadata(sv: SourceValue, record: dict[str, Any], mapping: ChatMapping, report: ImportReport, *,
                    read: tuple[str, ...], source: str) -> dict[str, Any]:
    """The trace metadata of ``record``: every field but those ``read`` into the trace (or the ``--keep``
    fields, warning once about one missing), and ``source``."""
    if mapping.keep is None:
        metadata = {k: v for k, v in record.items() if k not in read}
    else:
        metadata = {k: record[k] for k in mapping.keep if k in record}
        for key in mapping.keep:
            if key not in record:
                report.warn(f"field {key!r} named by --keep is missing from some records (first: {sv.where})")
    metadata["source"] = source
    return metadata
