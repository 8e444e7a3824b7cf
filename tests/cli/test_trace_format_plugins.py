
"""``--format`` offers installed plug-in formats, though the parsers no longer import the importers' registry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.traces import load
from evalkit.traces.format_table import BUILT_IN_FORMATS
from evalkit.traces.plugins import ENTRY_POINT_GROUP

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins"
ENTRY_POINTS = (f"[{ENTRY_POINT_GROUP}]\nopenhands = evalkit_agent_formats.openhands:FORMAT\n"
                "swe-agent = evalkit_agent_formats.swe_agent:FORMAT\n")


def _dist_info(root: Path, entry_points_txt: str, suffix: str = ".dist-info") -> Path:
    """A minimal installed distribution declaring entry points, as pip would leave it."""
    info = root / f"evalkit_agent_formats-0.1.0{suffix}"
    info.mkdir(parents=True)
    (info / ("METADATA" if suffix == ".dist-info" else "PKG-INFO")).write_text("Metadata-Version: 2.1\nName: evalkit-agent-formats\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(entry_points_txt)
    return root


# A machine where no package declares a trace format, whatever this environment has installed (`make`
# installs the example plug-in).
_WITHOUT_INSTALLED_PLUGINS = """
import importlib.metadata as metadata, sys
_entry_points = metadata.entry_points
metadata.entry_points = lambda **select: (metadata.EntryPoints(()) if select.get("group") == "evalkit.trace_formats"
                                          else _entry_points(**select))
"""

_MAIN = """
import atexit
from evalkit.cli.main import main
heavy = {"polars", "numpy", "pandas", "pydantic", "pydantic_core", "orjson"}
atexit.register(lambda: print("heavy imports:", sorted({m.split(".")[0] for m in sys.modules} & heavy),
                              file=sys.stderr))  # also after --help, which exits inside main
sys.exit(main(sys.argv[1:-1]))
"""


def _evalkit(*args: str, path: list[Path], installed: bool = True) -> subprocess.CompletedProcess[str]:
    """``evalkit ARGS`` in a fresh interpreter with ``path`` first on sys.path; ``installed=False`` hides the
    plug-ins this environment has installed. Its stderr ends with the heavy packages it imported."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in path)}
    code = ("" if installed else _WITHOUT_INSTALLED_PLUGINS) + "import sys\n" + _MAIN
    return subprocess.run([sys.executable, "-c", code, *args, "end"], capture_output=True, text=True, env=env,
                          timeout=120)


def _swe_agent_trajectory() -> dict:
    history = [{"role": "system", "content": "You are SWE-agent."},
               {"role": "user", "content": "Fix issue 1458."},
               {"role": "assistant", "content": "Done.\n```\nsubmit\n```", "agent": "primary"}]
    steps = [{"action": "submit\n", "observation": "diff --git a/x b/x", "response": history[2]["content"],
              "thought": "Done.", "state": '{"open_file": "n/a"}\n'}]
    return {"environment": "swe_main", "trajectory": steps, "history": history,
            "info": {"exit_status": "submitted", "submission": "diff --git a/x b/x"}}


@pytest.mark.slow
def test_an_installed_plugin_s_format_is_offered_and_selected_by_name(tmp_path: Path) -> None:
    site = _dist_info(tmp_path / "site", ENTRY_POINTS)
    # The distribution on PYTHONPATH comes first, so it stands in for one of the same name installed here.
    shown = _evalkit("traces", "import", "--help", path=[site, EXAMPLE])
    assert shown.returncode == 0, shown.stderr
    # evalkit's own formats first, then the plug-in's, in name order; read without loading the plug-in.
    assert "{" + ",".join(["auto", *BUILT_IN_FORMATS, "openhands", "swe-agent"]) + "}" in shown.stdout
    assert shown.stderr.endswith("heavy imports: []\n")

    src = tmp_path / "run.traj.json"
    src.write_text(json.dumps(_swe_agent_trajectory()))
    out = tmp_path / "out.jsonl"
    done = _evalkit("traces", "import", str(src), "--format", "swe-agent", "--out", str(out), path=[site, EXAMPLE])
    assert done.returncode == 0, done.stderr
    (trace,) = load(out)
    assert trace.metadata["source"] == "swe-agent"


def test_without_plugins_a_plugin_s_name_is_an_invalid_choice(tmp_path: Path) -> None:
    done = _evalkit("traces", "import", "x.json", "--format", "swe-agent", "--out", str(tmp_path / "o.jsonl"),
                    path=[], installed=False)
    assert done.returncode == 2
    assert "argument --format: invalid choice: 'swe-agent'" in done.stderr


@pytest.mark.slow
def test_a_plugin_that_fails_to_load_is_offered_but_refused_by_name_with_the_loader_s_warning(tmp_path: Path) -> None:
    site = _dist_info(tmp_path / "site", f"[{ENTRY_POINT_GROUP}]\nbroken = no_such_module:FORMAT\n")
    src = tmp_path / "x.json"
    src.write_text("{}")
    done = _evalkit("traces", "import", str(src), "--format", "broken", "--out", str(tmp_path / "o.jsonl"),
                    path=[site])
    assert done.returncode == 1
    assert "trace format plug-in 'broken' (no_such_module:FORMAT) left out: No module named 'no_such_module'" in done.stderr
    assert "unknown trace format 'broken'" in done.stderr and not (tmp_path / "o.jsonl").exists()
