"""A facade whose names load on first use still offers every name in its ``__all__``, from its home module."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import evalkit.report
from evalkit.facade import load_on_first_use


def test_every_public_name_of_the_report_facade_is_the_object_its_module_defines() -> None:
    assert dir(evalkit.report) == sorted(evalkit.report.__all__)
    for name in evalkit.report.__all__:
        home = importlib.import_module(evalkit.report._HOMES[name])
        assert getattr(evalkit.report, name) is getattr(home, name), name


def test_a_name_the_facade_does_not_offer_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="'evalkit.report' has no attribute 'render_reprot'"):
        evalkit.report.render_reprot  # noqa: B018
    with pytest.raises(ImportError, match="render_reprot"):
        from evalkit.report import render_reprot  # noqa: F401


@pytest.mark.slow
def test_a_name_loads_its_module_only_when_first_asked_for() -> None:
    code = ("import sys; from evalkit.report import readable; before = 'altair' in sys.modules;"
            "from evalkit.report import bar_counts; print(before, 'altair' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_the_helper_lists_the_public_names_and_finds_each_in_its_home() -> None:
    getattr_, dir_ = load_on_first_use("somewhere", {"dumps": "json"}, ["dumps", "EAGER"])
    assert getattr_("dumps") is importlib.import_module("json").dumps
    assert dir_() == ["EAGER", "dumps"]
    with pytest.raises(AttributeError, match="'somewhere' has no attribute 'loads'"):
        getattr_("loads")
