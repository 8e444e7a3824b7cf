"""``evalkit tree check TREE TRACES``: the behavior tree's expected decisions against the traces (thin over
:func:`evalkit.checks.tree_check.check_tree`).

Exit 0 when it ran (mismatches and unchecked nodes are printed, not failures); with ``--gate``, 3 when a
node mismatched on some trace or could not be checked; 1 on bad input.
"""

from __future__ import annotations

import argparse
import json

from evalkit.cli.parsers import add_command_group

GATE_EXIT = 3
"""Exit code of ``tree check --gate`` when a decision mismatched or a node was not checked."""


def _cmd_check(args: argparse.Namespace) -> int:
    from evalkit.checks import check_tree, render_tree_check
    from evalkit.contract_files import read_model
    from evalkit.contracts.behavior_tree import BehaviorTree
    from evalkit.traces import iter_traces

    check = check_tree(read_model(args.tree, BehaviorTree), iter_traces(args.traces))
    if args.json:
        print(json.dumps(check.to_json_obj(), indent=2, sort_keys=True))
    else:
        print(render_tree_check(check))
    gaps = check.not_checked or any(n.mismatches for n in check.nodes)
    return GATE_EXIT if args.gate and gaps else 0


def add_tree_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``evalkit tree check``."""
    commands = add_command_group(sub, "tree", help="the behavior tree against traces: expected vs observed "
                                                   "decisions per node")
    p = commands.add_parser(
        "check", help="expected vs observed decision per node and scenario, dead and rare forks",
        description="Compare each node of a behavior tree with what the traces did: nodes the tree maps to an "
                    "observation (observe, observedWhen, expectedObserved) are compared by code, per scenario; "
                    "a node without that mapping is a judge-track node and is listed as not checked (this "
                    "command runs no judge). Forks with takenWhen are counted (dead: never taken; rare: under "
                    "2%%). See docs/checks.md.")
    p.add_argument("tree", metavar="TREE", help="a behavior-tree file (JSON or YAML)")
    p.add_argument("traces", metavar="TRACES", help="the traces (any format evalkit imports)")
    p.add_argument("--json", action="store_true", help="print the check as JSON (every mismatch)")
    p.add_argument("--gate", action="store_true",
                   help=f"exit {GATE_EXIT} when a decision mismatched or a node could not be checked")
    p.set_defaults(func=_cmd_check)
