"""The ``evalkit`` command: one module per command group, each a thin layer over library calls."""

from evalkit.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
