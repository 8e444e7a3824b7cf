"""``evalkit flow build``: one flow graph per trace, optionally diffed against an expected flow."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.errors import InputError

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

    from evalkit.contract_files import read_model
    from evalkit.contracts.flow import ExpectedFlow
    from evalkit.flow import build_flow_graph, diff_expected_flow, flow_graph_line
    from evalkit.io import atomic_write_text, atomic_writer
    from evalkit.io.canonical import compact_sorted_json as sorted_json
    from evalkit.traces import iter_traces

    out = Path(args.out)
    if out.suffix.lower() != ".jsonl":
        raise InputError("output must end in .jsonl", file=str(out))
    if args.min_thread_len < 1:
        raise InputError(f"--min-thread-len must be at least 1, got {args.min_thread_len}")
    expected = read_model(args.expected, ExpectedFlow) if args.expected else None
    dispatch = set(args.dispatch) | set(expected.dispatch_tool_names if expected else ())
    diffs: list[FlowDiff] = []
    graphs = edges = unthreaded = terminal = 0
    with atomic_writer(out, "w") as fh, tqdm(desc="building", unit=" traces", disable=None,
                                             file=sys.stderr) as bar:
        for src in args.traces:
            for trace in iter_traces(src, args.format):
                flow = build_flow_graph(trace, dispatch_tool_names=dispatch, min_thread_len=args.min_thread_len,
                                        semantics=args.semantics)
                fh.write(flow_graph_line(flow))
                graphs += 1
                edges += flow.edge_count
                unthreaded += len(flow.unthreaded_outputs)
                terminal += len(flow.terminal_outputs)
                if expected is not None:
                    diffs.append(diff_expected_flow(flow, expected))
                bar.update(1)
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
    from evalkit.flow import DEFAULT_MIN_THREAD_LEN, SEMANTICS
    from evalkit.traces import FORMATS

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
                   help="trace files to read (any format evalkit imports)")
    p.add_argument("--out", required=True, metavar="FILE", help="output file, .jsonl")
    p.add_argument("--expected", metavar="FILE", help="an expected-flow file (JSON or YAML) to diff against; "
                                                      "its dispatch tools count as --dispatch")
    p.add_argument("--dispatch", nargs="+", action="extend", default=[], metavar="NAME",
                   help="names of tools that dispatch a sub-agent: their edges are handoffs")
    p.add_argument("--format", choices=["auto", *FORMATS], default="auto",
                   help="trace format (default: sniffed)")
    p.add_argument("--min-thread-len", type=int, default=DEFAULT_MIN_THREAD_LEN, metavar="N",
                   help="ignore produced values shorter than N characters "
                        f"(default {DEFAULT_MIN_THREAD_LEN})")
    p.add_argument("--semantics", choices=SEMANTICS, default=SEMANTICS[0],
                   help="received (default): a value threads when the consumer received it (strings as "
                        "they are, JSON text decoded) and end products are terminal, not unthreaded; "
                        "mutagent: the reference method exactly (the value's JSON text in the input's)")
    p.set_defaults(func=_cmd_build)
