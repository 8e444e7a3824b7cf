"""The overview's charts read right: whole-number count axes, red for errors alone, nouns that agree."""

from __future__ import annotations

import polars as pl

from evalkit.report import LEVEL_COLORS, bar_counts, binned_counts, counted, distribution


def test_a_count_axis_of_one_call_ticks_0_and_1_not_0_1_1():
    spec = bar_counts({"helm_list_releases": 1}, label="tool", value="calls").to_dict()
    x = spec["layer"][0]["encoding"]["x"]["axis"]
    assert x["values"] == [0, 1] and x["format"] == "d"
    many = bar_counts({"a": 250, "b": 3}, label="tool").to_dict()["layer"][0]["encoding"]["x"]["axis"]
    assert "values" not in many and many["tickMinStep"] == 1


def test_levels_are_coloured_by_level_and_only_error_is_red():
    spec = bar_counts({"DEFAULT": 80, "WARNING": 3, "ERROR": 2}, label="level", color=LEVEL_COLORS).to_dict()
    scale = spec["layer"][0]["encoding"]["color"]["scale"]
    colours = dict(zip(scale["domain"], scale["range"], strict=True))
    assert colours["ERROR"] == "#c62828" and colours["DEFAULT"] != "#c62828" and colours["WARNING"] != "#c62828"


def test_observation_types_have_fixed_colours_none_of_them_red():
    frame = pl.DataFrame({"latency_ms": [1.0, 20.0, 300.0], "type": ["SPAN", "GENERATION", "TOOL"]})
    encoding = distribution(frame, "latency_ms", by="type", log=True).to_dict()["encoding"]
    assert "#c62828" not in encoding["color"]["scale"]["range"]
    assert encoding["y"]["axis"] == {"format": "d", "values": [0, 1]}  # three values, one to a bin


def test_a_histogram_embeds_bin_counts_not_rows_so_a_large_run_draws():
    """Altair refuses to embed over 5,000 rows: the 1,000-trace sample's overview failed on 5,247 latencies."""
    frame = pl.DataFrame({"latency_ms": [float(1 + i % 997) for i in range(12_000)],
                          "type": ["TOOL" if i % 3 else "GENERATION" for i in range(12_000)]})
    spec = distribution(frame, "latency_ms", by="type", log=True).to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert len(rows) <= 2 * 30 and sum(r["count"] for r in rows) == 12_000
    assert spec["encoding"]["x"]["bin"] == "binned" and spec["encoding"]["y"]["stack"] is True


def test_bins_have_nice_edges_and_count_every_value_once():
    counts = binned_counts(pl.DataFrame({"d": [0.0, 0.05, 0.1, 0.3, 0.3, 1.0, None]}), "d", bins=10)
    assert counts["bin_start"].to_list() == [0.0, 0.1, 0.3, 1.0] and counts["count"].to_list() == [2, 1, 2, 1]
    assert (counts["bin_end"] - counts["bin_start"]).round(12).unique().to_list() == [0.1]
    assert binned_counts(pl.DataFrame({"d": [7.0, 7.0]}), "d")["count"].to_list() == [2]  # one value: one bin


def test_a_count_and_its_noun_agree():
    assert [counted(1, "trace"), counted(86, "observation"), counted(1204, "call")] == [
        "1 trace", "86 observations", "1,204 calls"]
