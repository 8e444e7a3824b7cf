"""A large unsorted OpenTelemetry file is grouped on disk: the same traces as in memory, one trace held."""

from __future__ import annotations

import random

import pytest
from test_otel_streaming import TRACES, _import, _line, _respelled, _vercel

from evalkit.errors import InputError
from evalkit.traces import iter_traces, otel_spill
from evalkit.traces.report import ImportReport


def _small_runs(m: pytest.MonkeyPatch) -> None:
    """Every unsorted file grouped on disk, in runs small enough to be merged (and merged again)."""
    m.setattr(otel_spill, "SPILL_BYTES", 0)
    for name, value in (("RUN_ROWS", 7), ("BLOCK_ROWS", 3), ("FAN_IN", 3)):
        m.setattr(otel_spill, name, value)


@pytest.fixture
def on_disk(monkeypatch):
    _small_runs(monkeypatch)


def _collector_file(path, seed=3, respell_every=0):
    """Every span of TRACES, shuffled into lines of up to five spans of several traces, as a collector's
    file exporter writes them; some spans spelt as the general path reads them, some written twice."""
    spans = [s for t in TRACES for s in TRACES[t]]
    if respell_every:
        spans = [_respelled(s) if i % respell_every == 0 else s for i, s in enumerate(spans)]
    spans += spans[::9]  # the same span again, as a retried export writes it: kept once
    random.Random(seed).shuffle(spans)
    path.write_text("".join(_line(spans[i:i + 5]) for i in range(0, len(spans), 5)))
    return path


@pytest.mark.parametrize("seed, respell_every", [(3, 0), (4, 3), (5, 1)])
def test_grouped_on_disk_gives_the_traces_held_in_memory(tmp_path, monkeypatch, seed, respell_every):
    path = _collector_file(tmp_path / "collector.jsonl", seed, respell_every)
    in_memory, memory_report = _import(path)
    with monkeypatch.context() as m:
        _small_runs(m)
        on_disk, disk_report = _import(path)
    assert len(on_disk) == len(TRACES)
    assert on_disk == in_memory  # byte for byte, in the same (trace id) order
    (held,) = memory_report.warnings
    (sorted_on_disk,) = disk_report.warnings
    assert "were held in memory" in held
    assert "is not sorted by trace id (line " in sorted_on_disk
    assert f"the spans of {len(TRACES)} traces were sorted by trace id in a temporary file" in sorted_on_disk


def test_traces_come_out_one_at_a_time_from_a_spill_never_whole_in_memory(tmp_path, on_disk):
    path = _collector_file(tmp_path / "collector.jsonl")
    spills: list[otel_spill.SpanSpill] = []
    original = otel_spill.SpanSpill.__init__

    def remembered(self, *args, **kwargs):
        original(self, *args, **kwargs)
        spills.append(self)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(otel_spill.SpanSpill, "__init__", remembered)
        traces = iter_traces(path, "otel")
        first = next(traces)
        (spill,) = spills
        spans = sum(len(v) for v in TRACES.values())
        assert spill.count >= spans  # every span went to the sort, retried copies too
        assert len(spill._sort._rows) < 7 and len(spill._sort._runs) < 3  # held: less than a run, a few runs
        assert first.id == f"{0:032x}" and len(first.observations) == len(TRACES[0])
        assert len(list(traces)) == len(TRACES) - 1
        assert spill._sort._file is None  # the temporary file is gone once the last trace is given


def test_runs_and_blocks_are_bounded_in_bytes_whatever_the_span_count(tmp_path, monkeypatch):
    """A span with a long prompt weighs a thousand short ones: runs end by bytes, not only by rows."""
    path = _collector_file(tmp_path / "collector.jsonl")
    monkeypatch.setattr(otel_spill, "SPILL_BYTES", 0)
    monkeypatch.setattr(otel_spill, "RUN_BYTES", 4000)
    monkeypatch.setattr(otel_spill, "BLOCK_BYTES", 1500)
    seen: list[otel_spill.SpanSpill] = []
    original = otel_spill.SpanSpill.__init__
    monkeypatch.setattr(otel_spill.SpanSpill, "__init__",
                        lambda self, *a: (original(self, *a), seen.append(self))[0])
    on_disk = _import(path)[0]
    monkeypatch.setattr(otel_spill, "SPILL_BYTES", 2**62)
    assert on_disk == _import(path)[0]  # in memory
    (spill,) = seen
    sort = spill._sort
    assert sort._file is None  # closed at the end
    assert sort.count > 100 and sort.run_rows == otel_spill.RUN_ROWS  # far more spans than a row bound
    assert sort.run_bytes == 4000 and sort.block_bytes == 1500


def test_a_span_id_used_twice_is_named_where_the_memory_grouping_names_it(tmp_path, monkeypatch):
    spans = [s for t in sorted(TRACES) for s in TRACES[t]]
    clash = dict(TRACES[3][1], name="another span, same id")
    path = tmp_path / "clash.jsonl"
    path.write_text(_line(spans[20:40]) + _line(spans[:20]) + _line(spans[40:]) + _line([clash]))
    with pytest.raises(InputError) as in_memory:
        list(iter_traces(path, "otel"))
    monkeypatch.setattr(otel_spill, "SPILL_BYTES", 0)
    with pytest.raises(InputError) as on_disk:
        list(iter_traces(path, "otel"))
    assert str(on_disk.value) == str(in_memory.value)
    assert "clash.jsonl:4: resourceSpans[0].scopeSpans[0].spans[0].spanId: span id" in str(on_disk.value)


def test_a_vercel_span_without_a_parent_sends_the_rest_back_to_memory(tmp_path, on_disk):
    base = 1_767_225_600_000_000_000
    spans = [s for t in TRACES for s in TRACES[t]]
    random.Random(1).shuffle(spans)
    wrapper = _vercel("a" * 32, "1" * 16, "ai.generateText", base, base + 10**9)
    child = _vercel("b" * 32, "2" * 16, "ai.generateText.doGenerate", base + 10, base + 10**8)
    path = tmp_path / "vercel.jsonl"
    path.write_text(_line(spans[:30]) + _line([wrapper]) + _line(spans[30:]) + _line([child]))
    report = ImportReport()
    traces = list(iter_traces(path, "otel", report=report))
    assert traces[-1].id == "a" * 32 and traces[-1].observations[1].metadata["sourceTraceId"] == "b" * 32
    assert len(traces) == len(TRACES) + 1
    (warning,) = report.warnings
    assert f"the spans of {len(TRACES) + 2} traces were held in memory" in warning  # counted before joining
    assert f"a Vercel AI SDK span without a parent id ({path}:2)" in warning


def test_an_unsorted_file_goes_to_disk_from_spill_bytes_on(tmp_path, monkeypatch):
    path = _collector_file(tmp_path / "collector.jsonl")
    unsorted = "is not sorted by trace id"
    assert otel_spill.spills(str(path), unsorted) is False  # far below SPILL_BYTES
    monkeypatch.setattr(otel_spill, "SPILL_BYTES", path.stat().st_size)
    assert otel_spill.spills(str(path), unsorted) is True
    assert otel_spill.spills(str(path), None) is False  # a sorted file is read one trace at a time anyway
    monkeypatch.setattr(otel_spill, "SPILL_BYTES", path.stat().st_size + 1)
    assert otel_spill.spills(str(path), unsorted) is False
