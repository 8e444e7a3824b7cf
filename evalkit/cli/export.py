"""``evalkit export otel|langfuse VERDICTS --traces T --out F``, and reading such files back as verdicts.

Thin over :mod:`evalkit.export`. ``verdicts import FILE --from langfuse|otel`` calls
:func:`import_scores_command` here.
"""

from __future__ import annotations

import argparse
import sys

from evalkit.errors import InputError


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _cmd_export(args: argparse.Namespace) -> int:
    from evalkit.export import (
        check_destination,
        check_time,
        read_evaluations,
        send_otlp,
        send_scores,
        write_langfuse,
        write_otlp,
    )
    from evalkit.io.outputs import guard_outputs

    guard_outputs({"--out": args.out}, {"VERDICTS": args.verdicts, "--traces": args.traces, "--labels": args.labels})
    check_time(args.time)
    if args.endpoint:
        check_destination(args.target, args.endpoint)
    evaluations = read_evaluations(args.verdicts, args.traces, args.labels)
    judged = sum(ev.kind == "judge" for ev in evaluations)
    what = f"{_plural(judged, 'verdict')}" + (f" and {_plural(len(evaluations) - judged, 'label')}"
                                              if args.labels else "")
    if args.target == "otel":
        written, export = write_otlp(evaluations, args.out, at=args.time)
        kept = written.traces - written.derived_trace_ids
        ids = f"; OpenTelemetry ids kept for {kept} of {_plural(written.traces, 'trace')}" + (
            f", {written.derived_trace_ids} had none and get ids derived from the evalkit ids (SHA-256)"
            if written.derived_trace_ids else "")
        events = _plural(written.evaluations, "gen_ai.evaluation.result event")
        print(f"wrote {events} ({what}) to {args.out}{ids}")
        if args.endpoint:
            requests = send_otlp(export.spans, args.endpoint)
            print(f"sent {_plural(len(export.spans), 'span')} to {args.endpoint} in "
                  f"{_plural(requests, 'OTLP/HTTP request')}")
        return 0
    written, batch = write_langfuse(evaluations, args.out, at=args.time)
    kinds = sorted({e["body"]["dataType"] for e in batch["batch"]})
    print(f"wrote {_plural(written.evaluations, 'Langfuse score')} ({what}; {'/'.join(kinds) or 'none'}) "
          f"on {_plural(written.traces, 'trace')} to {args.out}")
    if args.endpoint:
        sent = send_scores(batch, args.endpoint)
        print(f"sent {_plural(sent, 'score')} to {args.endpoint}")
    return 0


def add_export_parser(sub: argparse._SubParsersAction) -> None:
    """Add the ``export`` command to the ``evalkit`` command's subparsers."""
    p = sub.add_parser(
        "export",
        help="send verdicts (and labels) to OpenTelemetry or Langfuse, attached to the traces they judge",
        description="Write verdicts as OpenTelemetry gen_ai.evaluation.result events (OTLP JSON) or as "
                    "Langfuse scores (an ingestion-API batch), each on the trace it judges; with --endpoint, "
                    "also send them (OTLP/HTTP with the OpenTelemetry SDK exporter; Langfuse's ingestion API "
                    "with LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY). See docs/export.md.")
    p.add_argument("target", choices=("otel", "langfuse"), help="where the results are going")
    p.add_argument("verdicts", metavar="VERDICTS", help="CriterionVerdict JSONL")
    p.add_argument("--labels", metavar="FILE", help="HumanLabel JSONL to export too (as '<criterion>.human')")
    p.add_argument("--traces", required=True, metavar="FILE",
                   help="the traces the verdicts judge (any format evalkit imports)")
    p.add_argument("--out", required=True, metavar="FILE", help="the export file (JSON) to write")
    p.add_argument("--endpoint", metavar="URL",
                   help="also send: an OTLP/HTTP collector (http://host:4318) or a Langfuse host")
    p.add_argument("--time", metavar="ISO8601",
                   help="time to stamp evaluations of traces that record no time "
                        "(others use the trace's end)")
    p.set_defaults(func=_cmd_export)


def add_import_options(p: argparse.ArgumentParser) -> None:
    """``verdicts import`` options for files of scores made elsewhere."""
    p.add_argument("--from", dest="source", choices=("table", "langfuse", "otel"), default="table",
                   help="table (default): a CSV/JSONL/JSON table; langfuse: Langfuse scores (trace "
                        "export, ingestion batch, scores API page); otel: gen_ai.evaluation.result events "
                        "in OTLP JSON")
    p.add_argument("--score", action="append", metavar="NAME",
                   help="with --from langfuse|otel: only scores of this name (repeatable; default all)")
    p.add_argument("--pass-at-most", type=float, metavar="X",
                   help="with --from langfuse|otel: a numeric score <= X is a pass (e.g. hallucination)")
    p.add_argument("--pass-at-least", type=float, metavar="X",
                   help="with --from langfuse|otel: a numeric score >= X is a pass (e.g. relevance)")


def refuse_score_options(args: argparse.Namespace) -> None:
    """A table import given an option that only reads score files: an error, not an ignored flag."""
    for option, value in (("--score", args.score), ("--pass-at-most", args.pass_at_most),
                          ("--pass-at-least", args.pass_at_least)):
        if value is not None:
            raise InputError(f"{option} reads Langfuse or OpenTelemetry scores; add --from langfuse or "
                             "--from otel", path=option)


def import_scores_command(args: argparse.Namespace) -> int:
    """Read Langfuse scores or OTel evaluation events as verdicts and append them to ``--into``."""
    from evalkit.calibration import append_records, parse_value_map
    from evalkit.contracts.verdict import CriterionVerdict
    from evalkit.export import ScoreReading, verdicts_from_langfuse, verdicts_from_otel

    for option, value in (("--result-col", args.result_col), ("--id-col", args.id_col),
                          ("--critique-col", args.critique_col), ("--confidence-col", args.confidence_col),
                          ("--values", args.values), ("--criterion", args.criterion)):
        if value:
            raise InputError(f"{option} is for tables; a {args.source} file names its scores and traces "
                             "itself", path=option)
    reading = ScoreReading(value_map=parse_value_map(args.map, ("pass", "fail", "uncertain")),
                           pass_at_most=args.pass_at_most, pass_at_least=args.pass_at_least,
                           names=frozenset(args.score) if args.score else None)
    read = verdicts_from_langfuse if args.source == "langfuse" else verdicts_from_otel
    found = read(args.file, reading)
    done = append_records(args.into, found.verdicts, CriterionVerdict)
    if done.cut_off_line is not None:
        print(f"warning: {args.into}: line {done.cut_off_line}, cut off by an interrupted write, was dropped",
              file=sys.stderr)
    names: dict[str, list[str]] = {}
    for v in found.verdicts:
        names.setdefault(v.criterion_id, []).append(v.result)
    per_name = "; ".join(
        f"{n}: {r.count('pass')} pass, {r.count('fail')} fail, {r.count('uncertain')} uncertain"
        for n, r in sorted(names.items()))
    left = [f"{_plural(count, what)} left out" for count, what in (
        (found.human_labels, "human label"), (found.other_names, "score of another name"),
        (found.duplicates, "repeated score")) if count]
    print(f"appended {_plural(done.appended, 'verdict')} from {args.file} to {args.into}"
          + (f" ({done.unchanged} already there)" if done.unchanged else "")
          + (f": {per_name}" if per_name else "") + (f"; {', '.join(left)}" if left else ""))
    return 0
