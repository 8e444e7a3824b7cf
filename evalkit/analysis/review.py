"""``review.html``: one self-contained page for reading traces and labelling them, offline, in a browser.

The page renders one trace at a time (the conversation as a chat transcript, each message once, with
tool calls, their arguments and results; beside it a collapsible observation tree with errors
highlighted and a one-line preview per row) next to pass/fail/defer buttons, a note box and
failure-mode tags. Labels autosave in the browser's localStorage under a key derived from the trace
ids, and the export button downloads them as a :class:`ReviewExport` for ``evalkit labels import``.

Everything taken from traces reaches the page as JSON inside a script element (``script_json``) and is
put into the document with ``textContent``, never as markup. Long values are cut at a few thousand
characters with a "show all" button, and bidi control characters are shown escaped, in names and free text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalkit.analysis.drafting import draft_digest
from evalkit.analysis.store import labels_of, latest
from evalkit.analysis.taxonomy import check_modes
from evalkit.analysis.transcript import transcript
from evalkit.contracts.annotation import REVIEW_EXPORT_FORMAT, Annotation, Taxonomy
from evalkit.contracts.modes import DraftTaxonomy
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError
from evalkit.io.atomic import atomic_write_text
from evalkit.io.script_json import script_json
from evalkit.report import page_environment, render_page
from evalkit.traces import stored_form

STORAGE_PREFIX = "evalkit-review:"


def review_key(trace_ids: Sequence[str], reviewer: str | None = None) -> str:
    """The localStorage key of a review page: a digest of its trace ids (and of the reviewer it was built for),
    so two pages never share labels, and one reviewer's page never preloads another's from the same browser."""
    text = "\n".join(trace_ids) + (f"\n@{reviewer}" if reviewer else "")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return STORAGE_PREFIX + digest[:16]


def _mode_tags(taxonomy: Taxonomy | None, labels: Sequence[Annotation]) -> list[dict[str, Any]]:
    if taxonomy is not None:
        return [{"id": m.id, "name": m.name, "definition": m.definition, "examples": m.examples}
                for m in taxonomy.modes]
    used = sorted({m for a in labels for m in a.modes})
    return [{"id": m, "name": m, "definition": "", "examples": []} for m in used]


def _trace_payload(trace: Trace, hide_metadata: Sequence[str]) -> dict[str, Any]:
    obj = stored_form(trace)  # each repeated history once; the page resolves inputRepeats when shown
    if hide_metadata and isinstance(obj.get("metadata"), dict):
        obj["metadata"] = {k: v for k, v in obj["metadata"].items() if k not in hide_metadata}
    obj["transcript"] = transcript(trace)
    return obj


def _preloaded(labels: Sequence[Annotation], trace_ids: set[str]) -> dict[str, dict[str, Any]]:
    out = {}
    for a in labels:
        if a.trace_id in trace_ids:
            out[a.trace_id] = {"label": a.label, "note": a.note or "", "modes": list(a.modes),
                               "firstFailingObs": a.first_failing_obs, "at": a.at}
    return out


def _draft_payload(draft: DraftTaxonomy, annotations: Sequence[Annotation]) -> dict[str, Any]:
    """What the ratify view shows: the drafted modes, each with its notes, and the unplaced notes."""
    notes: dict[str, list[dict[str, str]]] = {}
    for a in latest(annotations):
        if a.note and a.note.strip():
            notes.setdefault(a.trace_id, []).append({"annotator": a.annotator, "note": a.note.strip()})
    return {"digest": draft_digest(draft), "subject": draft.subject, "draftedBy": draft.drafted_by.to_json_obj(),
            "modes": [m.to_json_obj() for m in draft.modes],
            "unplaced": [u.to_json_obj() for u in draft.unplaced], "notes": notes}


def _verdicts_payload(verdicts: Sequence[CriterionVerdict], runs: Sequence[dict[str, Any]],
                      trace_ids: set[str]) -> dict[str, list[dict[str, Any]]]:
    """The judge's verdicts per trace, with the model and prompt digest of the run that gave each (when known)."""
    judged = {(r.get("criterionId"), r.get("traceId")): r for r in runs if r.get("repeat", 0) == 0}
    out: dict[str, list[dict[str, Any]]] = {}
    for v in sorted(verdicts, key=lambda v: (v.trace_id, v.criterion_id)):
        if v.trace_id in trace_ids:
            run = judged.get((v.criterion_id, v.trace_id), {})
            out.setdefault(v.trace_id, []).append({
                "criterionId": v.criterion_id, "result": v.result, "critique": v.critique or "",
                "model": run.get("model"), "promptDigest": run.get("promptDigest")})
    return out


