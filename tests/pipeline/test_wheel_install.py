"""evalkit installed like a library: build the wheel, install it into a fresh virtual environment
outside the checkout, and run the sample subject there.

The wheel is built from a copy of the sources (a stale ``build/`` in the checkout cannot leak into
it) and installed with its declared dependencies from the package index, so a dependency missing
from ``pyproject.toml`` or a notebook missing from the package data fails here, not on a user's machine.
"""

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from .conftest import RUN_AT
from .test_run import SHIPPED

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "README.md", "LICENSE")
INSTALL_TIMEOUT = 900
"""Seconds for the wheel's dependencies to install (minutes on a cold pip cache, seconds on a warm one)."""


def _clean_env() -> dict[str, str]:
    """The environment without anything that points Python at the checkout or the project's venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not p.startswith(str(ROOT)))
    return env


def _run(cmd: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(map(str, cmd))} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built from a copy of the sources."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "evalkit", src / "evalkit", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(dist), str(src)],
         cwd=dist)
    (built,) = dist.glob("evalkit-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment (no system site-packages) with the wheel and its dependencies."""
    env_dir = tmp_path_factory.mktemp("venv") / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    _run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)], cwd=env_dir,
         timeout=INSTALL_TIMEOUT)
    return env_dir


def test_the_wheel_ships_every_notebook_and_template(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert {Path(n).stem for n in names if n.startswith("evalkit/notebooks/") and n.endswith(".ipynb")} == SHIPPED
    assert "evalkit/report/templates/index.html.j2" in names and "evalkit/py.typed" in names
    assert not any("__pycache__" in n or n.startswith(("tests/", "notebooks/")) for n in names)


def test_evalkit_run_works_from_the_installed_wheel_outside_the_checkout(installed, tmp_path):
    python, evalkit = installed / "bin" / "python", installed / "bin" / "evalkit"
    where = _run([str(python), "-c", "import json, evalkit, evalkit.pipeline as p; "
                  "print(json.dumps([evalkit.__file__, str(p.default_notebooks_dir())]))"], cwd=tmp_path)
    module, notebooks = (Path(p) for p in json.loads(where.stdout))
    assert module.is_relative_to(installed) and notebooks.is_relative_to(installed), where.stdout
    assert {p.stem for p in notebooks.glob("*.ipynb")} == SHIPPED

    shutil.copytree(ROOT / "data" / "sample", tmp_path / "sample")
    done = _run([str(evalkit), "run", "sample/subject.yaml", "--out", "out", "--only", "00_overview",
                 "--at", RUN_AT], cwd=tmp_path)
    assert "00_overview ... ok" in done.stderr, done.stderr
    manifest = json.loads((tmp_path / "out" / "run.json").read_text())
    assert [(n["name"], n["status"]) for n in manifest["notebooks"]] == [("00_overview", "ok")]
    summary = json.loads((tmp_path / "out" / "00_overview" / "summary.json").read_text())
    assert {m["name"]: m["value"] for m in summary["metrics"]}["traces"] > 0
    html = (tmp_path / "out" / "index.html").read_text()
    assert "00_overview" in html and 'class="status failed"' not in html
