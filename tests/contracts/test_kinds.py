"""The kind names the command line lists without pydantic must be the registry's: the registry refuses to load otherwise."""

from __future__ import annotations

import subprocess
import sys

from evalkit.contracts.kinds import KINDS


def test_a_kind_the_registry_has_and_the_names_lack_stops_the_registry_from_loading() -> None:
    # As if a contract were added to CONTRACTS and not to kinds.py: evalkit validate --kind would refuse it.
    code = ("import evalkit.contracts.kinds as kinds\nkinds.KINDS = kinds.KINDS[:-1]\n"
            "import evalkit.contracts.registry")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    assert "RuntimeError: evalkit.contracts.kinds.KINDS must list the kinds of CONTRACTS" in done.stderr
    assert f"{list(KINDS)}" in done.stderr  # the kinds it has, to copy
