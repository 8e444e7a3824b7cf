"""Traces from anywhere: native JSONL/Parquet, Langfuse, OpenTelemetry GenAI, OpenAI chat logs.

Every importer produces the same :class:`~evalkit.contracts.trace.Trace` model.
"""

from evalkit.contracts.trace import Observation, Trace
from evalkit.traces.chat_mapping import ChatMapping, load_chat_mapping
from evalkit.traces.formats import FORMATS, detect_format, iter_traces, load, sniff_format
from evalkit.traces.frame import to_frame, trace_stats
from evalkit.traces.native import write_jsonl, write_parquet
from evalkit.traces.report import ImportReport

__all__ = [
    "FORMATS",
    "ChatMapping",
    "ImportReport",
    "Observation",
    "Trace",
    "detect_format",
    "iter_traces",
    "load",
    "load_chat_mapping",
    "sniff_format",
    "to_frame",
    "trace_stats",
    "write_jsonl",
    "write_parquet",
]
