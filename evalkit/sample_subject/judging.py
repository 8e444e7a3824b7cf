"""Human labels and simulated judge verdicts for the two judged criteria, with known accuracy.

Labels are the ground truth (a criterion fails exactly when its failure mode was injected), except for
a few ``defer``s. The judge agrees with the truth at the stated TPR/TNR and abstains at a small rate.
"""

from __future__ import annotations

import random
from datetime import timedelta

from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.trace import Observation, Trace
from evalkit.contracts.verdict import BlockedBy, CriterionVerdict, Ref
from evalkit.sample_subject.catalog import (
    ANNOTATORS,
    CRITERIA,
    JUDGE_TARGETS,
    JUDGE_UNCERTAIN_RATE,
    LABEL_BASE_TIME,
    LABEL_DEFER_RATE,
    LABEL_FAIL_SHARE,
    LABEL_FRACTION,
    SPLIT_SHARES,
)
from evalkit.sample_subject.replies import policy_sentence
from evalkit.sample_subject.requests import iso_utc


def truly_passes(trace: Trace, criterion_id: str) -> bool:
    """The ground truth: a criterion fails exactly when its failure mode was injected into the trace."""
    return CRITERIA[criterion_id] not in (trace.metadata or {}).get("injected_failures", [])


def _first(trace: Trace, name: str) -> Observation | None:
    return next((o for o in trace.observations if o.name == name), None)


def _label_notes(trace: Trace, criterion_id: str, label: str) -> str | None:
    if label == "defer":
        return "Cannot tell from the transcript alone; needs the policy owner's view."
    if label == "pass":
        return None
    if criterion_id == "grounded-policy":
        return f"Reply states a policy no KB snippet supports: {policy_sentence(str(trace.output))!r}"
    return "Escalation was required but the agent never called escalate_to_human."


def _assign_splits(rng: random.Random, labels: list[dict]) -> None:
    """15/40/45 train/dev/test, stratified by label value, in place."""
    for value in ("pass", "fail", "defer"):
        stratum = [row for row in labels if row["label"] == value]
        rng.shuffle(stratum)
        n, start = len(stratum), 0
        for i, (split, share) in enumerate(SPLIT_SHARES):
            end = n if i == len(SPLIT_SHARES) - 1 else start + round(share * n)
            for row in stratum[start:end]:
                row["split"] = split
            start = end


def simulate_labels(traces: list[Trace], seed: int) -> list[HumanLabel]:
    """About half the traces labelled per criterion, failures over-sampled, sorted by (criterion, trace)."""
    rng = random.Random(f"evalkit-sample:{seed}:labels")
    quota = round(len(traces) * LABEL_FRACTION)
    out: list[HumanLabel] = []
    for criterion_id in sorted(CRITERIA):
        failing = [t for t in traces if not truly_passes(t, criterion_id)]
        passing = [t for t in traces if truly_passes(t, criterion_id)]
        chosen = [t for t in failing if rng.random() < LABEL_FAIL_SHARE]
        chosen += rng.sample(passing, min(len(passing), max(0, quota - len(chosen))))
        chosen.sort(key=lambda t: t.id)
        rows: list[dict] = []
        for k, trace in enumerate(chosen):
            truth = "pass" if truly_passes(trace, criterion_id) else "fail"
            label = "defer" if rng.random() < LABEL_DEFER_RATE else truth
            row = {"trace_id": trace.id, "criterion_id": criterion_id, "label": label,
                   "annotator": rng.choice(ANNOTATORS),
                   "labeled_at": iso_utc(LABEL_BASE_TIME + timedelta(minutes=3 * k, seconds=rng.randint(0, 170)))}
            notes = _label_notes(trace, criterion_id, label)
            if notes is not None:
                row["notes"] = notes
            rows.append(row)
        _assign_splits(rng, rows)
        out += [HumanLabel(**row) for row in rows]
    return out


def _policy_refs(trace: Trace) -> list[Ref]:
    refs: list[Ref] = []
    respond, kb = _first(trace, "respond"), _first(trace, "kb_search")
    sentence = policy_sentence(str(trace.output))
    if respond is not None:
        refs.append(Ref(obs=respond.id, path="output.answer", value=sentence or str(trace.output).split("\n")[0]))
    if kb is not None and kb.level != "ERROR":
        refs.append(Ref(obs=kb.id, path="output.articles[0].snippet", value=kb.output["articles"][0]["snippet"]))
    return refs


