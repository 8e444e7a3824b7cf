"""Traces from anywhere: native JSONL/Parquet, Langfuse, OpenTelemetry GenAI, OpenAI chat logs.

Every importer produces the same :class:`~evalkit.contracts.trace.Trace` model.
"""

from evalkit.contracts.trace import Observation, Trace
from evalkit.traces.formats import FORMATS, detect_format, iter_traces, load, sniff_format
from evalkit.traces.frame import to_frame, trace_stats
from evalkit.traces.native import write_jsonl, write_parquet

__all__ = [
    "FORMATS",
    "Observation",
    "Trace",
    "detect_format",
    "iter_traces",
    "load",
    "sniff_format",
    "to_frame",
    "trace_stats",
    "write_jsonl",
    "write_parquet",
]
