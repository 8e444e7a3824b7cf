"""The package facades the command line passes through load their names on first use, and still offer every one.

``evalkit.traces``, ``analysis``, ``calibration``, ``flow``, ``distributed`` and ``contracts`` hold light
modules the CLI's parsers read (format names, contract kinds, defaults), so importing the package must
not import pydantic, polars or numpy; ``from evalkit.traces import iter_traces`` and every other name of
each ``__all__`` must still give the object its home module defines.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import types

import pytest

FACADES = ("evalkit.traces", "evalkit.analysis", "evalkit.calibration", "evalkit.flow", "evalkit.distributed",
           "evalkit.contracts")

HEAVY = ("polars", "numpy", "pandas", "pyarrow", "altair", "networkx", "dask", "distributed", "pydantic",
         "orjson", "yaml")


@pytest.mark.parametrize("facade", FACADES)
def test_importing_the_package_imports_no_heavy_library(facade: str) -> None:
    code = (f"import json, sys, {facade}; "
            f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({list(HEAVY)!r}))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


@pytest.mark.parametrize("facade", FACADES)
def test_every_public_name_is_the_object_its_home_module_defines(facade: str) -> None:
    package = importlib.import_module(facade)
    assert dir(package) == sorted(package.__all__)
    for name in package.__all__:
        home, _, attribute = package._HOMES[name].partition(":")
        value = getattr(package, name)
        assert value is getattr(importlib.import_module(home), attribute or name), name
        assert not isinstance(value, types.ModuleType), name


@pytest.mark.parametrize(("first", "package", "name"), [
    ("evalkit.analysis.review", "evalkit.analysis", "transcript"),  # review.py imports the transcript module
    ("evalkit.analysis.transcript", "evalkit.analysis", "transcript"),
    ("evalkit.traces.stats_json", "evalkit.traces", "stats_json"),
])
def test_a_name_shared_with_its_module_stays_the_function_whoever_loads_the_module_first(
        first: str, package: str, name: str) -> None:
    # Loading a submodule sets the package attribute of its name to the module; an eager facade rebound it
    # to the function afterwards, and a lazy one must too, or the import below would give a module.
    code = f"import {first}\nfrom {package} import {name}\nprint(type({name}).__name__, {name}.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["function", f"{package}.{name}"]


def test_a_name_the_facade_renames_is_its_home_s_object() -> None:
    from evalkit.distributed import judge_work_folder
    from evalkit.distributed.judge import work_folder

    assert judge_work_folder is work_folder
