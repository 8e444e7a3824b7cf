"""The behavior tree drawn with networkx: the expected forks, what the traces did, mismatches in red.

Each node shows its label and how many traces matched the expected decision there; a node where some
trace's observed decision differs is red. Each fork is labelled with its condition and ``taken/reached``;
its width follows the share of traces that took it, a dead fork is a dashed red line, and a fork code
cannot count (no ``takenWhen``) is dotted grey. Same tree and traces, same bytes (no date, fixed ids).
"""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

from evalkit.checks.tree import DecisionCheck, ForkCount
from evalkit.contracts.behavior_tree import BehaviorTree
from evalkit.io.atomic import atomic_write_bytes

TERMINAL = "TERMINAL"
_MATCH, _MISMATCH, _UNSEEN, _END = "#9ecae1", "#d62728", "#e0e0e0", "#bdbdbd"


def tree_graph(tree: BehaviorTree, decisions: list[DecisionCheck], forks: list[ForkCount]):
    """The tree as a networkx DiGraph: node attrs ``label``, ``match``, ``mismatch``, ``seen``; edge attrs
    ``condition``, ``taken``, ``reached``, ``share``."""
    import networkx as nx

    counts: dict[str, Counter] = {}
    for d in decisions:
        counts.setdefault(d.node_id, Counter())[d.status] += 1
    g = nx.DiGraph()
    for node in tree.nodes:
        c = counts.get(node.node_id, Counter())
        g.add_node(node.node_id, label=node.label, match=c["match"], mismatch=c["mismatch"],
                   seen=c["match"] + c["mismatch"])
    fork_of = {(f.node_id, f.edge_id): f for f in forks}
    for node in tree.nodes:
        for edge in node.edges:
            f = fork_of.get((node.node_id, edge.edge_id))
            to = f"{TERMINAL}:{edge.edge_id}" if edge.to == TERMINAL else edge.to  # one end per fork: a tree
            if to not in g:
                g.add_node(to, label="end" if edge.to == TERMINAL else edge.to, match=0, mismatch=0, seen=0)
            g.add_edge(node.node_id, to, edge_id=edge.edge_id, condition=edge.condition,
                       taken=f.taken if f else None, reached=f.reached if f else 0, share=f.share if f else None)
    return g


def _is_end(name: str) -> bool:
    return name.startswith(f"{TERMINAL}:")


def _layers(g, root: str) -> dict[str, tuple[float, float]]:
    """Top-down positions: a node's row is its longest distance from the root (the end at the bottom)."""
    import networkx as nx

    depth = {root: 0}
    for n in nx.topological_sort(g):
        for m in g.successors(n):
            depth[m] = max(depth.get(m, 0), depth.get(n, 0) + 1)
    bottom = max((d for n, d in depth.items() if not _is_end(n)), default=0) + 1
    for n in depth:
        if _is_end(n):
            depth[n] = bottom
    rows: dict[int, list[str]] = {}
    for n in g.nodes:
        rows.setdefault(depth.get(n, 0), []).append(n)
    pos = {}
    for d, names in rows.items():
        for i, n in enumerate(names):
            pos[n] = ((i + 1) / (len(names) + 1), -float(d))
    return pos


def draw_tree(tree: BehaviorTree, decisions: list[DecisionCheck], forks: list[ForkCount],
              path: str | Path, *, title: str | None = None) -> Path:
    """Draw the tree with the traces' decisions and fork counts to an SVG (or PNG) file, atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import networkx as nx
    from matplotlib import rc_context
    from matplotlib.lines import Line2D

    g = tree_graph(tree, decisions, forks)
    pos = _layers(g, tree.root if tree.root in g else tree.nodes[0].node_id)
    target = Path(path)
    buffer = io.BytesIO()
    with rc_context({"svg.hashsalt": "evalkit-tree", "svg.fonttype": "none"}):
        fig, ax = plt.subplots(figsize=(12, 2.2 * (1 - min(y for _, y in pos.values())) + 1))
        colors = [_END if _is_end(n) else _MISMATCH if g.nodes[n]["mismatch"] else
                  _MATCH if g.nodes[n]["seen"] else _UNSEEN for n in g.nodes]
        nx.draw_networkx_nodes(g, pos, ax=ax, node_color=colors, node_size=900, edgecolors="#555555")
        for u, v, data in g.edges(data=True):
            taken, share = data["taken"], data["share"]
            style, color, width = "solid", "#636363", 1 + 6 * (share or 0)
            if taken is None:
                style, color, width = "dotted", "#bdbdbd", 1.0
            elif taken == 0 and data["reached"]:
                style, color, width = "dashed", _MISMATCH, 1.5
            nx.draw_networkx_edges(g, pos, edgelist=[(u, v)], ax=ax, style=style, edge_color=color, width=width,
                                   arrows=True, arrowsize=14, node_size=900, connectionstyle="arc3,rad=0.08")
        edge_labels = {(u, v): f"{d['condition']}\n" + ("not counted" if d["taken"] is None
                                                         else f"{d['taken']}/{d['reached']}")
                       for u, v, d in g.edges(data=True)}
        nx.draw_networkx_edge_labels(g, pos, edge_labels=edge_labels, ax=ax, font_size=7, label_pos=0.55,
                                     bbox={"boxstyle": "round", "fc": "white", "ec": "none", "alpha": 0.8})
        for n, (x, y) in pos.items():
            d = g.nodes[n]
            counts = f"\n{d['match']} match / {d['mismatch']} mismatch" if d["seen"] else ""
            ax.text(x, y + 0.22, f"{d['label']}{counts}", ha="center", va="bottom", fontsize=8)
        ax.legend(handles=[
            Line2D([], [], marker="o", linestyle="", color=_MATCH, label="decisions match the expected"),
            Line2D([], [], marker="o", linestyle="", color=_MISMATCH, label="some decision differs"),
            Line2D([], [], marker="o", linestyle="", color=_UNSEEN, label="not observed by code"),
            Line2D([], [], color="#636363", label="fork taken (width: share)"),
            Line2D([], [], color=_MISMATCH, linestyle="dashed", label="dead fork (never taken)"),
            Line2D([], [], color="#bdbdbd", linestyle="dotted", label="not counted (no takenWhen)"),
        ], loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        ax.set_title(title or f"Behavior tree {tree.subject} {tree.version}: expected forks vs the traces",
                     fontsize=10, loc="left")
        ax.margins(x=0.08, y=0.15)
        ax.axis("off")
        fmt = "svg" if target.suffix.lower() == ".svg" else "png"
        fig.savefig(buffer, format=fmt, metadata={"Date": None} if fmt == "svg" else {"Software": None},
                    bbox_inches="tight")
        plt.close(fig)
    atomic_write_bytes(target, buffer.getvalue())
    return target
