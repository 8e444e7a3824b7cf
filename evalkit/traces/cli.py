"""``evalkit traces import`` and ``evalkit traces stats``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.io.errors import InputError


def _cmd_import(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from evalkit.io.atomic import atomic_write_text
    from evalkit.io.canonical import canonical_line
    from evalkit.traces.formats import SkippedRecord, iter_traces
    from evalkit.traces.native import write_jsonl, write_parquet

    out = Path(args.out)
    if out.suffix.lower() not in (".jsonl", ".parquet"):
        raise InputError("output must end in .jsonl or .parquet", file=str(out))
    skipped: list[SkippedRecord] = []
    on_invalid = skipped.append if args.skip_invalid else None
    seen: set[str] = set()

    def traces():
        with tqdm(desc="importing", unit=" traces", disable=None, file=sys.stderr) as bar:
            for src in args.sources:
                for trace in iter_traces(src, args.format, on_invalid=on_invalid):
                    if trace.id in seen:
                        raise InputError(f"duplicate trace id {trace.id!r} (already imported)", file=src)
                    seen.add(trace.id)
                    bar.update(1)
                    yield trace

    writer = write_parquet if out.suffix.lower() == ".parquet" else write_jsonl
    count = writer(traces(), out)
    print(f"imported {count} trace{'s' if count != 1 else ''} into {out}")
    if skipped:
        quarantine = out.with_name(out.name + ".quarantine.jsonl")
        atomic_write_text(quarantine, "".join(
            canonical_line({"error": s.error.render(), "file": s.error.file, "line": s.error.line,
                            "record": s.value}) for s in skipped))
        print(f"skipped {len(skipped)} invalid record{'s' if len(skipped) != 1 else ''}; "
              f"they are in {quarantine}", file=sys.stderr)
    return 0


def _print_stats(stats: dict) -> None:
    print(f"{stats['traces']} traces, {stats['observations']} observations, "
          f"{stats['traces_with_errors']} traces with errors")
    for title, key in (("by type", "by_type"), ("tools", "tools"), ("models", "models"), ("levels", "levels")):
        if stats[key]:
            print(f"\n{title}:")
            for name, n in list(stats[key].items())[:15]:
                print(f"  {n:>8}  {name}")
    print("\nlatency (ms) by type:")
    print(f"  {'type':<12}{'count':>8}{'p50':>12}{'p90':>12}{'p99':>12}{'max':>12}")
    for t, d in stats["latency_ms_by_type"].items():
        if d.get("count"):
            print(f"  {t:<12}{d['count']:>8}{d['p50']:>12}{d['p90']:>12}{d['p99']:>12}{d['max']:>12}")
    tok = stats["tokens"]
    if tok["input"].get("count"):
        print(f"\ntokens per generation: input p50 {tok['input']['p50']}, output p50 {tok['output']['p50']}, "
              f"total {tok['total_sum']:.0f}")


def _cmd_stats(args: argparse.Namespace) -> int:
    from evalkit.io.canonical import canonical_dumps
    from evalkit.traces.formats import iter_traces
    from evalkit.traces.frame import to_frame, trace_stats

    traces = list(iter_traces(args.file, args.format))
    stats = trace_stats(to_frame(traces), n_traces=len(traces))
    if args.json:
        sys.stdout.write(canonical_dumps(stats))
    else:
        _print_stats(stats)
    return 0


def add_traces_parser(sub: argparse._SubParsersAction) -> None:
    from evalkit.traces.formats import FORMATS

    formats = ["auto", *FORMATS]
    traces = sub.add_parser("traces", help="import traces from any source; summarise them",
                            description="Import traces into evalkit's format, or summarise a trace file.")
    tsub = traces.add_subparsers(dest="traces_command", metavar="COMMAND", required=True)

    p = tsub.add_parser("import", help="convert trace files into one native .jsonl or .parquet file",
                        description="Read Langfuse exports, OpenTelemetry (OTLP JSON, span lists), OpenAI "
                                    "chat logs or evalkit files, and write them as one evalkit file.")
    p.add_argument("sources", nargs="+", metavar="SRC", help="trace files to read")
    p.add_argument("--format", choices=formats, default="auto", help="source format (default: sniffed)")
    p.add_argument("--out", required=True, metavar="FILE", help="output file, .jsonl or .parquet")
    p.add_argument("--skip-invalid", action="store_true",
                   help="skip malformed records into FILE.quarantine.jsonl instead of stopping")
    p.set_defaults(func=_cmd_import)

    p = tsub.add_parser("stats", help="counts, tools, latency, tokens and errors of a trace file",
                        description="Summarise a trace file: counts per type and name, tools used, latency "
                                    "and token distributions, error levels.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--format", choices=formats, default="auto", help="source format (default: sniffed)")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.set_defaults(func=_cmd_stats)
