"""Imported by a local cluster's fork server before it forks any worker: every name the per-trace tasks
read from is loaded here once, so a worker starts with them instead of loading them itself.

The facades load their names on first use (so a command's start stays light); a worker that loaded them
after starting would pay for it on every worker (about 2 CPU seconds each, measured on flow graphs).
"""

from __future__ import annotations

import importlib

FACADES = ("evalkit.contracts", "evalkit.traces", "evalkit.flow", "evalkit.checks", "evalkit.distributed")
"""The facades per-trace tasks read from."""


def load_facades() -> None:
    """Load every name of :data:`FACADES` (importing the modules behind them)."""
    for package in FACADES:
        facade = importlib.import_module(package)
        for name in facade.__all__:
            getattr(facade, name)


load_facades()
