"""Traces from anywhere: native JSONL/Parquet, Langfuse, OpenTelemetry GenAI, OpenAI chat logs.

Partitioned Parquet datasets (:mod:`evalkit.traces.parquet`) hold trace sets too large for memory.

Every importer produces the same :class:`~evalkit.contracts.trace.Trace` model.

The plug-in API is here too: a :class:`TraceFormat` (a recogniser and a reader of :class:`SourceValue` s,
optionally given an :class:`ImportContext`), added with :func:`register_format` or declared in the
``evalkit.trace_formats`` entry-point group (:mod:`evalkit.traces.plugins`); :func:`maybe_json` parses the
JSON text agent logs often hold in string fields.

Every name loads on first use (:func:`evalkit.facade.load_on_first_use`): the command line reads light modules
of this package (:mod:`evalkit.traces.format_table`, :mod:`evalkit.traces.plugins`) for its options, and must
not pay for pydantic and polars to do so. ``from evalkit.traces import iter_traces`` works as for any facade.
"""

from typing import TYPE_CHECKING

from evalkit.facade import load_on_first_use

if TYPE_CHECKING:
    from evalkit.contracts.trace import Observation, Trace
    from evalkit.traces.chat_mapping import ChatMapping, chat_mapping_from_options, load_chat_mapping
    from evalkit.traces.format_table import BUILT_IN_FORMATS
    from evalkit.traces.formats import (
        FORMATS,
        SkippedRecord,
        detect_format,
        iter_traces,
        load,
        register_format,
        require_traces,
        sniff_format,
    )
    from evalkit.traces.frame import data_gaps, extreme_traces, per_trace, to_frame, trace_stats
    from evalkit.traces.jsonl_ranges import LineRange, is_native_jsonl, line_ranges, read_line_range
    from evalkit.traces.native import write_jsonl, write_parquet
    from evalkit.traces.otel_attributes import maybe_json
    from evalkit.traces.parquet import (
        DAY,
        NULL_PARTITION,
        dataset_trace_ids,
        is_trace_dataset,
        iter_dataset_batches,
        iter_dataset_traces,
        partition_key,
        scan_frame,
        write_dataset,
    )
    from evalkit.traces.plugins import ENTRY_POINT_GROUP
    from evalkit.traces.report import ImportContext, ImportReport
    from evalkit.traces.source import SourceValue
    from evalkit.traces.stats_json import stats_json
    from evalkit.traces.storage import stored_form
    from evalkit.traces.trace_format import TraceFormat
    from evalkit.traces.tree import utc_micros

__all__ = [
    "BUILT_IN_FORMATS",
    "ENTRY_POINT_GROUP",
    "stats_json",
    "stored_form",
    "utc_micros",
    "DAY",
    "FORMATS",
    "NULL_PARTITION",
    "ChatMapping",
    "ImportContext",
    "ImportReport",
    "LineRange",
    "SkippedRecord",
    "Observation",
    "SourceValue",
    "Trace",
    "TraceFormat",
    "chat_mapping_from_options",
    "dataset_trace_ids",
    "data_gaps",
    "detect_format",
    "extreme_traces",
    "is_native_jsonl",
    "is_trace_dataset",
    "iter_dataset_batches",
    "iter_dataset_traces",
    "iter_traces",
    "load",
    "line_ranges",
    "load_chat_mapping",
    "maybe_json",
    "partition_key",
    "per_trace",
    "read_line_range",
    "register_format",
    "require_traces",
    "scan_frame",
    "sniff_format",
    "to_frame",
    "trace_stats",
    "write_dataset",
    "write_jsonl",
    "write_parquet",
]

__getattr__, __dir__ = load_on_first_use(__name__, __all__)
