"""``evalkit schema`` and ``evalkit validate``: contracts as JSON Schema, and files checked against them."""

from __future__ import annotations

import argparse
import sys

from evalkit.contracts.kinds import KINDS


def _cmd_schema(args: argparse.Namespace) -> int:
    from evalkit.io.outputs import guard_outputs
    from evalkit.schema import write_schemas

    guard_outputs({"--out": args.out}, folders=["--out"])
    paths = write_schemas(args.out)
    print(f"wrote {len(paths)} schemas to {args.out}")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from evalkit.contract_files import validate_file

    failed = 0
    for path in args.files:
        notes: list = []
        kind, count, problems = validate_file(path, args.kind, notes=notes)
        for note in notes:
            print(f"warning: {note.render()}", file=sys.stderr)
        for problem in problems:
            print(problem.render(), file=sys.stderr)
        if problems:
            failed += 1
        elif not args.quiet:
            print(f"{path}: ok ({count} {kind} record{'s' if count != 1 else ''})")
    if failed:
        print(f"{failed} of {len(args.files)} file(s) invalid", file=sys.stderr)
        return 1
    return 0


def add_contract_parsers(sub: argparse._SubParsersAction) -> None:
    """Add ``schema`` and ``validate`` to the ``evalkit`` command."""
    p = sub.add_parser("schema", help="write one JSON Schema per contract",
                       description="Write <kind>.schema.json for every contract into a folder.")
    p.add_argument("--out", required=True, metavar="DIR", help="folder to write the schemas into")
    p.set_defaults(func=_cmd_schema)

    p = sub.add_parser("validate", help="check JSON, JSONL or YAML files against their contract",
                       description="Check files against a contract. Exits 0 when every record is valid, "
                                   "else 1 with one line per problem: FILE[:LINE]: field.path: message.",
                       epilog="kinds: " + ", ".join(KINDS))
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--kind", choices=list(KINDS), metavar="KIND",
                   help="the contract to check against (default: told from the file name or content)")
    p.add_argument("-q", "--quiet", action="store_true", help="print problems only")
    p.set_defaults(func=_cmd_validate)
