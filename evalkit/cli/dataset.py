"""``evalkit dataset expand|merge|derive|check``: grow and check a subject's suite (thin over evalkit.suite)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.cli.parsers import add_command_group


def _suite_path(subject_or_dataset: str) -> Path:
    from evalkit.suite import suite_of

    return suite_of(subject_or_dataset).path


def _cmd_expand(args: argparse.Namespace) -> int:
    from evalkit.io.canonical import canonical_line
    from evalkit.suite import expand_tuples, read_dataset, uncovered_tuples

    dataset = read_dataset(_suite_path(args.subject))
    if args.missing:
        tuples = uncovered_tuples(dataset.dimensions, [c.tuple for c in dataset.cases])
    else:
        tuples = expand_tuples(dataset.dimensions)
    for t in tuples:
        sys.stdout.write(canonical_line(t))
    what = "not yet realised by a case" if args.missing else "in all"
    print(f"{len(tuples)} tuple(s) {what} ({len(dataset.cases)} case(s) in the suite)", file=sys.stderr)
    return 0


def _print_merge(suite: Path, result) -> None:
    for dup in result.near_duplicates:
        print(f"near-duplicate dropped: {dup.case.id} repeats {dup.of} (similarity {dup.similarity:.2f})",
              file=sys.stderr)
    print(f"{suite}: {result.summary()}")


def _cmd_merge(args: argparse.Namespace) -> int:
    from evalkit.suite import merge_into, read_offered

    suite = _suite_path(args.subject)
    _print_merge(suite, merge_into(suite, read_offered(args.cases_file)))
    return 0


def _cmd_derive(args: argparse.Namespace) -> int:
    from evalkit.suite import derive_into_suite

    done = derive_into_suite(args.subject, args.traces, labels=args.labels, review=args.from_review,
                             verdicts=args.from_verdicts, only=args.only)
    for why, n in done.reasons.items():
        print(f"{n} trace(s) left out: {why}", file=sys.stderr)
    same = f" ({done.repeats} repeat the prompt and outcome of an earlier trace: one case each)" if done.repeats else ""
    print(f"{len(done.derived.cases)} case(s) derived{same}", file=sys.stderr)
    _print_merge(done.suite, done.merged)
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from evalkit.suite import check_dataset

    suite = _suite_path(args.subject)
    result = check_dataset(suite)
    for problem in result.problems:
        print(f"error: {problem.render()}", file=sys.stderr)
    sources = ", ".join(f"{n} {s}" for s, n in result.by_source.items()) or "none"
    state = "ok" if result.ok else f"{len(result.problems)} problem(s)"
    print(f"{suite}: {result.cases} case(s) ({sources}): {state}")
    return 0 if result.ok else 1


def add_dataset_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``dataset expand|merge|derive|check`` to the ``evalkit`` command."""
    commands = add_command_group(sub, "dataset", help="grow and check the subject's suite of test cases",
                                 description="The suite is append-only: a case once written stays unchanged; "
                                             "merge adds new ids, drops near-duplicates (each one reported) and "
                                             "bumps the version. SUBJECT is a subject file naming dataset:, or "
                                             "the suite file.")

    e = commands.add_parser("expand", help="print every dimension tuple (JSONL), or those no case realises")
    e.add_argument("subject", metavar="SUBJECT")
    e.add_argument("--missing", action="store_true", help="only the tuples no case realises yet")
    e.set_defaults(func=_cmd_expand)

    m = commands.add_parser("merge", help="append new cases from a file (a suite file or case records)",
                            description="The only way cases from a file enter the suite: new ids are appended, "
                                        "near-duplicates of a suite case (or of a case kept before them) dropped "
                                        "and named, the version bumped.")
    m.add_argument("subject", metavar="SUBJECT")
    m.add_argument("cases_file", metavar="CASES_FILE")
    m.set_defaults(func=_cmd_merge)

    d = commands.add_parser(
        "derive", help="derive cases from past traces and how they came out (labels, a review, judge verdicts)",
        description="One derived case per past trace with an outcome: the trace's input prompt as the query, tuple "
                    "{outcome: pass|fail}, the origin trace id; from a review or verdicts, the failure modes (or "
                    "failed criteria) and critique as the case's expectation. Derived fail cases are the "
                    "regression set the next eval run shows on the card. Merged into the suite (near-duplicates "
                    "dropped, each named).")
    d.add_argument("subject", metavar="SUBJECT")
    d.add_argument("traces", metavar="TRACES", nargs="?", help="the past traces (default: the subject's traces)")
    source = d.add_mutually_exclusive_group(required=True)
    source.add_argument("--labels", metavar="LABELS", help="human labels (pass/fail per trace and criterion)")
    source.add_argument("--from-review", metavar="FILE",
                        help="the review page's export (its Export button), or an annotation store (JSONL)")
    source.add_argument("--from-verdicts", metavar="FILE", help="judge verdicts (criterion-verdict JSONL)")
    d.add_argument("--only", nargs="+", metavar="OUTCOME", help="keep only these outcomes, e.g. --only fail")
    d.set_defaults(func=_cmd_derive)

    c = commands.add_parser("check", help="check ids, duplicates and tuple values; exit 1 on a problem")
    c.add_argument("subject", metavar="SUBJECT_OR_DATASET")
    c.set_defaults(func=_cmd_check)
