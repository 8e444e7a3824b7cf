"""``evalkit traces import`` and ``evalkit traces stats``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.cli.parsers import add_command_group, add_trace_format_option
from evalkit.cli.words import plural
from evalkit.errors import InputError, UnknownTraceFormat

if TYPE_CHECKING:
    from evalkit.traces import ChatMapping, ImportReport


class _EmptySources(Exception):
    """Raised inside the import stream so that nothing is written when a source had no records."""


class _NothingImported(Exception):
    """Raised inside the import stream when every record was skipped: an empty file with exit 0 reads as done."""


def _chat_mapping(args: argparse.Namespace) -> ChatMapping:
    """The chat mapping of ``--mapping FILE`` with the command-line options laid over it."""
    from evalkit.traces import ChatMapping, chat_mapping_from_options, load_chat_mapping

    base = load_chat_mapping(args.mapping) if args.mapping else ChatMapping()
    return base.merged(chat_mapping_from_options(messages_key=args.messages_key, id_key=args.id_key,
                                                 keep=args.keep, role_map=args.role_map or ()))


def _cmd_import(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from evalkit.io.atomic import terminate_as_exit
    from evalkit.io.outputs import guard_outputs
    from evalkit.traces import (
        ImportReport,
        SkippedRecord,
        iter_traces,
        partition_key,
        write_dataset,
        write_jsonl,
        write_parquet,
    )

    out = Path(args.out)
    if args.partition_by is not None:
        partition_key(args.partition_by)  # before reading anything, like the checks of a file below
        if out.exists() and not out.is_dir():
            raise InputError("--partition-by writes a folder of Parquet files, and this is a file; give a "
                             "folder", file=str(out))
    elif args.overwrite:
        raise InputError("--overwrite replaces a dataset folder; it goes with --partition-by (a file is "
                         "always replaced, atomically)")
    elif out.suffix.lower() not in (".jsonl", ".parquet"):
        raise InputError("output must end in .jsonl or .parquet (or give --partition-by to write a folder)",
                         file=str(out))
    quarantine = out.with_name(out.name + ".quarantine.jsonl")
    # Before reading anything: a bad --out should not cost a long read first.
    guard_outputs({"--out": out, "the quarantine file": quarantine}, {"SRC": args.sources, "--mapping": args.mapping},
                  folders=["--out"] if args.partition_by is not None else [])
    mapping = _chat_mapping(args)
    report = ImportReport()
    skipped: list[SkippedRecord] = []

    def quarantined(record: SkippedRecord) -> None:
        skipped.append(record)
        report.skipped("invalid records", hint=f"written to {quarantine}")

    on_invalid = quarantined if args.skip_invalid else None
    seen: set[str] = set()

    def of_source(src: str):
        """The traces of one source; with --skip-invalid, a file no format fits is left out and counted."""
        try:
            yield from iter_traces(src, args.format, on_invalid=on_invalid, report=report, mapping=mapping)
        except UnknownTraceFormat as exc:
            if not args.skip_invalid:
                raise
            report.skipped("files no trace format fits (--skip-invalid)",
                           hint="pass --format, or import them on their own to see why")
            report.warn(f"left out: {exc.render()}")

    def traces():
        with tqdm(desc="importing", unit=" traces", disable=None, file=sys.stderr) as bar:
            for src in args.sources:
                for trace in of_source(src):
                    if trace.id in seen:
                        raise InputError(f"duplicate trace id {trace.id!r} (already imported)", file=src)
                    seen.add(trace.id)
                    bar.update(1)
                    yield trace
        if report.empty_files and not args.allow_empty:
            raise _EmptySources
        if not seen and (skipped or report.skips) and not args.allow_empty:
            raise _NothingImported

    writer = write_parquet if out.suffix.lower() == ".parquet" else write_jsonl
    partitions: dict[str | None, int] = {}
    if args.partition_by is not None:
        def writer(traces, out):
            return write_dataset(traces, out, args.partition_by, overwrite=args.overwrite,
                                 partitions=partitions)
    try:
        with terminate_as_exit():
            count = writer(traces(), out)
    except _NothingImported:
        _print_report(args, report, None, {})
        _quarantine(skipped, quarantine)
        print(f"error: every record was invalid (or every file unreadable as traces): nothing imported, {out} not "
              "written (pass --allow-empty to write an empty file even so)", file=sys.stderr)
        return 1
    except _EmptySources:
        _print_report(args, report, None, {})
        print(f"warning: {', '.join(report.empty_files)}: empty file, no trace records; nothing written "
              "(pass --allow-empty to accept empty sources)", file=sys.stderr)
        return 1
    _quarantine(skipped, quarantine)
    _print_report(args, report, (count, out), partitions)
    return 0


def _quarantine(skipped: list, quarantine: Path) -> None:
    """Write the skipped records beside the output, or remove an earlier import's when none was skipped."""
    from evalkit.io.atomic import atomic_write_text
    from evalkit.io.canonical import canonical_line

    if skipped:
        atomic_write_text(quarantine, "".join(
            canonical_line({"error": s.error.render(), "file": s.error.file, "line": s.error.line,
                            "record": s.value}) for s in skipped))
        print(f"skipped {len(skipped)} invalid record{'s' if len(skipped) != 1 else ''}; "
              f"they are in {quarantine}", file=sys.stderr)
    elif quarantine.is_file():
        # Left by an earlier import of the same output; kept, it would describe records this import
        # never skipped.
        quarantine.unlink()
        print(f"removed {quarantine} from an earlier import: this import skipped nothing", file=sys.stderr)


