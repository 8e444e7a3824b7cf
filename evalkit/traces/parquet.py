"""Trace datasets too large for memory: a folder of Parquet files in hive-style partitions.

``write_dataset`` streams traces into ``DIR/KEY=VALUE/part-NNNNN.parquet``, one file per partition
value per batch of observations, so memory is bounded by the batch, whatever the number of traces.
Each file holds the columns of evalkit's own Parquet trace file (so one file reads back as traces
with the ordinary reader) plus the derived columns of :func:`~evalkit.traces.frame.to_frame`
(depth, parsed times, latency, token counts, payload sizes), so statistics never parse a payload.

``scan_frame`` gives the ``to_frame`` table of a dataset as a polars LazyFrame: queries read only
the columns and partitions they need. A trace lies whole inside one file; traces read back file by
file, in the order of the partition folders, then of the batches, then of the source.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import polars as pl

from evalkit.contracts.trace import Trace
from evalkit.errors import InputError
from evalkit.io.atomic import atomic_writer, remove_dead_work, replace_folder
from evalkit.io.canonical import compact_sorted_json
from evalkit.traces.native import parquet_cell, parquet_columns, read_parquet
from evalkit.traces.observation_table import FRAME_SCHEMA, observation_table

DAY = "day"
"""``--partition-by day``: partition by the UTC day of a trace's earliest observation start."""

NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
"""The folder value of a trace without the partition value: the hive convention, read back as null."""

BATCH_OBSERVATIONS = 200_000
"""Observations held in memory before a batch is written: about 100-300 MB for ordinary traces."""

BATCH_BYTES = 128_000_000
"""Characters of payload JSON text held before a batch is written, whatever the observation count: long
contexts (a model input holding the whole conversation) reach it long before ``BATCH_OBSERVATIONS``."""

MAX_PARTITIONS = 1_000
"""More partition values than this is a field too fine to partition by (one folder per trace id, say)."""

FILE_GLOB = "**/*.parquet"
"""The dataset's data files; temporary files of an interrupted write end in ``.tmp`` and are not read."""

_NATIVE = parquet_columns()
_DERIVED = ["depth", "start_time", "end_time", "latency_ms", "input_tokens", "output_tokens", "total_tokens",
            "input_chars", "output_chars"]
DATASET_COLUMNS = (*_NATIVE, *_DERIVED)
"""The columns of every data file, in order (the partition value is in the folder name, not the file)."""
_FRAME_FROM_FILE = {"trace_id": "trace_id", "index": "obs_index", "obs_id": "obs_id", "type": "obs_type",
                    "name": "obs_name", "parent_id": "obs_parentId", "model": "obs_model",
                    "level": "obs_level", "status_message": "obs_statusMessage", **{c: c for c in _DERIVED}}
