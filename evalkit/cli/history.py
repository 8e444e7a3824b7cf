"""``evalkit history show|check``: the recorded runs, and whether the latest got worse beyond noise."""

from __future__ import annotations

import argparse
import sys

from evalkit.cli.parsers import add_command_group


def _cmd_show(args: argparse.Namespace) -> int:
    from evalkit.history import read_history, render_history

    records = read_history(args.folder)
    if args.json:
        from evalkit.io import canonical_line

        for r in records:
            if args.series is None or r.series == args.series:
                sys.stdout.write(canonical_line(r.to_json_obj()))
        return 0
    print(render_history(records, series=args.series), end="")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from evalkit.history import check_history, render_history_check

    check = check_history(args.folder, series=args.series, max_drop=args.max_drop, alpha=args.alpha)
    text = render_history_check(check)
    if args.markdown:
        from evalkit.io import atomic_write_text

        atomic_write_text(args.markdown, text)
    print(text, end="")
    return check.exit_status


def add_history_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``history show`` and ``history check`` to the ``evalkit`` command."""
    commands = add_command_group(sub, "history", help="the run history: recorded runs, trends, a regression check")
    s = commands.add_parser("show", help="print every recorded run, per series",
                            description="Print the run history: per subject (and source: run or eval-run), "
                                        "each run's gate, pass rate per criterion (corrected with its interval, "
                                        "or observed: obs), top failure mode, and where the judge changed.")
    s.add_argument("folder", metavar="HISTORY", help="the history folder (history.jsonl in it)")
    s.add_argument("--series", metavar="SUBJECT", help="only this subject's runs")
    s.add_argument("--json", action="store_true", help="print the records as JSON lines")
    s.set_defaults(func=_cmd_show)

    c = commands.add_parser(
        "check", help="exit non-zero when the latest run is worse than the one before, beyond noise",
        description="For each series (subject and source), pair the latest run's verdicts with the run before "
                    "it, item by item, and apply the regression gate of evalkit gate (McNemar's exact test and "
                    "the paired bootstrap): exit 1 naming the criteria that got worse, 3 when a series cannot be "
                    "checked (its first run, or no per-item verdicts), 0 otherwise. Prints Markdown a CI job can post.")
    c.add_argument("folder", metavar="HISTORY", help="the history folder")
    c.add_argument("--series", metavar="SUBJECT", help="check only this subject")
    # The defaults of evalkit gate (evalkit.compare), written out so --help does not load numpy
    c.add_argument("--max-drop", type=float, default=0.02, metavar="X",
                   help="tolerated absolute drop in pass rate, in [0, 1) (default 0.02: two points)")
    c.add_argument("--alpha", type=float, default=0.05, metavar="A",
                   help="one-sided significance level, in (0, 0.5) (default 0.05)")
    c.add_argument("--markdown", metavar="FILE", help="also write the Markdown summary to FILE")
    c.set_defaults(func=_cmd_check)