def _others_payload(others: Sequence[Annotation], me: str | None, trace_ids: set[str]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for a in latest(others):
        if a.trace_id in trace_ids and a.annotator != me:
            out.setdefault(a.trace_id, []).append({"annotator": a.annotator, "label": a.label, "modes": list(a.modes),
                                                   "note": a.note or ""})
    return out


def render_review(traces: Sequence[Trace], *, annotations: Sequence[Annotation] = (),
                  taxonomy: Taxonomy | None = None, annotator: str | None = None, title: str | None = None,
                  hide_metadata: Sequence[str] = (), draft: DraftTaxonomy | None = None,
                  verdicts: Sequence[CriterionVerdict] = (), verdict_runs: Sequence[dict[str, Any]] = (),
                  others: Sequence[Annotation] = (), blind: bool = False) -> str:
    """The HTML of a review page.

    Args:
        traces: the traces to review, in review order (ids must be unique).
        annotations: store records; the annotator's latest label per trace is preloaded.
        taxonomy: the failure modes offered as tags (keys 1-9 toggle the first nine); without one,
            the modes the preloaded labels use.
        annotator: whose labels to preload and whom the export names (editable on the page); by
            default the annotator with the most labels in ``annotations``.
        title: shown in the page header.
        hide_metadata: metadata fields to leave out of the page (ground truth a reviewer must not see).
        draft: a drafted taxonomy to ratify: the page opens on it, a decision per drafted mode, and exports
            a ratification (:mod:`evalkit.analysis.ratifying`).
        verdicts: judge verdicts shown beside each trace; the reviewer confirms or overrides each, and the
            export holds those as human labels (an override names the verdict it overrides).
        verdict_runs: the judge run records of ``verdicts`` (``OUT.runs.jsonl``): the model and prompt digest
            an override names.
        others: other reviewers' labels, shown beside the reviewer's own, with a queue of the traces where
            labels differ (for an adjudicator).
        blind: leave ``others`` off the page entirely (a reviewer labelling independently).

    Raises:
        InputError: no traces, duplicate trace ids, or labels naming modes the taxonomy lacks.
    """
    if not traces:
        raise InputError("no traces to review", path="traces")
    ids = [t.id for t in traces]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise InputError(f"duplicate trace id {dup!r}", path="traces")
    if annotator is not None:
        who, labels = annotator, latest(annotations, annotator)
    else:
        who, labels = labels_of(annotations)
    if taxonomy is not None:
        check_modes(labels, taxonomy)
    data = {
        "storageKey": review_key(ids, annotator),
        "format": REVIEW_EXPORT_FORMAT,
        "annotator": who or "",
        "modes": _mode_tags(taxonomy, labels),
        "preloaded": _preloaded(labels, set(ids)),
        "traces": [_trace_payload(t, hide_metadata) for t in traces],
        "draft": None if draft is None else _draft_payload(draft, annotations),
        "verdicts": _verdicts_payload(verdicts, verdict_runs, set(ids)),
        "others": {} if blind else _others_payload(others, who, set(ids)),
        "blind": blind,
    }
    return render_page("evalkit.analysis", "review.html.j2", scripts=["review.js.j2"], styles=["review.css.j2"],
                       title=title or f"{len(traces)} traces", count=len(traces), data=script_json(data))


def trace_script() -> str:
    """The review page's JavaScript that draws one trace (header chips, the conversation as a chat, the
    observation tree), for another page that shows traces (the report's trace viewer).

    It defines ``header(t)``, ``conversation(t)``, ``tree(t, entry)`` and ``jumpTo(obsId)`` and expects the
    page's script to define ``el(tag, cls, text)``, ``has(obj, key)`` and ``$(id)`` around it; an ``entry``
    with ``markable: false`` draws no "mark first failure" buttons. Traces are given as
    :func:`trace_payload` makes them.
    """
    return page_environment("evalkit.analysis").get_template("review-trace.js.j2").render()


def trace_payload(trace: Trace, hide_metadata: Sequence[str] = ()) -> dict[str, Any]:
    """A trace as the page's trace script reads it: its stored form (each repeated history once) with
    its transcript, and without the metadata fields named in ``hide_metadata``."""
    return _trace_payload(trace, hide_metadata)


def write_review(out: str | Path, traces: Sequence[Trace], **options: Any) -> Path:
    """Write the review page atomically (see :func:`render_review` for the options); returns its path."""
    path = Path(out)
    atomic_write_text(path, render_review(traces, **options))
    return path