"""Each ``to_frame`` column and the file column it is read from."""

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_trace_dataset(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a folder: a trace dataset (a file is read by the ordinary importers)."""
    return Path(path).is_dir()


def partition_key(partition_by: str) -> str:
    """The folder key of ``--partition-by``: ``day``, or a trace metadata field (``intent`` or
    ``metadata.intent``).

    Raises:
        InputError: a field that is not a plain name, or that is also a column of the files.
    """
    if partition_by == DAY:
        return DAY
    key = partition_by.removeprefix("metadata.")
    if not _KEY.fullmatch(key):
        raise InputError(f"cannot partition by {partition_by!r}: a partition is 'day' or a metadata field "
                         "whose name is letters, digits and underscores", path="partition_by")
    if key in set(_NATIVE) | set(FRAME_SCHEMA) or key == DAY:
        raise InputError(f"cannot partition by metadata field {key!r}: a column of the trace files has that "
                         "name; rename the field in the source", path="partition_by")
    return key


def _field_value(trace: Trace, key: str) -> str | None:
    metadata = trace.metadata or {}
    if key not in metadata or metadata[key] is None:
        return None
    value = metadata[key]
    return value if isinstance(value, str) else compact_sorted_json(value)


class _Batch:
    """The traces of one batch, with their native cells made as they arrive (so their size is known)."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.traces: list[Trace] = []
        self.native: dict[str, list[Any]] = {c: [] for c in _NATIVE}
        self.values: list[str | None] = []
        self.observations = 0
        self.text_bytes = 0

    def add(self, trace: Trace) -> None:
        self.traces.append(trace)
        native = self.native
        t = trace.to_json_obj()
        value = None if self.key == DAY else _field_value(trace, self.key)
        trace_cells = [parquet_cell(t, field) for field in ("name", "input", "output", "metadata")]
        for i, o in enumerate(t.get("observations") or [None]):
            native["trace_id"].append(t["id"])
            for field, cell in zip(("name", "input", "output", "metadata"), trace_cells, strict=True):
                native[f"trace_{field}"].append(cell)
            native["obs_index"].append(None if o is None else i)
            for col in _NATIVE[6:]:
                cell = None if o is None else parquet_cell(o, col[4:])
                native[col].append(cell)
                self.text_bytes += len(cell) if cell else 0
            self.values.append(value)
            self.observations += 1
        self.text_bytes += sum(len(c) for c in trace_cells if c)

    def table(self) -> pl.DataFrame:
        """One row per observation (one for a trace without any): native cells, derived columns, partition."""
        table = pl.DataFrame(self.native, schema={c: (pl.Int64 if c == "obs_index" else pl.String)
                                                  for c in self.native})
        table = table.with_columns(pl.Series("_partition", self.values, dtype=pl.String),
                                   pl.int_range(pl.len()).alias("_row"))
        derived = observation_table(self.traces).select(_DERIVED)  # rows of the observations, in the same order
        observed = pl.concat([table.filter(pl.col("obs_index").is_not_null()), derived], how="horizontal")
        empty = table.filter(pl.col("obs_index").is_null())
        table = pl.concat([observed, empty], how="diagonal_relaxed").sort("_row") if empty.height else observed
        if self.key == DAY:
            table = table.with_columns(
                pl.col("start_time").min().over("trace_id").dt.strftime("%Y-%m-%d").alias("_partition"))
        return table.drop("_row")


def partition_file(folder: Path, key: str, value: str | None, batch: int) -> Path:
    """Where batch ``batch`` of the traces whose ``key`` is ``value`` goes: ``KEY=VALUE/part-NNNNN.parquet``,
    the value percent-encoded (polars decodes it), a missing value as hive's null folder."""
    name = NULL_PARTITION if value is None else quote(value, safe="")
    return folder / f"{key}={name}" / f"part-{batch:05d}.parquet"


def write_partition_file(rows: pl.DataFrame, path: Path) -> None:
    """Write one data file atomically (``rows`` has :data:`DATASET_COLUMNS`)."""
    with atomic_writer(path, "wb") as fh:
        rows.select(DATASET_COLUMNS).write_parquet(fh, compression="zstd")


def _write_batch(table: pl.DataFrame, folder: Path, key: str, batch: int,
                 partitions: dict[str | None, int]) -> None:
    """Write one file per partition value of a batch, each atomically; count its traces in ``partitions``."""
    for (value,), rows in table.group_by("_partition", maintain_order=True):
        partitions[value] = partitions.get(value, 0) + rows["trace_id"].n_unique()
        if len(partitions) > MAX_PARTITIONS:
            raise InputError(f"more than {MAX_PARTITIONS} values of {key!r}: too many folders; partition by "
                             "a coarser field (or by day)", path="partition_by")
        write_partition_file(rows, partition_file(folder, key, value, batch))


def _check_replaceable(out: Path, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise InputError("cannot write a dataset: it is a file; give a folder", file=str(out))
    if not out.is_dir() or not any(out.iterdir()):
        return
    if not overwrite:
        raise InputError("the folder is not empty; pass --overwrite to replace the dataset in it, or give "
                         "a new folder", file=str(out))
    for entry in out.iterdir():
        inside = list(entry.rglob("*")) if entry.is_dir() else []
        if not (entry.is_dir() and "=" in entry.name
                and all(p.is_dir() or p.suffix in (".parquet", ".tmp") for p in inside)):
            raise InputError(f"not replaced: {entry.name} is not part of a trace dataset (only KEY=VALUE "
                             "folders of Parquet files are); give a new folder", file=str(out))


def write_dataset(traces: Iterable[Trace], out: str | os.PathLike[str], partition_by: str = DAY, *,
                  overwrite: bool = False, batch_observations: int = BATCH_OBSERVATIONS,
                  batch_bytes: int = BATCH_BYTES, partitions: dict[str | None, int] | None = None) -> int:
    """Write traces as a partitioned Parquet dataset, batch by batch; returns how many were written.

    The dataset is built in a hidden folder beside ``out`` (each file written atomically) and moved
    into place only when every trace is written: an interrupted import leaves ``out`` as it was.

    Args:
        traces: the traces, streamed (held only one batch at a time).
        out: the dataset folder; it must be missing or empty unless ``overwrite``.
        partition_by: ``day`` or a trace metadata field (see :func:`partition_key`).
        overwrite: replace the dataset already in ``out`` (refused when ``out`` holds anything else).
        batch_observations: observations per batch (bounds memory; more batches mean more files).
        batch_bytes: characters of payload text per batch (the bound for long-context traces).
        partitions: filled, when given, with the number of traces of each partition value (None for
            the traces without one, in the :data:`NULL_PARTITION` folder), in the order written.

    Raises:
        InputError: ``out`` is a file or holds other files, a bad partition field, too many
            partition values.
    """
    out = Path(out)
    key = partition_key(partition_by)
    _check_replaceable(out, overwrite)
    for kind in ("importing", "replaced"):  # what an import killed outright (kill -9) left beside ``out``
        remove_dead_work(out, kind)
    stage = out.parent / f".{out.name}.{os.getpid()}.importing"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    count = batch_no = 0
    partitions = {} if partitions is None else partitions
    partitions.clear()
    batch = _Batch(key)
    try:
        for trace in traces:
            batch.add(trace)
            count += 1
            if batch.observations >= batch_observations or batch.text_bytes >= batch_bytes:
                _write_batch(batch.table(), stage, key, batch_no, partitions)
                batch, batch_no = _Batch(key), batch_no + 1
        if batch.traces:
            _write_batch(batch.table(), stage, key, batch_no, partitions)
        replace_folder(stage, out, out.parent / f".{out.name}.{os.getpid()}.replaced")
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return count


def dataset_files(path: str | os.PathLike[str]) -> list[Path]:
    """The data files of a dataset, in reading order (partition folders, then batches).

    Raises:
        InputError: the folder holds no Parquet file.
    """
    folder = Path(path)
    files = sorted(folder.glob(FILE_GLOB))
    if not files:
        raise InputError("no Parquet files in this folder: not a trace dataset (write one with "
                         "`evalkit traces import SRC --partition-by day --out DIR`)", file=str(folder))
    return files


def _hive_keys(folder: Path, files: list[Path]) -> list[str]:
    keys: list[str] = []
    for part in files[0].relative_to(folder).parts[:-1]:
        if "=" in part:
            keys.append(part.split("=", 1)[0])
    return keys


def scan_dataset(path: str | os.PathLike[str]) -> pl.LazyFrame:
    """Every row of a dataset (native and derived columns, partition columns last), lazily.

    Raises:
        InputError: no Parquet file, or files that are not evalkit trace files.
    """
    folder = Path(path)
    files = dataset_files(folder)
    keys = _hive_keys(folder, files)
    frame = pl.scan_parquet(str(folder / FILE_GLOB), hive_partitioning=True,
                            hive_schema={k: pl.String() for k in keys} or None)
    try:
        columns = frame.collect_schema().names()
    except Exception as exc:  # polars raises several error types for unreadable files
        raise InputError(f"cannot read the dataset: {exc}", file=str(folder)) from None
    missing = [c for c in DATASET_COLUMNS if c not in columns]
    if missing:
        raise InputError(f"not an evalkit trace dataset (missing columns: {', '.join(missing)}); write one "
                         "with `evalkit traces import SRC --partition-by day --out DIR`", file=str(folder))
    return frame


def scan_frame(path: str | os.PathLike[str]) -> pl.LazyFrame:
    """The :func:`~evalkit.traces.frame.to_frame` table of a dataset as a LazyFrame (partition
    columns after ``FRAME_SCHEMA``'s): one row per observation, nothing read until collected."""
    frame = scan_dataset(path)
    keys = [c for c in frame.collect_schema().names() if c not in _NATIVE and c not in _DERIVED]
    return frame.filter(pl.col("obs_index").is_not_null()).select(
        *(pl.col(_FRAME_FROM_FILE[col]).cast(dtype).alias(col) for col, dtype in FRAME_SCHEMA.items()), *keys)


def count_traces(path: str | os.PathLike[str]) -> int:
    """How many traces a dataset holds, those without observations included."""
    return int(scan_dataset(path).select(pl.col("trace_id").n_unique()).collect(engine="streaming").item())


def iter_dataset_traces(path: str | os.PathLike[str], ids: Iterable[str] | None = None) -> Iterator[Trace]:
    """The traces of a dataset, one file in memory at a time; only those of ``ids`` when given.

    Raises:
        InputError: a file that is not an evalkit trace file (named), a malformed record.
    """
    files = dataset_files(path)
    wanted = None if ids is None else set(ids)
    if wanted is not None:
        # One scan of the id column finds the files to read; the others are never opened whole.
        holding = (pl.scan_parquet(files, include_file_paths="_file")
                   .filter(pl.col("trace_id").is_in(list(wanted))).select(pl.col("_file").unique())
                   .collect(engine="streaming")["_file"].to_list())
        files = [f for f in files if str(f) in set(holding)]
    for file in files:
        for trace in read_parquet(file):
            if wanted is None or trace.id in wanted:
                yield trace


def iter_dataset_batches(path: str | os.PathLike[str]) -> Iterator[list[Trace]]:
    """The traces of a dataset one file at a time: memory bounded by the largest file (one batch)."""
    for file in dataset_files(path):
        yield list(read_parquet(file))


def dataset_trace_ids(path: str | os.PathLike[str]) -> list[str]:
    """Every trace id of a dataset, once each, in reading order (only the id column is read)."""
    return (scan_dataset(path).select("trace_id").unique(maintain_order=True).collect(engine="streaming")
            ["trace_id"].to_list())
