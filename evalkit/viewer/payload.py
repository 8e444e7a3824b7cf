"""What the report's trace viewer holds: the traces the report cites, each with what is known about it.

A run's report names traces in its tables (worst traces, flipped verdicts, traces missing an expected
edge, slowest traces, ...) and names criteria and failure modes that traces fail. The viewer embeds the
traces the tables name, and for each criterion and each failure mode the first :data:`FAILING_PER_GROUP`
traces that fail it, so a click on any of those rows opens a trace in the same file; a big run's other
traces stay out (the page says how many). Each trace comes with its conversation (the review page's
transcript), the judge's verdicts on it (critique, refs), its review label and failure modes, and its flow
graph. The whole is gzip-compressed (no time in its header, so reruns are byte-identical) into
``RUN_DIR/trace-view.json.gz``, which the report embeds as base64.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from evalkit.contracts.summary import NotebookSummary, RunManifest
from evalkit.io import atomic_write_bytes, compact_sorted_json

VIEW_FILE = "trace-view.json.gz"
FAILING_PER_GROUP = 20
"""Traces embedded per criterion (failing verdicts) and per failure mode (reviewed fails), beyond those the
tables name: enough to read a pattern, few enough that a run of thousands of traces stays mailable."""
LIST_SEPARATORS = (", ", "; ")
"""A table cell may name several traces: ``tr-0004, tr-0227``."""


def cited_names(run_dir: str | Path) -> list[str]:
    """Every text cell of the run's summary tables (and each part of a listed one), in report order."""
    from evalkit.contract_files import read_model

    run = Path(run_dir)
    manifest = read_model(run / "run.json", RunManifest)
    names: dict[str, None] = {}
    for nb in manifest.notebooks:
        path = run / nb.name / "summary.json"
        if nb.status != "ok" or not path.is_file():
            continue
        for table in read_model(path, NotebookSummary).tables:
            for row in table.rows:
                for cell in row:
                    if isinstance(cell, str):
                        names[cell] = None
                        for sep in LIST_SEPARATORS:
                            for part in cell.split(sep) if sep in cell else ():
                                names[part.strip()] = None
    return list(names)


def _flow(trace: Any) -> dict[str, Any]:
    """The trace's flow graph with observation ids (the graph numbers nodes by position)."""
    from evalkit.flow import build_flow_graph

    flow = build_flow_graph(trace)
    ids = [o.id for o in trace.observations]
    by_node = {n.id: ids[n.index] for n in flow.nodes}
    return {"nodes": [{"obs": ids[n.index], "name": n.name, "type": n.type} for n in flow.nodes],
            "edges": [{"from": by_node[a], "to": by_node[b], "slot": slot, "kind": kind} for a, b, slot, kind in flow.edges],
            "unthreaded": [{"obs": by_node[u.node], "slot": u.slot} for u in flow.unthreaded_outputs]}


def _flow_or_why(trace: Any) -> dict[str, Any]:
    from evalkit.errors import InputError

    try:
        return _flow(trace)
    except InputError as exc:  # shown in the viewer in place of the graph, never dropped silently
        return {"error": exc.render()}


def _firsts(groups: dict[str, list[str]]) -> set[str]:
    return {tid for ids in groups.values() for tid in ids[:FAILING_PER_GROUP]}  # the first, as recorded


def trace_view(run_dir: str | Path, subject: Any) -> dict[str, Any]:
    """The viewer's data for a run of ``subject`` (a :class:`~evalkit.subjects.ResolvedSubject`).

    Raises:
        InputError: an input of the subject that cannot be read.
    """
    from evalkit.analysis import labels_of, read_store, read_taxonomy, trace_payload
    from evalkit.calibration import read_verdicts
    from evalkit.traces import iter_traces

    s = subject.subject
    verdicts: dict[str, list[dict[str, Any]]] = {}
    failing: dict[str, list[str]] = {}
    for v in read_verdicts(subject.resolve(s.verdicts)) if s.verdicts else []:
        verdicts.setdefault(v.trace_id, []).append(v.to_json_obj())
        if v.result == "fail":
            failing.setdefault(v.criterion_id, []).append(v.trace_id)
    reviews: dict[str, dict[str, Any]] = {}
    by_mode: dict[str, list[str]] = {}
    annotator, labels = labels_of(read_store(subject.resolve(s.annotations)).annotations) if s.annotations else (None, [])
    for a in labels:
        reviews[a.trace_id] = {"label": a.label, "modes": list(a.modes), "note": a.note,
                               "firstFailingObs": a.first_failing_obs, "annotator": a.annotator}
        for mode in a.modes if a.label == "fail" else ():
            by_mode.setdefault(mode, []).append(a.trace_id)
    names = cited_names(run_dir)
    wanted = set(names) | _firsts(failing) | _firsts(by_mode)
    order = {name: i for i, name in enumerate(names)}
    kept, total, cited = [], 0, 0
    for trace in iter_traces(subject.resolve(s.traces)):
        total += 1
        if trace.id not in wanted:
            continue
        cited += trace.id in order
        item = trace_payload(trace)
        item.update(verdicts=sorted(verdicts.get(trace.id, []), key=lambda v: v["criterionId"]),
                    review=reviews.get(trace.id), flow=_flow_or_why(trace), cited=trace.id in order)
        kept.append(item)
    kept.sort(key=lambda t: order.get(t["id"], len(order)))  # named ones as the report names them, then file order
    modes = {m: None for m in by_mode}
    if s.taxonomy:
        modes = {m.id: m.name for m in read_taxonomy(subject.resolve(s.taxonomy)).modes}
    return {"total": total, "cited": cited, "perGroup": FAILING_PER_GROUP, "annotator": annotator,
            "criteria": sorted({v["criterionId"] for vs in verdicts.values() for v in vs}),
            "modes": [{"id": m, "name": name} for m, name in modes.items()], "traces": kept}


def write_trace_view(run_dir: str | Path, subject: Any) -> Path:
    """Write ``RUN_DIR/trace-view.json.gz`` (see the module); returns its path."""
    data = compact_sorted_json(trace_view(run_dir, subject)).encode("utf-8")
    path = Path(run_dir) / VIEW_FILE
    atomic_write_bytes(path, gzip.compress(data, compresslevel=9, mtime=0))
    return path


def embedded_counts(payload: dict[str, Any]) -> dict[str, int]:
    """How many traces the viewer holds, of how many, and how many of them the tables name."""
    return {"embedded": len(payload["traces"]), "total": payload["total"], "cited": payload["cited"]}


def read_trace_view(path: str | Path) -> tuple[bytes, dict[str, Any]]:
    """The compressed view as written, and its data."""
    import json

    raw = Path(path).read_bytes()
    return raw, json.loads(gzip.decompress(raw))