def _print_report(args: argparse.Namespace, report: ImportReport, written: tuple[int, Path] | None,
                  partitions: dict[str | None, int]) -> None:
    from evalkit.io.canonical import canonical_dumps

    if args.json:
        obj = report.to_json_obj()
        obj["out"] = None if written is None else str(written[1])
        if args.partition_by is not None and written is not None:
            obj["partitions"] = [{"value": v, "traces": n} for v, n in sorted(partitions.items(), key=_by_value)]
        sys.stdout.write(canonical_dumps(obj))
        return
    if written is not None:
        count, out = written
        print(f"imported {plural(count, 'trace')} into {out}", end="")
        if args.partition_by is None or not partitions:
            print()
        else:
            # polars, imported only for a dataset
            from evalkit.traces import DAY, NULL_PARTITION, partition_key

            key = partition_key(args.partition_by)
            print(f", in {plural(len(partitions), 'partition')}:")
            rows = [(f"{key}={NULL_PARTITION if v is None else v}", n, v is None)
                    for v, n in sorted(partitions.items(), key=_by_value)]
            width = max(len(label) for label, _, _ in rows)
            digits = max(len(str(n)) for _, n, _ in rows)
            why = "no observation has a start time" if key == DAY else f"no metadata.{key}, or null"
            for label, n, missing in rows:
                print(f"  {label:<{width}}  {n:>{digits}} trace{'' if n == 1 else 's'}"
                      + (f" ({why})" if missing else ""))
    for line in report.render():
        print(line)


def _by_value(item: tuple[str | None, int]) -> tuple[bool, str]:
    """Partition values in order, the traces without one last."""
    return item[0] is None, item[0] or ""


def _print_stats(stats: dict) -> None:
    print(f"{plural(stats['traces'], 'trace')}, {plural(stats['observations'], 'observation')}, "
          f"{plural(stats['traces_with_errors'], 'trace')} with errors")
    for title, key in (("by type", "by_type"), ("tools", "tools"), ("models", "models"), ("levels", "levels")):
        if stats[key]:
            print(f"\n{title}:")
            for name, n in list(stats[key].items())[:15]:
                print(f"  {n:>8}  {name}")
    timed = {t: d for t, d in stats["latency_ms_by_type"].items() if d.get("count")}
    if not timed:
        print("\nlatency: no observation has both a start and an end time")
    else:
        print("\nlatency (ms) by type:")
        print(f"  {'type':<12}{'count':>8}{'p50':>12}{'p90':>12}{'p99':>12}{'max':>12}")
        for t, d in timed.items():
            print(f"  {t:<12}{d['count']:>8}{d['p50']:>12}{d['p90']:>12}{d['p99']:>12}{d['max']:>12}")
    tok = stats["tokens"]
    # A source may count one side only (input tokens without output tokens): say what is counted.
    sides = [f"{side} p50 {tok[side]['p50']}" for side in ("input", "output") if tok[side].get("count")]
    if tok["total_sum"]:
        sides.append(f"total {tok['total_sum']:.0f}")
    if sides:
        print(f"\ntokens per generation: {', '.join(sides)}")


