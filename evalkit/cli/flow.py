"""``evalkit flow build``: one flow graph per trace, optionally diffed against an expected flow; ``evalkit flow
ui-slots``: the expected UI slots' computed values looked for in an HTML page."""

from __future__ import annotations

import argparse
import functools
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.cli.parsers import add_trace_format_option
from evalkit.errors import InputError
from evalkit.flow import DEFAULT_MIN_THREAD_LEN, SEMANTICS

if TYPE_CHECKING:
    from evalkit.contracts.flow import ExpectedEdge, ExpectedFlow
    from evalkit.flow import FlowDiff


def _diff_path(out: Path) -> Path:
    return out.with_name(out.name[: -len(".jsonl")] + ".diff.jsonl")


def _key(edge: ExpectedEdge) -> tuple[str, str, str | None]:
    return edge.from_tool, edge.to_tool, edge.slot


def _print_expected_summary(diffs: list[FlowDiff], expected: ExpectedFlow) -> None:
    satisfied: Counter[tuple[str, str, str | None]] = Counter()
    applicable: Counter[tuple[str, str, str | None]] = Counter()
    for diff in diffs:
        satisfied.update(_key(edge) for edge in diff.satisfied)
        applicable.update(_key(edge) for edge in [*diff.satisfied, *diff.missing])
    complete = sum(1 for diff in diffs if not diff.missing)
    print(f"expected flow: {len(expected.edges)} edges; {complete} of {len(diffs)} traces show every edge "
          "that applies to them (both ends ran)")
    print(f"  {'shown':>6}/{'applies':<7} edge")
    for edge in expected.edges:
        slot = f" [{edge.slot}]" if edge.slot else ""
        key = _key(edge)
        print(f"  {satisfied[key]:>6}/{applicable[key]:<7} {edge.from_tool} -> {edge.to_tool}{slot}")


