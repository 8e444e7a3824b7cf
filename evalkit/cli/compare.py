"""``evalkit compare OLD NEW`` and ``evalkit gate RUN --baseline BASE``: two runs' verdicts, compared honestly.

Thin over :mod:`evalkit.compare`: ``compare`` prints :func:`~evalkit.compare.render_comparison` (or JSON);
``gate`` prints :func:`~evalkit.compare.render_gate_markdown` and exits with the gate's status. The gate's
exit codes are distinct so CI can tell a failed gate (1) from a broken call (2).
"""

from __future__ import annotations

import argparse
import sys

from evalkit.errors import InputError

GATE_FAILED = 1
"""Exit code of ``evalkit gate`` when a criterion dropped significantly beyond the margin."""

GATE_BROKEN = 2
"""Exit code of ``evalkit gate`` when it could not decide: bad flags or unreadable/unpaired input
(argparse's own usage errors exit 2 as well)."""

GATE_INCOMPLETE = 3
"""Exit code of ``evalkit gate`` when a criterion had too few items decided in both runs to be gated
(``evalkit.compare.gate.EXIT_STATUS``): not a pass."""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number (got {text!r})") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive (got {value})")
    return value


def _fraction(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number such as 0.02 (got {text!r})") from None


def _cmd_compare(args: argparse.Namespace) -> int:
    from evalkit.compare import compare_files, comparison_json, render_comparison
    from evalkit.io import canonical_dumps

    comparison = compare_files(args.old, args.new, criteria=args.criterion or (), join_on=args.join_on,
                               unpaired=args.unpaired, seed=args.seed, iterations=args.iterations)
    sys.stdout.write(canonical_dumps(comparison_json(comparison)) if args.json else render_comparison(comparison))
    return 0


def _cmd_gate(args: argparse.Namespace) -> int:
    """The gate; any bad input exits GATE_BROKEN (not main's 1, which here means a failed gate)."""
    try:
        return _run_gate(args)
    except InputError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        return GATE_BROKEN


def _run_gate(args: argparse.Namespace) -> int:
    from evalkit.compare import gate, render_gate_markdown
    from evalkit.io import atomic_write_text
    from evalkit.io.outputs import guard_outputs

    guard_outputs({"--markdown-out": args.markdown_out}, {"RUN": args.run, "--baseline": args.baseline})
    result = gate(args.run, args.baseline, max_drop=args.max_drop, alpha=args.alpha, join_on=args.join_on,
                  unpaired=args.unpaired, least_decided=args.min_decided)
    if not result.criteria:
        raise InputError("no verdicts to gate: both runs are empty", file=args.run)
    for note in result.comparison.notes:
        print(f"warning: {note}", file=sys.stderr)
    markdown = render_gate_markdown(result)
    if args.markdown_out:
        atomic_write_text(args.markdown_out, markdown)
    sys.stdout.write(markdown)
    return result.exit_status


_COMPARE_EPILOG = """\
The runs are paired on (criterion, trace id), or with --join-on case on the dataset case (suite runs'
trace ids CASE-rN). Items judged in only one run are refused, naming them, unless --unpaired; an item
uncertain in either run is left out of the table and counted. Exit code 0, or 1 on bad input.

example:
  evalkit compare verdicts.prompt-v1.jsonl verdicts.prompt-v2.jsonl --criterion grounded-policy
"""

_GATE_EPILOG = """\
A criterion fails when BOTH McNemar's exact one-sided test for a drop gives p < ALPHA AND the one-sided
1-ALPHA upper bound of new-old (paired bootstrap) is below -MAX_DROP: a small noisy run cannot block a
merge, and a large run cannot hide a real drop. See docs/compare.md.

A criterion with fewer items decided (pass or fail) in both runs than the gate needs to be able to fail
at all (5 at alpha 0.05: McNemar's exact test cannot reach p < alpha on fewer) is incomplete, never a
pass: a judge that answered uncertain everywhere, or an empty run with --unpaired, gates nothing.

exit codes:
  0  passed: every criterion was gated and none dropped significantly beyond the margin
  1  failed: at least one criterion did (the Markdown names it)
  2  broken call: bad flags, an unreadable or invalid verdicts file, or unpaired runs without --unpaired
  3  incomplete: no criterion failed, but one had too few items decided in both runs (--min-decided)

in CI (GitHub Actions):
  evalkit gate verdicts.jsonl --baseline baseline/verdicts.jsonl --markdown-out gate.md
  evalkit gate verdicts.jsonl --baseline baseline/verdicts.jsonl >> "$GITHUB_STEP_SUMMARY"
"""


def add_compare_parsers(sub: argparse._SubParsersAction) -> None:
    """Add ``compare`` and ``gate`` to the ``evalkit`` command."""
    formatter = argparse.RawDescriptionHelpFormatter

    p = sub.add_parser("compare", help="compare two runs' verdicts: flips, McNemar's exact test, paired interval",
                       formatter_class=formatter, epilog=_COMPARE_EPILOG,
                       description="Compare two runs' criterion verdicts per criterion: the paired 2x2 table, "
                                   "McNemar's exact test, a paired bootstrap interval of new-old pass rate, "
                                   "uncertain verdicts counted, and each flipped item with both critiques.")
    p.add_argument("old", metavar="OLD", help="the baseline run's verdicts (criterion-verdict JSONL)")
    p.add_argument("new", metavar="NEW", help="the new run's verdicts")
    p.add_argument("--criterion", action="append", metavar="ID",
                   help="compare only this criterion (repeatable; default: every criterion either run judged)")
    _add_pairing_options(p)
    p.add_argument("--seed", type=int, default=0, metavar="N", help="bootstrap seed (default 0)")
    p.add_argument("--iterations", type=_positive_int, default=10_000, metavar="N",
                   help="bootstrap resamples (default 10000)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON (every flip) instead of text")
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser("gate", help="CI regression gate: exit 1 when a criterion dropped significantly, "
                                    "3 when one could not be gated",
                       formatter_class=formatter, epilog=_GATE_EPILOG,
                       description="Gate a run against a baseline run, criterion by criterion, and print the "
                                   "decision as Markdown (for a CI log or a pull-request comment).")
    p.add_argument("run", metavar="RUN", help="the new run's verdicts (criterion-verdict JSONL)")
    p.add_argument("--baseline", required=True, metavar="BASE", help="the baseline run's verdicts")
    p.add_argument("--max-drop", type=_fraction, default=0.02, metavar="X",
                   help="tolerated absolute drop in pass rate, in [0, 1) (default 0.02: two points)")
    p.add_argument("--alpha", type=_fraction, default=0.05, metavar="A",
                   help="one-sided significance level, in (0, 0.5) (default 0.05)")
    _add_pairing_options(p)
    p.add_argument("--min-decided", type=_positive_int, metavar="N",
                   help="items decided in both runs a criterion needs, else it is incomplete (exit 3); "
                        "default and least: the fewest on which the gate can fail at --alpha (5 at 0.05)")
    p.add_argument("--markdown-out", metavar="FILE", help="also write the Markdown summary to FILE (atomically)")
    p.set_defaults(func=_cmd_gate)


def _add_pairing_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--join-on", choices=("trace", "case"), default="trace",
                   help="pair verdicts on the trace id (default) or on the dataset case (CASE-rN -> CASE)")
    p.add_argument("--unpaired", action="store_true",
                   help="allow items judged in only one run: compare the items in both, list the others")
