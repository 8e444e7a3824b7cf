"""Axial coding with an LLM's help, as notebook 01 tells it: the draft, what a person ratified, how the LLM
codes against the person, how reviewers agree, and whether reviewing more traces still finds new modes.

The package decides the tables and the findings; the notebook draws them (the shape of
:mod:`evalkit.judge.calibration_story`). Every part is optional: a subject with notes alone gets the
finding that says what to do next.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.analysis.coding import KAPPA_FLOOR, MIN_HUMAN_POSITIVES, CoderAgreement, coder_agreement
from evalkit.analysis.drafting import open_notes
from evalkit.analysis.reviewers import ReviewerLabels, compare_reviewers, reviewers_in_store
from evalkit.analysis.saturation import SATURATION_BATCH, BatchSaturation, saturation_by_batch
from evalkit.contracts.annotation import Annotation, Taxonomy
from evalkit.contracts.modes import DraftTaxonomy, Ratification
from evalkit.contracts.verdict import CriterionVerdict


@dataclass
class ModesStory:
    """The tables notebook 01 draws, and what they say."""

    draft_rows: list[dict[str, Any]] = field(default_factory=list)
    unplaced_rows: list[dict[str, Any]] = field(default_factory=list)
    decision_rows: list[dict[str, Any]] = field(default_factory=list)
    agreement: CoderAgreement | None = None
    agreement_rows: list[dict[str, Any]] = field(default_factory=list)
    reviewer_rows: list[dict[str, Any]] = field(default_factory=list)
    disagreements: int = 0
    saturation: BatchSaturation | None = None
    findings: list[str] = field(default_factory=list)


def _decision_text(decision: Any) -> str:
    if decision.action == "merge":
        return f"merged into {decision.into}"
    if decision.action == "reject":
        return "rejected"
    return ", ".join(p.id for p in decision.parts)


def modes_story(annotations: Sequence[Annotation], *, draft: DraftTaxonomy | None = None,
                ratification: Ratification | None = None, taxonomy: Taxonomy | None = None,
                coded: Sequence[CriterionVerdict] | None = None, reviewers: Sequence[ReviewerLabels] = (),
                batch_size: int = SATURATION_BATCH) -> ModesStory:
    """The story of the failure modes from the notes to the LLM coder (see the module docstring).

    Args:
        annotations: the annotation store's records (the open coding, and the ratified coding when appended).
        draft: the drafted taxonomy (``analysis draft-modes``).
        ratification: the reviewer's decisions on it (the review page's export).
        taxonomy: the ratified taxonomy.
        coded: the LLM coder's verdicts on the reviewed traces (``analysis code-modes``).
        reviewers: several reviewers' files (``analysis reviewers``); by default the annotators of ``annotations``
            (but the reviewer who ratified: their coding is of the noted traces only).
        batch_size: traces per batch in the saturation view.
    """
    story = ModesStory()
    notes = open_notes(annotations)
    if draft is not None:
        decided = {d.draft_mode: d for d in ratification.decisions} if ratification else {}
        for m in draft.modes:
            d = decided.get(m.id)
            story.draft_rows.append({"drafted mode": m.name, "definition": m.definition, "notes": len(m.examples),
                                     "decision": d.action if d else "undecided",
                                     "became": _decision_text(d) if d else ""})
        story.unplaced_rows = [{"trace": u.trace_id, "note": u.note, "why": u.reason} for u in draft.unplaced]
        story.findings.append(
            f"{draft.drafted_by.model} drafted {len(draft.modes)} failure modes from {draft.drafted_by.notes} notes "
            f"and left {len(draft.unplaced)} unplaced (prompt {draft.drafted_by.prompt_digest[:19]}).")
        if ratification is None:
            story.findings.append("The draft is not ratified: no drafted mode is a failure mode until a person "
                                  "decides on it (evalkit review build --draft).")
    elif notes:
        story.findings.append(f"{len(notes)} notes and no draft yet: `evalkit analysis draft-modes` proposes "
                              "failure modes from them, for a person to ratify.")
    if ratification is not None:
        story.decision_rows = [{"drafted mode": d.draft_mode, "decision": d.action, "became": _decision_text(d),
                                "reviewer": d.reviewer, "at": d.at} for d in ratification.decisions]
        actions = [d.action for d in ratification.decisions]
        story.findings.append(f"{ratification.reviewer} ratified the draft: " + ", ".join(
            f"{actions.count(a)} {a}" for a in ("accept", "rename", "merge", "split", "reject") if a in actions) + ".")
    if taxonomy is not None and coded is not None:
        story.agreement = coder_agreement(annotations, coded, taxonomy,
                                          coded_by=ratification.reviewer if ratification is not None else None)
        for m in story.agreement.modes:
            k = m.kappa
            story.agreement_rows.append({
                "mode": m.mode, "kappa": k.kappa, "lo": k.ci.lo if k.ci else None, "hi": k.ci.hi if k.ci else None,
                "both": m.both, "person only": m.human_only, "LLM only": m.llm_only, "neither": m.neither,
                "uncertain": m.uncertain, "offered": m.offered, "why": m.why})
        offered = story.agreement.offered
        story.findings.append(
            f"The LLM codes {len(offered)} of {len(story.agreement.modes)} ratified modes as the person does "
            f"(kappa interval's lower end >= {KAPPA_FLOOR}, at least {MIN_HUMAN_POSITIVES} person-coded traces)"
            + (f": {', '.join(offered)} may be LLM-coded on unreviewed traces." if offered
               else "; keep coding by hand, or sharpen the definitions and code again."))
    if not reviewers:
        modes = taxonomy.mode_ids() if taxonomy is not None else None
        reviewers = reviewers_in_store(annotations, modes,
                                       leave_out=[ratification.reviewer] if ratification is not None else [])
    if len(reviewers) >= 2:
        report = compare_reviewers(reviewers)
        story.reviewer_rows = [{"question": f"{a.kind} {a.about}", "statistic": a.statistic, "value": a.value,
                                "items": a.items} for a in report.agreement]
        story.disagreements = len(report.disagreements)
        story.findings.append(f"{len(report.reviewers)} reviewers: {story.disagreements} items in the disagreement "
                              "queue to adjudicate before their labels are gold.")
    coder = ratification.reviewer if ratification is not None else None
    if annotations and (coder is not None or any(a.modes for a in annotations)):
        story.saturation = saturation_by_batch(annotations, batch_size=batch_size, coded_by=coder)
        sat = story.saturation
        if sat.flat:
            story.findings.append(f"No new failure mode in the last batches of {batch_size} reviewed traces: the "
                                  "taxonomy has saturated; more review is not needed to find modes.")
        else:
            story.findings.append("Recent batches still add failure modes: review more traces before trusting "
                                  "the taxonomy is complete.")
    return story
