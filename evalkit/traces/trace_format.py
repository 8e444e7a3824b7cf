"""The shape of one trace importer, for evalkit's own formats and plug-ins alike."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalkit.contracts.trace import Trace
    from evalkit.traces.source import SourceValue


@dataclass(frozen=True)
class TraceFormat:
    """One importer: how to recognise a value of its format and how to read values into traces."""

    name: str
    looks_like: Callable[[Any], bool]
    read: Callable[[Iterable[SourceValue]], Iterator[Trace]]
    per_record: bool = True
    """Each value is read on its own (so one bad record can be skipped); False when spans of one
    trace may be spread over many values, as in OpenTelemetry exports."""
    takes_context: bool = False
    """The reader is called as ``read(values, context)`` with an
    :class:`~evalkit.traces.report.ImportContext`: the import report to record into and the user's
    chat mapping. Otherwise it is called as ``read(values)``."""
