"""Partitioned Parquet trace datasets: written in batches, read back lazily, summarised identically."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from parquet_traces import varied_traces

from evalkit.cli import main
from evalkit.errors import InputError
from evalkit.traces import (
    iter_dataset_traces,
    scan_frame,
    to_frame,
    trace_stats,
    write_dataset,
    write_jsonl,
)


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_a_dataset_by_day_keeps_every_trace_and_its_statistics(tmp_path):
    traces = varied_traces()
    out = tmp_path / "ds"
    assert write_dataset(traces, out, "day", batch_observations=40) == len(traces)
    files = _files(out)
    # Three days plus the traces without any time (hive's null folder), several batches each.
    assert {f.split("/")[0] for f in files} == {"day=2026-03-01", "day=2026-03-02", "day=2026-03-03",
                                                "day=__HIVE_DEFAULT_PARTITION__"}
    assert len(files) > 4 and all(f.endswith(".parquet") for f in files)
    assert trace_stats(out) == trace_stats(to_frame(traces), n_traces=len(traces))
    back = {t.id: t for t in iter_dataset_traces(out)}
    assert back == {t.id: t for t in traces}  # payloads, absent fields and empty traces survive


def _day(trace) -> str | None:
    starts = [datetime.fromisoformat(o.start_time).astimezone(UTC) for o in trace.observations
              if o.start_time is not None]
    return min(starts).strftime("%Y-%m-%d") if starts else None


def test_the_traces_of_each_partition_are_counted_across_batches(tmp_path):
    traces = varied_traces()
    counts: dict[str | None, int] = {"stale": 1}
    write_dataset(traces, tmp_path / "ds", "day", batch_observations=40, partitions=counts)
    expected: dict[str | None, int] = {}
    for t in traces:
        expected[_day(t)] = expected.get(_day(t), 0) + 1
    assert counts == expected and None in counts  # some traces have no time at all
    by_intent: dict[str | None, int] = {}
    write_dataset(traces, tmp_path / "by-intent", "intent", batch_observations=25, partitions=by_intent)
    assert by_intent == {v: sum((t.metadata or {}).get("intent") == v for t in traces) for v in by_intent}
    assert sum(by_intent.values()) == len(traces)


def test_the_lazy_frame_is_to_frame_with_the_partition_column(tmp_path):
    traces = varied_traces()
    write_dataset(traces, tmp_path / "ds", "intent", batch_observations=25)
    lazy = to_frame(tmp_path / "ds")
    assert isinstance(lazy, pl.LazyFrame)
    eager = to_frame(traces)
    got = lazy.collect()
    assert got.columns == [*eager.columns, "intent"]
    assert set(got["intent"].unique().to_list()) == {"refund", "order status", "billing/dispute", None}
    assert got.drop("intent").sort("trace_id", "index").equals(eager.sort("trace_id", "index"))
    # The partition column prunes folders: only one intent is read.
    refunds = scan_frame(tmp_path / "ds").filter(pl.col("intent") == "billing/dispute").collect()
    assert refunds["trace_id"].n_unique() == len([t for t in traces if (t.metadata or {}).get("intent")
                                                  == "billing/dispute" and t.observations])


def test_only_the_wanted_traces_are_read_back(tmp_path):
    traces = varied_traces()
    write_dataset(traces, tmp_path / "ds", "day", batch_observations=30)
    wanted = ["trace-005", "trace-041", "trace-004"]
    assert sorted(t.id for t in iter_dataset_traces(tmp_path / "ds", ids=wanted)) == sorted(wanted)


def test_import_cli_writes_a_dataset_and_stats_reads_it(tmp_path, capsys):
    traces = varied_traces()
    src = tmp_path / "traces.jsonl"
    write_jsonl(traces, src)
    out = tmp_path / "by-day"
    assert main(["traces", "import", str(src), "--partition-by", "day", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"imported {len(traces)} traces into {out}, in 4 partitions:" in printed
    days = [_day(t) for t in traces]
    lines = printed.splitlines()[1:5]  # each partition with its traces, the one without a day last
    for line, day in zip(lines, sorted({d for d in days if d}), strict=False):
        assert line.split() == [f"day={day}", str(days.count(day)), "traces" if days.count(day) > 1 else "trace"]
    assert lines[3].split()[:2] == ["day=__HIVE_DEFAULT_PARTITION__", str(days.count(None))]
    assert lines[3].endswith("(no observation has a start time)")
    assert main(["traces", "import", str(src), "--partition-by", "intent", "--out", str(tmp_path / "i"),
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["partitions"][-1]["value"] is None  # the traces without an intent, last
    assert sum(p["traces"] for p in report["partitions"]) == report["traces"] == len(traces)
    assert main(["traces", "stats", str(out), "--json"]) == 0
    from_dataset = json.loads(capsys.readouterr().out)
    assert main(["traces", "stats", str(src), "--json"]) == 0
    assert from_dataset == json.loads(capsys.readouterr().out)
    assert main(["traces", "stats", str(out)]) == 0
    assert f"{len(traces)} traces, " in capsys.readouterr().out


def test_an_existing_dataset_is_replaced_only_with_overwrite(tmp_path, capsys):
    traces = varied_traces()
    src = tmp_path / "traces.jsonl"
    write_jsonl(traces, src)
    out = tmp_path / "ds"
    assert main(["traces", "import", str(src), "--partition-by", "day", "--out", str(out)]) == 0
    before = _files(out)
    assert main(["traces", "import", str(src), "--partition-by", "intent", "--out", str(out)]) == 1
    assert "not empty; pass --overwrite" in capsys.readouterr().err
    assert _files(out) == before
    assert main(["traces", "import", str(src), "--partition-by", "intent", "--out", str(out),
                 "--overwrite"]) == 0
    assert {f.split("/")[0] for f in _files(out)} == {"intent=refund", "intent=order%20status",
                                                      "intent=billing%2Fdispute",
                                                      "intent=__HIVE_DEFAULT_PARTITION__"}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging folder left


def test_overwrite_never_replaces_a_folder_of_other_files(tmp_path):
    out = tmp_path / "notes"
    out.mkdir()
    (out / "thesis.txt").write_text("keep me")
    with pytest.raises(InputError, match="thesis.txt is not part of a trace dataset"):
        write_dataset(varied_traces(5), out, "day", overwrite=True)
    assert (out / "thesis.txt").read_text() == "keep me"


def test_a_failed_import_leaves_the_old_dataset_whole(tmp_path):
    out = tmp_path / "ds"
    write_dataset(varied_traces(), out, "day")
    before = {f: (out / f).read_bytes() for f in _files(out)}

    def broken():
        yield from varied_traces(20)
        raise InputError("bad record", file="src.jsonl", line=21)

    with pytest.raises(InputError, match="bad record"):
        write_dataset(broken(), out, "day", overwrite=True, batch_observations=10)
    assert {f: (out / f).read_bytes() for f in _files(out)} == before
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]


@pytest.mark.parametrize("field, message", [("name", "a column of the trace files"),
                                            ("tier level", "letters, digits and underscores")])
def test_a_field_that_cannot_name_a_folder_is_refused_before_reading(tmp_path, capsys, field, message):
    assert main(["traces", "import", str(tmp_path / "missing.jsonl"), "--partition-by", field,
                 "--out", str(tmp_path / "ds")]) == 1
    assert message in capsys.readouterr().err


def test_a_folder_that_is_not_a_dataset_is_named_in_the_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["traces", "stats", str(tmp_path / "empty")]) == 1
    assert "no Parquet files in this folder" in capsys.readouterr().err
    pl.DataFrame({"x": [1]}).write_parquet(tmp_path / "empty" / "other.parquet")
    assert main(["traces", "stats", str(tmp_path / "empty")]) == 1
    assert "not an evalkit trace dataset (missing columns: trace_id" in capsys.readouterr().err


@pytest.mark.slow
def test_long_payloads_cut_batches_before_the_observation_count_does(tmp_path):
    traces = varied_traces()
    write_dataset(traces, tmp_path / "few", "day")
    write_dataset(traces, tmp_path / "many", "day", batch_bytes=1_500)
    assert len(_files(tmp_path / "many")) > 3 * len(_files(tmp_path / "few"))
    assert trace_stats(tmp_path / "many") == trace_stats(tmp_path / "few")
    assert sorted(iter_dataset_traces(tmp_path / "many"), key=lambda t: t.id) == traces


def test_an_empty_import_into_a_dataset_lists_no_partition(tmp_path, capsys):
    src = tmp_path / "empty.jsonl"
    src.write_text("")
    out = tmp_path / "ds"
    assert main(["traces", "import", str(src), "--allow-empty", "--partition-by", "day", "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"imported 0 traces into {out}\n")
