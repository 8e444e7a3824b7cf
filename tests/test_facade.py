"""A facade whose names load on first use still offers every name in its ``__all__``, from its home module."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import evalkit.report


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


def _facade(tmp_path, monkeypatch, body: str):
    package = tmp_path / "somewhere"
    package.mkdir()
    (package / "__init__.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "somewhere", raising=False)
    return importlib.import_module("somewhere")


def test_the_type_checking_imports_say_where_each_name_lives(tmp_path, monkeypatch) -> None:
    facade = _facade(tmp_path, monkeypatch, (
        "from typing import TYPE_CHECKING\n"
        "from evalkit.facade import load_on_first_use\n"
        "if TYPE_CHECKING:\n"
        "    from json import dumps\n"
        "    from json import loads as read\n"
        "EAGER = 1\n"
        "__all__ = ['EAGER', 'dumps', 'read']\n"
        "__getattr__, __dir__ = load_on_first_use(__name__, __all__)\n"))
    assert facade.dumps is importlib.import_module("json").dumps
    assert facade.read is importlib.import_module("json").loads
    assert dir(facade) == ["EAGER", "dumps", "read"]
    with pytest.raises(AttributeError, match="'somewhere' has no attribute 'load'"):
        facade.load  # noqa: B018


def test_a_public_name_no_import_names_stops_the_facade_from_loading(tmp_path, monkeypatch) -> None:
    with pytest.raises(RuntimeError, match=r"somewhere.__all__ names \['loads'\]"):
        _facade(tmp_path, monkeypatch, (
            "from typing import TYPE_CHECKING\n"
            "from evalkit.facade import load_on_first_use\n"
            "if TYPE_CHECKING:\n"
            "    from json import dumps\n"
            "__all__ = ['dumps', 'loads']\n"
            "__getattr__, __dir__ = load_on_first_use(__name__, __all__)\n"))
