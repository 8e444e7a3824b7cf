"""The methodology review applied to runs: MR-1..9 as advisory findings, never a gate.

evalkit computes the evidence it can: fork frequencies (MR-1, dead or rare forks), outputs that never
thread into a later step (MR-2, from flow graphs), decision mismatches (MR-7/8/9 for signal, confidence
and focus nodes, MR-6 for the other nodes), repeat variance (MR-6). The judge, when given, writes the
finding of the items evalkit has no numbers for (MR-3, MR-4, MR-5) and may read the computed evidence
of every other item; without one those items say so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from evalkit.checks.tree import DecisionCheck, ForkCount
from evalkit.checks.variance import RepeatStability
from evalkit.contracts.behavior_tree import BehaviorTree
from evalkit.contracts.methodology import MethodologyFamily, MethodologyItem, MethodologyReview
from evalkit.flow import AnyFlowGraph

ITEMS: dict[str, tuple[MethodologyFamily, str, str]] = {
    "MR-1": ("decision-tree-fitness", "Forks that never or rarely fire", "behavior-tree + fork frequencies"),
    "MR-2": ("data-flow-efficiency", "Outputs never used downstream", "flow graphs (unthreaded outputs)"),
    "MR-3": ("methodology-fitness", "Method fit for the task", "judge over the traces"),
    "MR-4": ("sequence-soundness", "Step order sound", "judge over the traces"),
    "MR-5": ("process-self-feedback", "The process learns from its own results", "judge over the traces"),
    "MR-6": ("conformance-vs-fitness", "Conformance vs fitness", "decision mismatches + repeat variance"),
    "MR-7": ("signal-selection", "Signal selection", "decision checks of signal-tier nodes"),
    "MR-8": ("confidence-derivation", "Confidence derivation", "decision checks of confidence-basis nodes"),
    "MR-9": ("focus-determination", "Focus determination", "decision checks of focus nodes"),
}
"""Each item's family, title and what it reads (MR-n is the n-th family of the methodology-review shape)."""

_NODE_ITEM = {"signal-tier": "MR-7", "confidence-basis": "MR-8", "focus": "MR-9"}

ReviewJudge = Callable[[str, str, list[str]], str | None]
"""``(item id, title, computed evidence) -> finding`` or None when the judge has none."""


def _forks(forks: Sequence[ForkCount]) -> tuple[list[str], str | None]:
    lines = []
    for f in forks:
        if f.taken is None:
            continue
        if f.dead or f.rare:
            what = "never taken" if f.dead else f"taken {f.taken}/{f.reached} ({f.share:.1%})"
            lines.append(f"{f.node_id} -> {f.to} ({f.edge_id}): {what}")
    uncounted = sum(1 for f in forks if f.taken is None)
    if uncounted:
        lines.append(f"{uncounted} fork(s) have no takenWhen in the tree: not counted")
    flagged = sum(1 for f in forks if f.taken is not None and (f.dead or f.rare))
    return lines, (f"{flagged} dead or rare fork(s): candidates to merge or drop" if flagged else None)


def _unthreaded(graphs: Iterable[AnyFlowGraph]) -> tuple[list[str], str | None]:
    counts: Counter[tuple[str, str]] = Counter()
    n = 0
    for g in graphs:
        n += 1
        for u in g.unthreaded_outputs:
            counts[(u.name, u.slot)] += 1
    lines = [f"{name}.{slot} unthreaded in {k}/{n} traces" for (name, slot), k in counts.most_common(10)]
    if len(counts) > 10:
        lines.append(f"... and {len(counts) - 10} more output slots")
    return lines, (f"{len(counts)} output slot(s) never reach a later step in some traces" if counts else None)


def _mismatches(checks: Sequence[DecisionCheck], tree: BehaviorTree) -> dict[str, list[str]]:
    kinds = {n.node_id: n.decision_type for n in tree.nodes}
    table: Counter[tuple[str, str | None, str]] = Counter()
    for c in checks:
        table[(c.node_id, c.scenario_id, c.status)] += 1
    out: dict[str, list[str]] = {}
    for (node, scenario), n_bad in Counter({(k[0], k[1]): v for k, v in table.items() if k[2] == "mismatch"}).items():
        total = sum(v for k, v in table.items() if k[0] == node and k[1] == scenario)
        item = _NODE_ITEM.get(kinds.get(node, ""), "MR-6")
        out.setdefault(item, []).append(f"{node} / {scenario}: observed decision differs in {n_bad}/{total} traces")
    return out


def review_runs(tree: BehaviorTree | None = None, *, checks: Sequence[DecisionCheck] = (),
                forks: Sequence[ForkCount] = (), graphs: Iterable[AnyFlowGraph] = (),
                stability: RepeatStability | None = None, judge: ReviewJudge | None = None,
                subject: str, version: str, generated_at: str) -> MethodologyReview:
    """The MR-1..9 findings of a run, every item advisory.

    Args:
        tree: the behavior tree the checks and forks came from (needed for MR-7/8/9 routing).
        checks: decision checks from :func:`evalkit.checks.compare_tree`.
        forks: fork counts from the same call.
        graphs: flow graphs of the traces.
        stability: repeat variance from :func:`evalkit.checks.repeat_stability`.
        judge: writes findings where evalkit computed none.
        subject: subject name; version: the review's version; generated_at: the injected timestamp.
    """
    evidence: dict[str, list[str]] = {k: [] for k in ITEMS}
    findings: dict[str, str | None] = dict.fromkeys(ITEMS)
    evidence["MR-1"], findings["MR-1"] = _forks(forks)
    evidence["MR-2"], findings["MR-2"] = _unthreaded(graphs)
    if tree is not None:
        for item, lines in _mismatches(checks, tree).items():
            evidence[item] += lines
            findings[item] = f"{len(lines)} node/scenario pair(s) where the observed decision differs"
    if stability is not None:
        worst = stability.unstable[:5]
        evidence["MR-6"] += [f"case {c.case_id} / {c.criterion_id}: {c.passed} pass, {c.failed} fail over "
                             f"{c.repeats} repeats" for c in worst]
        state = "stable" if stability.stable else f"not stable ({len(stability.unstable)} case/criterion cells vary)"
        evidence["MR-6"].append(f"repeats {state}; max variance {stability.max_variance:.3f} "
                                f"(threshold {stability.threshold})")
    items = []
    for item_id, (family, title, reads) in ITEMS.items():
        finding = findings[item_id]
        if judge is not None:
            finding = judge(item_id, title, evidence[item_id]) or finding
        if finding is None:
            finding = ("nothing flagged by the computed evidence" if evidence[item_id]
                       else "no evidence computed and no judge given: not reviewed")
        items.append(MethodologyItem(id=item_id, title=title, reads=reads, family=family, advisory=True,
                                     how="computed by evalkit" if evidence[item_id] else "judge",
                                     finding=finding, evidence=evidence[item_id] or None))
    return MethodologyReview(subject=subject, version=version, generated_at=generated_at, items=items)
