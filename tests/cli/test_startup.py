"""``evalkit --help``, every ``evalkit COMMAND --help`` and the cheap commands start without heavy libraries.

Every parser is built before any command runs, so one heavy import in a parser-building function, or in
a package facade on the way to a light module a parser reads, costs every invocation about a second
(pydantic, polars, numpy). Each check runs in a fresh interpreter, where ``sys.modules`` tells what was
really imported. The parsers read the library's own names and defaults (no copies), so the help must
still list every trace format and contract kind the library has.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.contracts.registry import CONTRACTS
from evalkit.traces import FORMATS

HEAVY = ("polars", "numpy", "pandas", "pyarrow", "altair", "networkx", "jinja2", "dask", "distributed",
         "pydantic", "pydantic_core", "yaml", "orjson", "tqdm", "jsonschema", "papermill", "matplotlib")
"""Packages that cost tens to hundreds of milliseconds to import, none of which a parser needs."""

_REPORT = """
import json, sys
heavy = set(json.loads(sys.argv[1]))
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & heavy)))
"""


def _heavy_imports_after(code: str, *args: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """The heavy packages ``code`` imported in a fresh interpreter (with whatever trace-format plug-ins this
    environment has installed: the parsers read their names without loading them)."""
    out = subprocess.run([sys.executable, "-c", code + _REPORT, json.dumps(heavy), *args],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def test_importing_the_cli_imports_no_heavy_library() -> None:
    assert _heavy_imports_after("import evalkit.cli.main") == []


def test_building_the_parser_imports_no_heavy_library() -> None:
    assert _heavy_imports_after("from evalkit.cli.main import build_parser; build_parser()") == [], (
        "a parser-building function, or a package facade on the way to a module it reads, imports a heavy "
        "library: read the value from a light module, and keep the facade's names loading on first use")


LIGHT_HOMES = ("evalkit.traces.format_table", "evalkit.traces.plugins", "evalkit.contracts.kinds",
               "evalkit.contracts.edd_defaults", "evalkit.analysis.defaults", "evalkit.calibration.defaults",
               "evalkit.calibration.status", "evalkit.distributed.defaults", "evalkit.flow.defaults")
"""The modules the parsers read the library's names and defaults from."""


@pytest.mark.parametrize("module", LIGHT_HOMES)
def test_each_module_the_parsers_read_imports_no_heavy_library(module: str) -> None:
    assert _heavy_imports_after(f"import {module}") == []


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


@pytest.mark.slow
def test_the_help_of_every_command_imports_no_heavy_library() -> None:
    assert _heavy_imports_after(_EVERY_HELP) == []


def _help(*command: str) -> str:
    """``evalkit COMMAND --help`` as a user sees it, on a terminal wide enough not to wrap the choices."""
    done = subprocess.run([sys.executable, "-m", "evalkit.cli", *command, "--help"], capture_output=True,
                          text=True, env={**os.environ, "COLUMNS": "1000"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_help_offers_every_trace_format_of_the_library_in_sniffing_order() -> None:
    # FORMATS holds evalkit's importers and any installed plug-in's: the help offers exactly those.
    assert "{" + ",".join(["auto", *FORMATS]) + "}" in _help("traces", "import")


def test_the_help_lists_every_contract_kind_of_the_library_in_order() -> None:
    assert "kinds: " + ", ".join(CONTRACTS) + "\n" in _help("validate")


_RUN = """
from evalkit.cli.main import main
code = main(sys.argv[2:])
assert code == 0, code
"""

# A command that reads or writes contracts needs pydantic (and YAML, for YAML files), nothing of the
# analysis stack.
_ANALYSIS_STACK = ("polars", "numpy", "pandas", "pyarrow", "altair", "networkx", "jinja2", "dask",
                   "distributed", "tqdm", "papermill")


@pytest.mark.slow
def test_validating_a_small_file_checks_it_without_the_analysis_stack(tmp_path: Path) -> None:
    label = tmp_path / "human-label.json"
    label.write_text(json.dumps({"traceId": "t-1", "criterionId": "polite", "label": "pass",
                                 "annotator": "ana", "labeledAt": "2026-01-01T00:00:00Z"}), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "evalkit.cli", "validate", str(label)],
                          capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, f"{label}: ok (1 human-label record)\n"), done.stderr
    assert _heavy_imports_after("import sys" + _RUN, "validate", "-q", str(label), heavy=_ANALYSIS_STACK) == []


def test_writing_the_schemas_writes_one_per_kind_without_the_analysis_stack(tmp_path: Path) -> None:
    heavy = _heavy_imports_after("import sys" + _RUN, "schema", "--out", str(tmp_path / "schemas"),
                                 heavy=_ANALYSIS_STACK)
    assert heavy == []
    assert {p.name for p in (tmp_path / "schemas").iterdir()} == {f"{kind}.schema.json" for kind in CONTRACTS}
