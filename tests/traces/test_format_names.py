"""``--format`` lists evalkit's importers without loading them: the registry refuses to load if the names differ."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from evalkit.traces.format_names import BUILT_IN_FORMATS
from evalkit.traces.plugins import ENTRY_POINT_GROUP

EXAMPLE_PLUGIN = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "pyproject.toml"


def test_a_format_the_registry_has_and_the_names_lack_stops_the_registry_from_loading() -> None:
    code = ("import evalkit.traces.format_names as names\nnames.BUILT_IN_FORMATS = names.BUILT_IN_FORMATS[:-1]\n"
            "import evalkit.traces.formats")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    assert "RuntimeError: evalkit.traces.format_names.BUILT_IN_FORMATS must list the names" in done.stderr
    assert f"{list(BUILT_IN_FORMATS)}" in done.stderr  # the names it has, to copy


def test_the_entry_point_group_the_cli_asks_for_is_the_one_the_example_plugin_declares() -> None:
    declared = tomllib.loads(EXAMPLE_PLUGIN.read_text(encoding="utf-8"))["project"]["entry-points"]
    assert ENTRY_POINT_GROUP in declared
