"""One table registers evalkit's own trace formats: the registry and ``--format`` both read it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from evalkit.traces import FORMATS
from evalkit.traces.format_table import BUILT_IN, BUILT_IN_FORMATS
from evalkit.traces.plugins import ENTRY_POINT_GROUP

EXAMPLE_PLUGIN = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "pyproject.toml"


def test_the_registry_holds_every_row_of_the_table_first_in_its_order_with_its_reading_rules() -> None:
    assert list(FORMATS)[: len(BUILT_IN)] == list(BUILT_IN_FORMATS)
    for entry in BUILT_IN:
        fmt = FORMATS[entry.name]
        assert (fmt.looks_like.__module__, fmt.looks_like.__name__) == (entry.module, entry.looks_like)
        assert (fmt.read.__module__, fmt.read.__name__) == (entry.module, entry.read)
        assert (fmt.per_record, fmt.takes_context) == (entry.per_record, entry.takes_context)


_ADD_A_ROW = """
import contextlib, io
import evalkit.traces.format_table as table
table.BUILT_IN += (table.FormatEntry("lines", "json", "loads", "loads"),)
table.BUILT_IN_FORMATS += ("lines",)
from evalkit.cli.main import main
from evalkit.traces import FORMATS
shown = io.StringIO()
with contextlib.redirect_stdout(shown), contextlib.suppress(SystemExit):
    main(["traces", "import", "--help"])
print("lines" in FORMATS, "single-turn,lines" in shown.getvalue())
"""


def test_a_row_added_to_the_table_is_a_format_of_the_registry_and_of_the_command_line() -> None:
    done = subprocess.run([sys.executable, "-c", _ADD_A_ROW], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "True"]


def test_the_entry_point_group_the_cli_asks_for_is_the_one_the_example_plugin_declares() -> None:
    declared = tomllib.loads(EXAMPLE_PLUGIN.read_text(encoding="utf-8"))["project"]["entry-points"]
    assert ENTRY_POINT_GROUP in declared
