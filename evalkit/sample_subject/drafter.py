"""The sample's simulated drafter: failure modes drafted from the sample's notes by their wording alone.

``draft-cassette.jsonl`` holds, for the exact drafting prompt ``evalkit analysis draft-modes`` builds from
the sample's annotations and traces, the reply of this drafter, so the drafting path runs offline end to end
(prompt, replay, reply check, ids, unplaced notes) with ``--provider replay``. No model produced the reply:
the drafter groups the notes' sentences by their words once identifiers (order ids, tool names, quoted text,
numbers) are taken out, and names each group by those words. It never sees the injected failures; that its
groups match them is what the sample's notes say. A real model's draft is tested with the local model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from evalkit.analysis import DRAFT_SCHEMA, assemble_draft, draft_prompt, draft_yaml, notes_digest, open_notes
from evalkit.contracts.annotation import Annotation
from evalkit.contracts.modes import DraftedBy
from evalkit.contracts.trace import Trace
from evalkit.io.canonical import compact_sorted_json
from evalkit.judge import prompt_digest, request_key

DRAFT_MODEL = "sim-drafter-2026-01"
"""The model name the drafting cassette replays."""

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|\([^)]*\)")
_IDENTIFIER = re.compile(r"\S*[\d_]\S*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def _wording(sentence: str) -> str:
    """A sentence's words without identifiers: what notes about the same failure share."""
    words = _IDENTIFIER.sub(" ", sentence).lower()
    return " ".join(re.sub(r"[^a-z ]+", " ", words).split())


def lexical_draft(notes: Sequence[Any]) -> dict[str, Any]:
    """The drafter's reply to notes numbered from 1: one mode per wording, in order of first use."""
    groups: dict[str, list[int]] = {}
    unplaced = []
    for number, note in enumerate(notes, start=1):
        wordings = [w for w in (_wording(s) for s in _SENTENCE.split(_QUOTED.sub(" ", note.note))) if len(w.split()) >= 3]
        if not wordings:
            unplaced.append({"note": number, "reason": "too short to say what failed"})
        for wording in wordings:
            groups.setdefault(wording, []).append(number)
    modes = [{"name": wording.capitalize(), "definition": f"The reviewer's note says: {wording}.",
              "include": [f"notes saying {wording}"], "exclude": [], "notes": sorted(set(numbers))}
             for wording, numbers in groups.items()]
    return {"modes": modes, "unplaced": unplaced}


def draft_cassette(annotations: Sequence[Annotation], traces: Sequence[Trace]) -> str:
    """The drafting cassette of the sample: one compact entry, the simulated drafter's reply."""
    notes = open_notes(annotations, {t.id: t for t in traces})
    reply = compact_sorted_json(lexical_draft(notes))
    key = request_key(DRAFT_MODEL, 0.0, draft_prompt(notes), DRAFT_SCHEMA)
    tokens = {"inputTokens": sum(len(m["content"]) for m in draft_prompt(notes)) // 4,
              "outputTokens": len(reply) // 4}
    return compact_sorted_json({"key": key, "model": DRAFT_MODEL, "reply": {"text": reply, **tokens}}) + "\n"


def sample_draft(annotations: Sequence[Annotation], traces: Sequence[Trace], subject: str) -> str:
    """``draft-modes.yaml``: what ``evalkit analysis draft-modes`` writes from the cassette (a test holds it so)."""
    notes = open_notes(annotations, {t.id: t for t in traces})
    messages = draft_prompt(notes)
    by = DraftedBy(provider="replay", model=DRAFT_MODEL, temperature=0.0,
                   prompt_digest=prompt_digest(messages, DRAFT_SCHEMA), notes=len(notes),
                   notes_digest=notes_digest(notes))
    return draft_yaml(assemble_draft(lexical_draft(notes), notes, subject=subject, drafted_by=by))
