"""``evalkit skill-eval lint|validate|run|worksheet|resume``: evaluate a release of packaged Agent Skills.

The group is assembled here; each stage of the work keeps its commands in its own module (checks before a
run in :mod:`evalkit.cli.skilleval_checks`, running and resuming in :mod:`evalkit.cli.skilleval_run`, the
human worksheet in :mod:`evalkit.cli.skilleval_worksheet`), all thin over :mod:`evalkit.skilleval`.
"""

from __future__ import annotations

import argparse

from evalkit.cli.parsers import add_command_group


def add_skilleval_parser(sub: argparse._SubParsersAction) -> None:
    from evalkit.cli import skilleval_checks, skilleval_run, skilleval_worksheet

    commands = add_command_group(
        sub, "skill-eval", help="evaluate a release of packaged Agent Skills (lint, validate, run, review, report)",
        description="Evaluate candidate skill bytes against the prior release: lint the skills, validate the case "
                    "registry, run each case's arms in sandboxes, stop for a human worksheet, then resume from "
                    "the sealed stage into a release report.")
    skilleval_checks.add_commands(commands)
    skilleval_run.add_commands(commands)
    skilleval_worksheet.add_commands(commands)
