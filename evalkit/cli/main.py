"""The `evalkit` parser: every command group registered in one place, and the one error boundary."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from evalkit import __version__
from evalkit.errors import InputError, MissingCredential


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalkit",
        description="Evaluate LLM agents offline: contracts, traces, error analysis, judge calibration, "
                    "flow graphs and self-contained HTML reports.",
    )
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    from evalkit.cli.contracts import add_contract_parsers

    add_contract_parsers(sub)

    from evalkit.cli.traces import add_traces_parser

    add_traces_parser(sub)

    from evalkit.cli.sample import add_sample_parser

    add_sample_parser(sub)

    from evalkit.cli.analysis import add_analysis_parser

    add_analysis_parser(sub)

    from evalkit.cli.review import add_review_parser

    add_review_parser(sub)

    from evalkit.cli.labels import add_labels_parser

    add_labels_parser(sub)

    from evalkit.cli.calibrate import add_calibrate_parser

    add_calibrate_parser(sub)

    from evalkit.cli.judge import add_judge_parser

    add_judge_parser(sub)

    from evalkit.cli.verdicts import add_verdicts_parser

    add_verdicts_parser(sub)

    from evalkit.cli.export import add_export_parser

    add_export_parser(sub)

    from evalkit.cli.compare import add_compare_parsers

    add_compare_parsers(sub)

    from evalkit.cli.flow import add_flow_parser

    add_flow_parser(sub)

    from evalkit.cli.run import add_run_parsers

    add_run_parsers(sub)

    from evalkit.cli.batch import add_batch_parser

    add_batch_parser(sub)

    from evalkit.cli.history import add_history_parser

    add_history_parser(sub)

    from evalkit.cli.dataset import add_dataset_parser

    add_dataset_parser(sub)

    from evalkit.cli.evals import add_eval_parsers

    add_eval_parsers(sub)

    from evalkit.cli.tree import add_tree_parser

    add_tree_parser(sub)

    from evalkit.cli.edd import add_edd_parser

    add_edd_parser(sub)

    from evalkit.cli.skilleval import add_skilleval_parser

    add_skilleval_parser(sub)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except InputError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        return 1
    except MissingCredential as exc:  # nothing was sent: say which variable to set
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a full or read-only disk, a missing permission: the path and the fix, no traceback
        from evalkit.io.disk_errors import os_problem

        print(f"error: {os_problem(exc).render()}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
