"""``evalkit dataset expand|merge|derive|check``: grow and check a subject's suite (thin over evalkit.suite)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.cli.parsers import add_command_group
from evalkit.errors import InputError


def _suite_path(subject_or_dataset: str) -> Path:
    """The suite file a subject names, or the argument itself when it is a suite file."""
    from evalkit.io.documents import read_records

    path = Path(subject_or_dataset)
    records = read_records(path)
    first = records[0].value if records else {}
    if isinstance(first, dict) and "cases" in first:
        return path
    if isinstance(first, dict) and "notebooks" in first:
        from evalkit.subjects import load_subject

        resolved = load_subject(path)
        if resolved.subject.dataset is None:
            raise InputError("the subject names no dataset (add dataset: FILE)", file=str(path), path="dataset")
        return resolved.base / resolved.subject.dataset
    raise InputError("neither a subject file nor a suite file (dataset)", file=str(path))


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


def _offered_cases(path: str) -> list:
    from evalkit.contract_files import read_model, read_models
    from evalkit.contracts.dataset import Case, Dataset
    from evalkit.io.documents import read_records

    records = read_records(Path(path))
    if len(records) == 1 and isinstance(records[0].value, dict) and "cases" in records[0].value:
        return list(read_model(path, Dataset).cases)
    return read_models(path, Case)


def _write_merged(suite: Path, dataset, offered: list, quiet: bool) -> int:
    from evalkit.suite import merge, write_dataset

    result = merge(dataset, offered)
    for dup in result.near_duplicates:
        print(f"near-duplicate dropped: {dup.case.id} repeats {dup.of} (similarity {dup.similarity:.2f})",
              file=sys.stderr)
    if result.added:
        write_dataset(suite, result.dataset)
    if not quiet:
        print(f"{suite}: {result.summary()}")
    return 0


def _cmd_merge(args: argparse.Namespace) -> int:
    from evalkit.suite import read_dataset

    suite = _suite_path(args.subject)
    return _write_merged(suite, read_dataset(suite), _offered_cases(args.cases_file), False)


def _cmd_derive(args: argparse.Namespace) -> int:
    from evalkit.contract_files import read_models
    from evalkit.contracts.labels import HumanLabel
    from evalkit.suite import derive_cases, outcomes_from_labels, read_dataset
    from evalkit.traces import iter_traces

    suite = _suite_path(args.subject)
    outcomes = outcomes_from_labels(read_models(args.labels, HumanLabel))
    derived = derive_cases(iter_traces(args.traces), outcomes, only=args.only)
    reasons: dict[str, int] = {}
    for why in derived.skipped.values():
        reasons[why] = reasons.get(why, 0) + 1
    for why, n in sorted(reasons.items()):
        print(f"{n} trace(s) left out: {why}", file=sys.stderr)
    seen: set[str] = set()
    unique = [c for c in derived.cases if not (c.id in seen or seen.add(c.id))]  # first trace per prompt
    same = len(derived.cases) - len(unique)
    print(f"{len(derived.cases)} case(s) derived from {args.traces}"
          + (f" ({same} repeat the prompt and outcome of an earlier trace: one case each)" if same else ""),
          file=sys.stderr)
    return _write_merged(suite, read_dataset(suite), unique, False)


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

    m = commands.add_parser("merge", help="append new cases from a file (a suite file or case records)")
    m.add_argument("subject", metavar="SUBJECT")
    m.add_argument("cases_file", metavar="CASES_FILE")
    m.set_defaults(func=_cmd_merge)

    d = commands.add_parser("derive", help="derive cases from past traces and their human labels, and merge them")
    d.add_argument("subject", metavar="SUBJECT")
    d.add_argument("traces", metavar="TRACES")
    d.add_argument("--labels", required=True, metavar="LABELS", help="human labels (pass/fail per trace)")
    d.add_argument("--only", nargs="+", metavar="OUTCOME", help="keep only these outcomes, e.g. --only fail")
    d.set_defaults(func=_cmd_derive)

    c = commands.add_parser("check", help="check ids, duplicates and tuple values; exit 1 on a problem")
    c.add_argument("subject", metavar="SUBJECT_OR_DATASET")
    c.set_defaults(func=_cmd_check)