def _cmd_stats(args: argparse.Namespace) -> int:
    from evalkit.io.canonical import canonical_dumps
    from evalkit.traces import (
        is_trace_dataset,
        iter_traces,
        require_traces,
        stats_json,
        to_frame,
        trace_stats,
    )

    require_traces(args.file)
    if is_trace_dataset(args.file):  # a partitioned dataset: streamed queries, never every trace in memory
        if args.format not in ("auto", "evalkit"):
            raise InputError(f"a folder is read as an evalkit trace dataset, not {args.format!r}",
                             file=args.file)
        stats = trace_stats(args.file)
    else:
        traces = list(iter_traces(args.file, args.format))
        stats = trace_stats(to_frame(traces), n_traces=len(traces))
    if args.json:
        sys.stdout.write(canonical_dumps(stats_json(stats)))
    else:
        _print_stats(stats)
    return 0


def add_traces_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``traces import`` and ``traces stats`` to the ``evalkit`` command."""
    tsub = add_command_group(sub, "traces", help="import traces from any source; summarise them",
                             description="Import traces into evalkit's format, or summarise a trace file.")

    p = tsub.add_parser("import", help="convert trace files into one native .jsonl or .parquet file",
                        description="Read Langfuse exports, OpenTelemetry (OTLP JSON, span lists), OpenAI "
                                    "or Anthropic chat logs, single-turn prompt/response records (JSONL, JSON "
                                    "or CSV) or evalkit files, and write them as one evalkit file.")
    p.add_argument("sources", nargs="+", metavar="SRC", help="trace files to read")
    add_trace_format_option(p)
    p.add_argument("--out", required=True, metavar="FILE", help="output file, .jsonl or .parquet (a folder "
                                                                "with --partition-by)")
    p.add_argument("--partition-by", metavar="day|FIELD",
                   help="write a partitioned Parquet dataset (a folder, OUT/KEY=VALUE/part-N.parquet) for "
                        "trace sets too large for memory, by the UTC day of each trace's first observation "
                        "or by a trace metadata field; `traces stats` and `flow build` read it lazily")
    p.add_argument("--overwrite", action="store_true",
                   help="with --partition-by: replace the dataset already in the --out folder")
    p.add_argument("--skip-invalid", action="store_true",
                   help="skip malformed records into FILE.quarantine.jsonl, and files no format fits (counted), "
                        "instead of stopping")
    p.add_argument("--allow-empty", action="store_true",
                   help="accept a source with no records, or an import whose every record --skip-invalid left "
                        "out (otherwise nothing is written and the exit code is 1)")
    p.add_argument("--json", action="store_true", help="print the import report as JSON")
    chat = p.add_argument_group("chat logs", "how chat records are laid out (openai-chat and other chat formats; "
                                             "--id-key and --keep apply to single-turn records too)")
    chat.add_argument("--role-map", action="append", metavar="FROM=TO",
                      help="rename a message role before import, e.g. agent=assistant (repeatable)")
    chat.add_argument("--messages-key", metavar="KEY", help="field holding the messages (default: messages)")
    chat.add_argument("--id-key", metavar="KEYS",
                      help="field(s) making the trace id; a comma list makes a composite id like 3/0")
    chat.add_argument("--keep", metavar="FIELDS",
                      help="record fields to keep in trace metadata, comma list (default: all but messages)")
    chat.add_argument("--mapping", metavar="FILE",
                      help="YAML/JSON file with messages_key, id_key, keep, role_map (options override it)")
    p.set_defaults(func=_cmd_import)

    p = tsub.add_parser("stats", help="counts, tools, latency, tokens and errors of a trace file",
                        description="Summarise a trace file: counts per type and name, tools used, latency "
                                    "and token distributions, error levels.")
    p.add_argument("file", metavar="FILE",
                   help="a trace file, or a dataset folder written with --partition-by")
    add_trace_format_option(p)
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.set_defaults(func=_cmd_stats)
