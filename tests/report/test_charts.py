"""The overview's charts read right: whole-number count axes, red for errors alone, nouns that agree."""

from __future__ import annotations

import polars as pl

from evalkit.report import LEVEL_COLORS, bar_counts, counted, distribution


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
    assert encoding["y"]["axis"] == {"format": "d", "values": [0, 1, 2, 3]}  # a count of three observations


def test_a_count_and_its_noun_agree():
    assert [counted(1, "trace"), counted(86, "observation"), counted(1204, "call")] == [
        "1 trace", "86 observations", "1,204 calls"]
