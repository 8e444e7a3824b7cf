"""Argument shapes that more than one command group shares, spelled once so the commands cannot drift apart."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

from evalkit.traces import BUILT_IN_FORMATS, ENTRY_POINT_GROUP


def add_command_group(sub: argparse._SubParsersAction, name: str, *, help: str,
                      description: str | None = None) -> argparse._SubParsersAction:
    """Add a command that only holds subcommands (``evalkit NAME COMMAND ...``).

    Every group is spelled the same way: a subcommand is required (``evalkit NAME`` alone is a usage error
    that lists them), shown as ``COMMAND`` in the usage line, and recorded as ``args.NAME_command``.

    Args:
        sub: the ``evalkit`` command's subparsers.
        name: the group's name on the command line, e.g. ``"analysis"`` or ``"skill-eval"``.
        help: the one line ``evalkit --help`` shows for the group.
        description: the paragraph ``evalkit NAME --help`` shows (default: none).

    Returns:
        The group's subparsers, to add its commands to.
    """
    group = sub.add_parser(name, help=help, description=description)
    return group.add_subparsers(dest=f"{name.replace('-', '')}_command", metavar="COMMAND", required=True)


def add_subject_run_arguments(parser: argparse.ArgumentParser, *, out_help: str, concurrency: int) -> None:
    """The arguments of a command that runs a subject's agent on its dataset's cases (``eval run``, ``edd run``).

    Adds ``SUBJECT.yaml``, ``--out DIR``, ``--concurrency N`` (agent processes at once) and ``--case ID ...``
    (only these cases), read by :func:`evalkit.checks.eval_subject` and the loop built on it.

    Args:
        parser: the command's parser.
        out_help: what the command keeps in its ``--out`` folder.
        concurrency: the default number of agent processes at once.
    """
    parser.add_argument("subject", metavar="SUBJECT.yaml")
    parser.add_argument("--out", required=True, metavar="DIR", help=out_help)
    parser.add_argument("--concurrency", type=int, default=concurrency, metavar="N",
                        help=f"agent processes at once (default {concurrency})")
    parser.add_argument("--case", nargs="+", metavar="ID", help="only these case ids")


def add_history_arguments(parser: argparse.ArgumentParser, *, default: str) -> None:
    """``--history DIR`` and ``--no-history``: where a command records its runs (evalkit.history).

    Args:
        parser: the command's parser.
        default: where the runs go when neither is given, as the help says it.
    """
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--history", metavar="DIR",
                       help=f"record the run's headline numbers in this history folder (default: {default}); "
                            "evalkit history show|check read it")
    group.add_argument("--no-history", action="store_true", help="record nothing in a run history")


def history_folder(args: argparse.Namespace, default: str | Path) -> str | None:
    """The history folder the options name: ``--history``, none with ``--no-history``, else ``default``."""
    if args.no_history:
        return None
    return args.history or str(default)


def add_trace_format_option(parser: argparse.ArgumentParser) -> None:
    """``--format``: the trace format a command reads, one of the importers' names, sniffed by default.

    Args:
        parser: the command's parser.
    """
    parser.add_argument("--format", choices=["auto", *trace_format_names()], default="auto",
                        help="trace format (default: sniffed)")


def trace_format_names() -> list[str]:
    """The names ``--format`` offers besides ``auto``: evalkit's own importers, then installed plug-ins'.

    Plug-in names are read from the entry points their packages declare, without loading them (which
    would import the importers, pydantic and polars, on every command's start), in name order as the
    registry loads them. A plug-in that then fails to load is left out of the registry with a warning
    naming it (see :mod:`evalkit.traces.plugins`), and ``--format NAME`` is refused by name.

    Returns:
        The format names, in sniffing order.
    """
    return [*BUILT_IN_FORMATS, *(name for name in _declared_plugin_names() if name not in BUILT_IN_FORMATS)]


@functools.cache
def _declared_plugin_names() -> tuple[str, ...]:
    """The trace-format entry-point names installed packages declare (read once a process: several
    commands read traces)."""
    from importlib.metadata import entry_points

    return tuple(sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)} - {"auto"}))
