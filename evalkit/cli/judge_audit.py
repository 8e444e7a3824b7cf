"""``evalkit judge audit --pairwise FILE``: is the judge biased by position, by length, or toward its own family?

Thin over :mod:`evalkit.judge.audit`. The ``judge`` group lives in :mod:`evalkit.cli.judge`, which calls
:func:`add_audit_parser` where it creates its subcommands.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import InputError

if TYPE_CHECKING:
    from evalkit.judge import PairwiseJudgment, PairwiseVerbosity, SwapAudit

PAIRWISE_FORMATS = ("llmbar",)
"""Pairwise judgment files the audit reads: LLMBar evaluator ``result.json`` (princeton-nlp/LLMBar)."""

MAX_IDS_SHOWN = 40
"""Position-inconsistent pair ids listed in the text output before '... and N more' (--json lists all)."""


def _share(k: int, n: int) -> str:
    return f"{k / n:.1%}" if n else "n/a"


def _read_pairwise(path: str, fmt: str) -> list[PairwiseJudgment]:
    from evalkit.judge import read_llmbar_pairwise

    readers = {"llmbar": read_llmbar_pairwise}
    judgments = readers[fmt](path)
    if not judgments:
        raise InputError("no pairwise judgments in the file", file=path)
    return judgments


def _inconsistent_ids(judgments: list[PairwiseJudgment]) -> list[str]:
    return [j.pair_id for j in judgments
            if j.winner is not None and j.winner_swapped is not None and j.winner != j.winner_swapped]


def _undecided_ids(judgments: list[PairwiseJudgment]) -> list[str]:
    return [j.pair_id for j in judgments if j.winner is None or j.winner_swapped is None]


def _listed(ids: list[str]) -> str:
    shown = ", ".join(ids[:MAX_IDS_SHOWN])
    return shown + (f" ... and {len(ids) - MAX_IDS_SHOWN} more" if len(ids) > MAX_IDS_SHOWN else "")


def _verbosity_line(order: str, v: PairwiseVerbosity) -> str:
    if not v.pairs:
        return f"  {order}: no labelled, decided pair of unequal length"
    return (f"  {order}: the judge picks the longer answer in {v.judge_longer} of {v.pairs} "
            f"({_share(v.judge_longer, v.pairs)}), the humans in {v.human_longer} "
            f"({_share(v.human_longer, v.pairs)}); McNemar p = {v.p_value:.2g}")


def _text(path: str, fmt: str, judgments: list[PairwiseJudgment], swap: SwapAudit,
          verbosity: tuple[PairwiseVerbosity, PairwiseVerbosity], family: str | None,
          models: tuple[str, str] | None) -> str:
    s = swap
    lines = [f"judge audit of {Path(path).name} ({fmt}): {len(judgments)} pairs, each judged in both orders", ""]
    if s.undecided:
        lines.append(f"undecided in at least one order, left out of the position and agreement figures: "
                     f"{s.undecided} {'pair' if s.undecided == 1 else 'pairs'}: {_listed(_undecided_ids(judgments))}")
        lines.append("")
    lines += ["position (the same pair, the answers swapped):",
              f"  same answer in both orders: {s.consistent} of {s.pairs} pairs; position-inconsistent: "
              f"{s.inconsistent} (flip rate {_share(s.inconsistent, s.pairs)})",
              f"  the first-shown answer won {s.first_wins} of {2 * s.pairs} judgments "
              f"({_share(s.first_wins, 2 * s.pairs)}; exact sign test against 50%: p = {s.first_wins_p:.2g})",
              f"  of the inconsistent pairs, the first-shown answer won both times in {s.first_wins_both_orders}, "
              f"the second-shown in {s.second_wins_both_orders}"]
    if s.inconsistent:
        lines.append(f"  position-inconsistent pairs: {_listed(_inconsistent_ids(judgments))}")
    if s.labelled:
        lines += ["", f"agreement with the human label ({s.labelled} labelled pairs):",
                  f"  in the original order: {s.right_in_order} ({_share(s.right_in_order, s.labelled)})",
                  f"  swapped: {s.right_swapped} ({_share(s.right_swapped, s.labelled)})",
                  f"  in both orders: {s.right_both} ({_share(s.right_both, s.labelled)})"]
    else:
        lines += ["", "agreement with the human label: no pair has a label"]
    lines += ["", "verbosity (labelled pairs of unequal length; judge vs humans picking the longer answer):",
              _verbosity_line("original order", verbosity[0]), _verbosity_line("swapped order", verbosity[1])]
    if models is not None:
        judge_model, agent_model = models
        lines += ["", "self-preference:",
                  f"  warning: {family}" if family else
                  f"  the judge {judge_model!r} and the agent {agent_model!r} are not known to share a model "
                  "family"]
    return "\n".join(lines) + "\n"


def _json(path: str, fmt: str, judgments: list[PairwiseJudgment], swap: SwapAudit,
          verbosity: tuple[PairwiseVerbosity, PairwiseVerbosity], family: str | None,
          models: tuple[str, str] | None) -> dict[str, Any]:
    s = swap

    def verb(v: PairwiseVerbosity) -> dict[str, Any]:
        return {"pairs": v.pairs, "judgeLonger": v.judge_longer, "humanLonger": v.human_longer,
                "pValue": v.p_value}

    return {
        "file": path, "format": fmt, "pairs": len(judgments),
        "position": {"decided": s.pairs, "undecided": s.undecided, "undecidedPairs": _undecided_ids(judgments),
                     "consistent": s.consistent, "inconsistent": s.inconsistent, "flipRate": s.flip_rate,
                     "inconsistentPairs": _inconsistent_ids(judgments), "firstWins": s.first_wins,
                     "judgments": 2 * s.pairs, "firstWinShare": s.first_win_share, "firstWinsP": s.first_wins_p,
                     "firstWinsBothOrders": s.first_wins_both_orders,
                     "secondWinsBothOrders": s.second_wins_both_orders},
        "agreement": {"labelled": s.labelled, "inOrder": s.right_in_order, "swapped": s.right_swapped,
                      "both": s.right_both},
        "verbosity": {"original": verb(verbosity[0]), "swapped": verb(verbosity[1])},
        "selfPreference": None if models is None else {
            "judgeModel": models[0], "agentModel": models[1], "warning": family},
    }


def _cmd_audit(args: argparse.Namespace) -> int:
    from evalkit.io import canonical_dumps
    from evalkit.judge import pairwise_verbosity, same_family_warning, swap_audit

    if (args.judge_model is None) != (args.agent_model is None):
        given, missing = ("--judge-model", "--agent-model") if args.judge_model else ("--agent-model",
                                                                                      "--judge-model")
        raise InputError(f"{given} needs {missing} too: the self-preference check compares the two",
                         path=missing)
    judgments = _read_pairwise(args.pairwise, args.format)
    swap = swap_audit(judgments)
    verbosity = (pairwise_verbosity(judgments), pairwise_verbosity(judgments, swapped=True))
    models = (args.judge_model, args.agent_model) if args.judge_model else None
    family = same_family_warning(*models) if models else None
    if args.json:
        sys.stdout.write(canonical_dumps(_json(args.pairwise, args.format, judgments, swap, verbosity, family,
                                               models)))
    else:
        sys.stdout.write(_text(args.pairwise, args.format, judgments, swap, verbosity, family, models))
    return 0


def add_audit_parser(judge_subparsers: argparse._SubParsersAction) -> None:
    """Add ``judge audit`` to the ``judge`` group's subcommands."""
    p = judge_subparsers.add_parser(
        "audit", help="audit a pairwise judge for position and verbosity bias, and a same-family judge",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Audit a pairwise judge whose every pair was judged in both orders: how often it changes "
                    "its answer when the answers are swapped, whether the first-shown answer wins more than "
                    "half the time, agreement with the human label per order, whether it picks the longer "
                    "answer more often than the humans did, and (with both model ids) whether the judge and "
                    "the agent come from the same model family. Exit code 0, or 1 on bad input.",
        epilog="example:\n  evalkit judge audit --pairwise mt-bench_gpt-4_vanilla-norules_result.json "
               "--format llmbar \\\n      --judge-model gpt-4 --agent-model gpt-4o-mini\n\nSee docs/compare.md "
               "(\"Judge bias audit\").")
    p.add_argument("--pairwise", required=True, metavar="FILE", help="the pairwise judgments, both orders per pair")
    p.add_argument("--format", choices=PAIRWISE_FORMATS, default="llmbar",
                   help="the file's format (default llmbar: an LLMBar evaluator result.json)")
    p.add_argument("--judge-model", metavar="MODEL", help="the judge's model id (with --agent-model)")
    p.add_argument("--agent-model", metavar="MODEL", help="the model id of the agent the judge grades")
    p.add_argument("--json", action="store_true", help="print the figures as JSON (every inconsistent pair)")
    p.set_defaults(func=_cmd_audit)
