"""``evalkit --help``, every ``evalkit COMMAND --help`` and the cheap commands start without heavy libraries.

Every parser is built before any command runs, so one heavy import in a parser-building function costs
every invocation about a second (pydantic, polars, numpy). Each check runs in a fresh interpreter, where
``sys.modules`` tells what was really imported.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from evalkit.cli import option_values

HEAVY = ("polars", "numpy", "pandas", "pyarrow", "altair", "networkx", "jinja2", "dask", "distributed",
         "pydantic", "yaml", "orjson", "tqdm", "jsonschema")
"""Packages that cost tens to hundreds of milliseconds to import, none of which a parser needs."""

_REPORT = """
import json, sys
heavy = set(json.loads(sys.argv[1]))
print(json.dumps({
    "heavy": sorted({m.split(".")[0] for m in sys.modules} & heavy),
    "evalkit": sorted(m for m in sys.modules if m.startswith("evalkit.") and not m.startswith("evalkit.cli")),
}))
"""


def _imports_after(code: str, *args: str, heavy: tuple[str, ...] = HEAVY) -> dict[str, list[str]]:
    """What ``code`` imported in a fresh interpreter: heavy packages, and evalkit modules outside the CLI."""
    out = subprocess.run([sys.executable, "-c", code + _REPORT, json.dumps(heavy), *args],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def test_building_the_parser_imports_no_heavy_library_and_no_library_package() -> None:
    imported = _imports_after("from evalkit.cli.main import build_parser; build_parser()")
    assert imported["heavy"] == [], "a parser-building function imports a heavy library at build time"
    # evalkit's package facades import pydantic and polars: a parser reads their constants from
    # evalkit.cli.option_values instead.
    assert imported["evalkit"] == ["evalkit.errors"]


_EVERY_HELP = """
import argparse, contextlib, io, sys
from evalkit.cli.main import build_parser, main

def paths(parser, path):
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from paths(child, [*path, name])

shown = 0
for path in paths(build_parser(), []):
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        try:
            main([*path, "--help"])
        except SystemExit as stop:
            assert stop.code == 0, (path, stop.code)
    assert text.getvalue().startswith("usage: evalkit"), path
    shown += 1
assert shown > 40, shown
"""


def test_the_help_of_every_command_imports_no_heavy_library() -> None:
    imported = _imports_after(_EVERY_HELP)
    assert imported["heavy"] == []
    assert imported["evalkit"] == ["evalkit.errors"]


_RUN = """
import sys
from evalkit.cli.main import main
code = main(sys.argv[2:])
assert code == 0, code
"""

# A command that reads or writes contracts needs pydantic (and YAML, for YAML files), nothing of the
# analysis stack.
_ANALYSIS_STACK = ("polars", "numpy", "pandas", "pyarrow", "altair", "networkx", "jinja2", "dask",
                   "distributed", "tqdm")


def test_validating_a_small_file_checks_it_without_the_analysis_stack(tmp_path: Path) -> None:
    label = tmp_path / "human-label.json"
    label.write_text(json.dumps({"traceId": "t-1", "criterionId": "polite", "label": "pass",
                                 "annotator": "ana", "labeledAt": "2026-01-01T00:00:00Z"}), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "evalkit.cli", "validate", str(label)],
                          capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, f"{label}: ok (1 human-label record)\n"), done.stderr
    assert _imports_after(_RUN, "validate", "-q", str(label), heavy=_ANALYSIS_STACK)["heavy"] == []


def test_writing_the_schemas_needs_no_analysis_stack(tmp_path: Path) -> None:
    imported = _imports_after(_RUN, "schema", "--out", str(tmp_path / "schemas"), heavy=_ANALYSIS_STACK)
    assert imported["heavy"] == []
    assert {p.name for p in (tmp_path / "schemas").iterdir()} == {
        f"{kind}.schema.json" for kind in option_values.CONTRACT_KINDS}


# Each copy in evalkit.cli.option_values and where the library defines it.
LIBRARY_HOMES = {
    "TRACE_FORMATS": ("evalkit.traces.formats", "FORMATS"),
    "TRACE_FORMAT_ENTRY_POINTS": ("evalkit.traces.plugins", "ENTRY_POINT_GROUP"),
    "CONTRACT_KINDS": ("evalkit.contracts.registry", "CONTRACTS"),
    "SAMPLING_STRATEGIES": ("evalkit.analysis.sampling", "STRATEGIES"),
    "SATURATION_WINDOW": ("evalkit.analysis.saturation", "SATURATION_WINDOW"),
    "CALIBRATION_METHODS": ("evalkit.calibration.correction", "METHODS"),
    "CALIBRATION_DEFAULT_METHOD": ("evalkit.calibration.correction", "DEFAULT_METHOD"),
    "CALIBRATION_DEFAULT_ITERATIONS": ("evalkit.calibration.correction", "DEFAULT_ITERATIONS"),
    "CALIBRATION_GATES": ("evalkit.calibration.status", "GATES"),
    "DEFAULT_POLICY_VERSION": ("evalkit.calibration.applies", "DEFAULT_POLICY_VERSION"),
    "DEFAULT_PARTITION_TRACES": ("evalkit.distributed.partitions", "DEFAULT_PARTITION_TRACES"),
    "DEFAULT_MIN_THREAD_LEN": ("evalkit.flow.slots", "DEFAULT_MIN_THREAD_LEN"),
    "FLOW_SEMANTICS": ("evalkit.flow.received", "SEMANTICS"),
    "EDD_DEFAULT_MAX_SWINGS": ("evalkit.contracts.edd", "DEFAULT_MAX_SWINGS"),
    "EDD_DEFAULT_MAX_WALLCLOCK_MS": ("evalkit.contracts.edd", "DEFAULT_MAX_WALLCLOCK_MS"),
    "EDD_DEFAULT_NO_IMPROVEMENT_STREAK_LIMIT": ("evalkit.contracts.edd",
                                                "DEFAULT_NO_IMPROVEMENT_STREAK_LIMIT"),
}


def test_every_value_the_parsers_show_is_listed_with_its_library_home() -> None:
    copies = {name for name in vars(option_values) if name.isupper()}
    assert copies == set(LIBRARY_HOMES)


@pytest.mark.parametrize("copy", sorted(LIBRARY_HOMES))
def test_the_parsers_show_the_library_s_own_value(copy: str) -> None:
    module, name = LIBRARY_HOMES[copy]
    value = getattr(importlib.import_module(module), name)
    if isinstance(value, dict):  # a registry: the parsers show its names, in its order
        value = tuple(value)
    if copy == "TRACE_FORMATS":  # evalkit's own importers; installed plug-ins add theirs after them
        plugins = {ep.name for ep in entry_points(group=option_values.TRACE_FORMAT_ENTRY_POINTS)}
        value = tuple(name for name in value if name not in plugins)
    assert getattr(option_values, copy) == value, (
        f"{module}.{name} changed: copy its new value to evalkit.cli.option_values.{copy}")