def _cmd_build(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from evalkit.cli.cluster import check_partition_size, cluster_client, on_cluster
    from evalkit.contract_files import read_model
    from evalkit.contracts.flow import ExpectedFlow
    from evalkit.distributed import (
        FlowOptions,
        FlowPartition,
        build_flow_work,
        run_partitions,
        run_partitions_here,
        source_partitions,
    )
    from evalkit.flow import dispatch_tools
    from evalkit.io import atomic_write_text
    from evalkit.io.canonical import compact_sorted_json as sorted_json
    from evalkit.traces import require_traces

    out = Path(args.out)
    if out.suffix.lower() != ".jsonl":
        raise InputError("output must end in .jsonl", file=str(out))
    if args.min_thread_len < 1:
        raise InputError(f"--min-thread-len must be at least 1, got {args.min_thread_len}")
    check_partition_size(args)
    from evalkit.io.outputs import guard_outputs

    # With --expected, the diffs are written too, beside --out.
    guard_outputs({"--out": out, "the diff file (OUT.diff.jsonl)": _diff_path(out) if args.expected else None},
                  {"TRACES": args.traces, "--expected": args.expected})
    require_traces(args.traces)  # no traces, no graphs: an empty --out and exit 0 would read as done
    expected = read_model(args.expected, ExpectedFlow) if args.expected else None
    options = FlowOptions(dispatch_tools(expected, args.dispatch), args.min_thread_len, args.semantics, expected)

    total = FlowPartition()
    task = functools.partial(build_flow_work, options=options)
    with tqdm(desc="building", unit=" traces", disable=None, file=sys.stderr) as bar:
        if not on_cluster(args):  # this process reads its runs of lines as a worker would
            work = source_partitions(args.traces, args.format, args.partition_size, workers_read_files=True)
            summaries = run_partitions_here(task, work, out, on_done=bar.update)
        else:
            # The same traces in the same order, results merged in partition order: the same bytes.
            with cluster_client(args) as client:
                # Local workers see the files: they read native JSONL lines and write their parts themselves.
                local = args.workers is not None
                work = source_partitions(args.traces, args.format, args.partition_size,
                                         workers_read_files=local)
                summaries = run_partitions(client, task, work, out, on_done=bar.update, workers_write=local)
    for summary in summaries:
        total.add(summary)
    graphs, edges, unthreaded, terminal, diffs = (total.graphs, total.edges, total.unthreaded, total.terminal,
                                                  total.diffs)
    ends = "" if args.semantics == "mutagent" else f", {terminal} terminal (end products, not dropped)"
    print(f"built {graphs} flow graph{'s' if graphs != 1 else ''} ({edges} edges, {unthreaded} unthreaded "
          f"output{'s' if unthreaded != 1 else ''}{ends}) into {out}")
    if expected is not None:
        diff_out = _diff_path(out)
        atomic_write_text(diff_out, "".join(sorted_json(diff.to_json_obj()) + "\n" for diff in diffs))
        _print_expected_summary(diffs, expected)
        print(f"per-trace diffs (satisfied, missing, not applicable, unexpected) are in {diff_out}")
    return 0


def add_flow_parser(sub: argparse._SubParsersAction) -> None:
    from evalkit.cli.cluster import add_cluster_arguments

    flow = sub.add_parser("flow", help="build information-flow graphs of traces; diff them against the "
                                       "expected flow",
                          description="Where each value an observation produced went: one graph per trace.")
    fsub = flow.add_subparsers(dest="flow_command", metavar="COMMAND", required=True)

    p = fsub.add_parser("build", help="one flow graph per trace, as JSONL",
                        description="Build the flow graph of every trace (nodes = observations, an edge = a "
                                    "produced value found in a later observation's input) and write one "
                                    "graph per line. With --expected, also diff each graph against the "
                                    "expected flow: a summary is printed and the diffs are written beside "
                                    "the output, as OUT.diff.jsonl.")
    p.add_argument("traces", nargs="+", metavar="TRACES",
                   help="trace files to read (any format evalkit imports), or trace dataset folders")
    p.add_argument("--out", required=True, metavar="FILE", help="output file, .jsonl")
    p.add_argument("--expected", metavar="FILE", help="an expected-flow file (JSON or YAML) to diff against; "
                                                      "its dispatch tools count as --dispatch")
    p.add_argument("--dispatch", nargs="+", action="extend", default=[], metavar="NAME",
                   help="names of tools that dispatch a sub-agent: their edges are handoffs")
    add_trace_format_option(p)
    p.add_argument("--min-thread-len", type=int, default=DEFAULT_MIN_THREAD_LEN, metavar="N",
                   help="ignore produced values shorter than N characters "
                        f"(default {DEFAULT_MIN_THREAD_LEN})")
    p.add_argument("--semantics", choices=SEMANTICS, default=SEMANTICS[0],
                   help="received (default): a value threads when the consumer received it (strings as "
                        "they are, JSON text decoded) and end products are terminal, not unthreaded; "
                        "mutagent: the reference method exactly (the value's JSON text in the input's)")
    add_cluster_arguments(p)
    p.set_defaults(func=_cmd_build)

    p = fsub.add_parser("ui-slots", help="values the traces computed for the expected UI slots, looked for in "
                                         "an HTML page",
                        description="For each trace and each expectedUiSlots slot of the expected flow, the last "
                                    "value the trace produced under that name (an observation output key) must "
                                    "appear in the page's visible text (entities decoded, whitespace collapsed, "
                                    "case kept): a value computed but absent from the page is a missing-data "
                                    "leak. Exit 0 when every value is shown, 3 when one is missing, 1 on bad input.")
    p.add_argument("expected", metavar="EXPECTED", help="the expected-flow file (its expectedUiSlots)")
    p.add_argument("traces", metavar="TRACES", help="the traces whose computed values the page should show")
    p.add_argument("page", metavar="PAGE", help="the HTML page: the subject's artifact, or a run's report")
    p.set_defaults(func=_cmd_ui_slots)


UI_SLOTS_MISSING_EXIT = 3
"""Exit code of ``flow ui-slots`` when a computed value is absent from the page."""


def _cmd_ui_slots(args: argparse.Namespace) -> int:
    from evalkit.checks import check_ui_slots
    from evalkit.contract_files import read_model
    from evalkit.contracts.flow import ExpectedFlow
    from evalkit.traces import iter_traces

    expected = read_model(args.expected, ExpectedFlow)
    try:
        html = Path(args.page).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the page: {exc}", file=args.page) from None
    check = check_ui_slots(expected, iter_traces(args.traces), html)
    print("\n".join(check.lines()))
    return 0 if check.ok else UI_SLOTS_MISSING_EXIT
