"""Reading and writing files the house way: strict JSON in, canonical JSON out, atomic writes, append-only stores."""

from evalkit.errors import InputError, StrictJSONError
from evalkit.io.append_only import AppendOnlyStore, append_batch, read_store_records
from evalkit.io.atomic import (
    atomic_write_bytes,
    atomic_write_lines,
    atomic_write_text,
    atomic_writer,
    atomic_writers,
)
from evalkit.io.bulk import paused_gc
from evalkit.io.canonical import canonical_dumps, canonical_line, compact_sorted_json
from evalkit.io.json_case import camel_json
from evalkit.io.outputs import guard_outputs
from evalkit.io.strict_json import iter_jsonl_strict, loads_strict, read_json_strict

__all__ = [
    "AppendOnlyStore",
    "InputError",
    "StrictJSONError",
    "append_batch",
    "atomic_write_bytes",
    "atomic_write_lines",
    "atomic_write_text",
    "atomic_writer",
    "atomic_writers",
    "camel_json",
    "canonical_dumps",
    "canonical_line",
    "compact_sorted_json",
    "guard_outputs",
    "iter_jsonl_strict",
    "loads_strict",
    "paused_gc",
    "read_json_strict",
    "read_store_records",
]