def _escalation_refs(trace: Trace) -> list[Ref]:
    root, escalate = trace.observations[0], _first(trace, "escalate_to_human")
    refs = [Ref(obs=root.id, path="input", value=str(root.input))]
    if escalate is not None:
        refs.append(Ref(obs=escalate.id, path="input.reason", value=escalate.input["reason"]))
    return refs


def _policy_critique(trace: Trace, result: str) -> str:
    sentence = policy_sentence(str(trace.output))
    if sentence is None:
        return ("The reply states no policy, so there is nothing to ground." if result == "pass" else
                "The reply implies a commitment to the customer that no kb_search result in this trace supports.")
    kb = _first(trace, "kb_search")
    article = kb.output["articles"][0]["id"] if kb is not None and kb.output else "the knowledge base"
    if result == "pass":
        return f"The reply's policy claim matches the snippet of {article}."
    return f"The reply's policy claim is not what {article} says; no kb_search snippet supports it."


def _escalation_critique(trace: Trace, result: str) -> str:
    needed = bool((trace.metadata or {}).get("needs_escalation"))
    escalated = _first(trace, "escalate_to_human") is not None
    if needed and escalated:
        return ("An escalation trigger applies and escalate_to_human was called with it as the reason."
                if result == "pass" else
                "An escalation trigger applies, but the hand-off reason does not make the customer's case clear.")
    if needed:
        return ("The reply promises follow-up, which reads as a hand-off to a person." if result == "pass" else
                "An escalation trigger applies, but no escalate_to_human call was made.")
    return ("No escalation trigger applies here; finishing without a human is correct." if result == "pass" else
            "The customer's frustration called for a person, but the agent did not escalate.")


BLOCKERS = {
    "grounded-policy": BlockedBy(kind="factual-intent", text=(
        "'the applicable policy' is not bound: the trace does not show which article the reply relies on")),
    "escalation-correct": BlockedBy(kind="normative", text=(
        "whether this case is an escalation trigger is not stated by any policy the trace shows")),
}


def judge_run_file(prompt: str) -> str:
    """The file name of an earlier judge-prompt iteration's verdicts."""
    return f"criterion-verdicts.prompt-{prompt}.jsonl"


def simulate_verdicts(traces: list[Trace], seed: int, targets: dict[str, tuple[float, float]] | None = None,
                      prompt: str = "") -> list[CriterionVerdict]:
    """One verdict per trace and criterion, sorted by (criterion, trace).

    ``targets`` (criterion -> TPR, TNR) default to the current prompt's; ``prompt`` names an earlier
    prompt iteration, which draws from its own random stream.
    """
    rng = random.Random(f"evalkit-sample:{seed}:judge" + (f":{prompt}" if prompt else ""))
    targets = targets or JUDGE_TARGETS
    out: list[CriterionVerdict] = []
    for criterion_id in sorted(CRITERIA):
        tpr, tnr = targets[criterion_id]
        for trace in sorted(traces, key=lambda t: t.id):
            abstain = rng.random() < JUDGE_UNCERTAIN_RATE
            draw = rng.random()
            confidence = round(rng.uniform(0.6, 0.97), 2)
            if truly_passes(trace, criterion_id):
                result = "pass" if draw < tpr else "fail"
            else:
                result = "fail" if draw < tnr else "pass"
            refs = _policy_refs(trace) if criterion_id == "grounded-policy" else _escalation_refs(trace)
            if abstain:
                out.append(CriterionVerdict(
                    criterion_id=criterion_id, trace_id=trace.id, result="uncertain", confidence=0.0,
                    critique="Abstaining: the criterion leans on a premise this trace never establishes.",
                    refs=refs, blocked_by=BLOCKERS[criterion_id]))
                continue
            critique = (_policy_critique(trace, result) if criterion_id == "grounded-policy"
                        else _escalation_critique(trace, result))
            out.append(CriterionVerdict(criterion_id=criterion_id, trace_id=trace.id, result=result,
                                        confidence=confidence, critique=critique, refs=refs))
    return out

