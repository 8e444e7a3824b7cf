"""``evalkit compare OLD NEW`` and ``evalkit gate RUN --baseline BASE``: two runs' verdicts, compared honestly.

Thin over :mod:`evalkit.compare`: ``compare`` prints :func:`~evalkit.compare.render_comparison` (or JSON);
``gate`` prints :func:`~evalkit.compare.render_gate_markdown` and exits with the gate's status. The gate's
exit codes are distinct so CI can tell a failed gate (1) from a broken call (2).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import InputError

if TYPE_CHECKING:
    from evalkit.compare import RunComparison

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


def _selected_runs(args: argparse.Namespace) -> tuple[list[Any], list[Any], tuple[str, ...]]:
    """Both runs' verdicts, checked (one per key, located errors) and cut to ``--criterion`` when given."""
    from evalkit.compare import load_run

    old = load_run(args.old, name=Path(args.old).name, join_on=args.join_on)
    new = load_run(args.new, name=Path(args.new).name, join_on=args.join_on)
    wanted = set(args.criterion or ())
    judged = {c for c, _ in old.by_key} | {c for c, _ in new.by_key}
    missing = sorted(wanted - judged)
    if missing:
        raise InputError(f"no verdict on criterion {', '.join(map(repr, missing))} in either run "
                         f"(they judge {', '.join(sorted(judged)) or 'nothing'})", path="--criterion")

    def keep(run: Any) -> list[Any]:
        return [v for (crit, _), v in run.by_key.items() if not wanted or crit in wanted]

    return keep(old), keep(new), old.notes + new.notes


def _comparison_json(comparison: RunComparison) -> dict[str, Any]:
    """The comparison as camelCase JSON, the numbers ``render_comparison`` prints and every flip."""
    from evalkit.io import camel_json

    criteria = []
    for c in comparison.criteria:
        t, iv, cd = c.table, c.interval, c.corrected
        criteria.append({
            "criterionId": c.criterion_id, "n": t.n, "oldRate": t.old_rate, "newRate": t.new_rate,
            "difference": t.difference,
            "table": {"bothPass": t.both_pass, "passToFail": t.pass_to_fail, "failToPass": t.fail_to_pass,
                      "bothFail": t.both_fail},
            "interval": camel_json(iv),
            "mcnemar": {"pTwoSided": c.mcnemar.p_two_sided, "pDrop": c.mcnemar.p_drop},
            "uncertain": {"oldOnly": c.uncertain_old_only, "newOnly": c.uncertain_new_only,
                          "both": c.uncertain_both},
            "corrected": None if cd is None else camel_json(cd),
            "flips": [{"key": f.key, "old": f.old_result, "new": f.new_result, "oldCritique": f.old_critique,
                       "newCritique": f.new_critique} for f in c.flips],
            "onlyOld": list(c.only_old), "onlyNew": list(c.only_new),
        })
    return {"old": comparison.old_name, "new": comparison.new_name, "joinOn": comparison.join_on,
            "unpaired": comparison.unpaired, "criteria": criteria, "notes": list(comparison.notes)}


def _cmd_compare(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from evalkit.compare import compare_runs, render_comparison
    from evalkit.io import canonical_dumps

    old, new, notes = _selected_runs(args)
    comparison = compare_runs(old, new, join_on=args.join_on, unpaired=args.unpaired, seed=args.seed,
                              iterations=args.iterations, old_name=Path(args.old).name,
                              new_name=Path(args.new).name)
    comparison = replace(comparison, notes=notes)  # the files' notes (lists carry none of their own)
    if not comparison.criteria:
        raise InputError("no verdicts to compare: both runs are empty", file=args.old)
    if args.json:
        sys.stdout.write(canonical_dumps(_comparison_json(comparison)))
    else:
        sys.stdout.write(render_comparison(comparison))
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
    from evalkit.io.atomic import check_writable

    if args.markdown_out:
        check_writable(args.markdown_out)  # before the bootstrap, not after
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
