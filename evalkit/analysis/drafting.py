"""Drafting failure modes from open-coding notes with an LLM: the axial-coding step, proposed, never decided.

The model reads every note (with an excerpt of the trace where the note's reviewer saw the first failure)
and proposes a few failure modes, each with a name, a definition, include and exclude rules and the notes
it groups; a note it cannot place is listed as unplaced, never forced into a mode, and a note it neither
places nor lists is added to the unplaced ones by evalkit. The call goes through the judge's providers,
cache and journal (:class:`evalkit.judge.Asker`, as the verifier and the case writer ask), at temperature 0, and the draft records the model and the
prompt's digest. A draft is only a proposal: a person ratifies it in the review page (:mod:`.ratifying`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.analysis.store import latest
from evalkit.contracts.annotation import Annotation
from evalkit.contracts.modes import DRAFT_FORMAT, DraftedBy, DraftMode, DraftTaxonomy, UnplacedNote
from evalkit.contracts.trace import Trace
from evalkit.errors import InputError
from evalkit.io.canonical import compact_sorted_json

EXCERPT_CHARS = 400
"""Characters of trace text shown with a note: enough for the sentence a note is about, and 40 notes still
fit a small model's 8k context."""

MODE_ID_CHARS = 48

DRAFT_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["modes", "unplaced"],
    "properties": {
        "modes": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["name", "definition", "include", "exclude", "notes"],
            "properties": {
                "name": {"type": "string", "description": "A few words naming what failed."},
                "definition": {"type": "string", "description": "One or two sentences a second reviewer could "
                               "apply to a trace without the notes."},
                "include": {"type": "array", "items": {"type": "string"}, "description": "What counts."},
                "exclude": {"type": "array", "items": {"type": "string"},
                            "description": "What looks similar but does not count."},
                "notes": {"type": "array", "items": {"type": "integer"}, "description": "The numbers of the "
                          "notes this mode groups."},
            }}},
        "unplaced": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["note", "reason"],
            "properties": {"note": {"type": "integer"}, "reason": {"type": "string"}}}},
    },
}
"""The reply's JSON Schema: modes with the numbers of the notes they group, and the notes left unplaced."""

SYSTEM = """You help an eval designer with axial coding. People read an agent's traces and wrote open-coding \
notes, each saying what went wrong in one trace. The notes are numbered below, each with the trace it is about \
and, where there is one, an excerpt of that trace.

Group the notes into a small set of failure modes (usually 3 to 8), one mode per distinct way the agent fails:
- name: a few words naming what failed (not a symptom of one trace).
- definition: one or two sentences a second reviewer could apply to a new trace without the notes.
- include: rules for what counts as this mode. exclude: what looks similar but does not count (often another mode).
- notes: the numbers of the notes the mode groups. A note describing two failures goes in both modes.
A note that fits no mode, or describes no failure, goes under unplaced with the reason. Never force a note \
into a mode it does not fit.

Reply with one JSON object: {"modes": [{"name", "definition", "include", "exclude", "notes"}], \
"unplaced": [{"note", "reason"}]}.
Schema: """ + compact_sorted_json(DRAFT_SCHEMA)


@dataclass(frozen=True)
class OpenNote:
    """One reviewer's note on one trace, with the excerpt of the trace it is shown with."""

    trace_id: str
    annotator: str
    label: str
    note: str
    excerpt: str | None = None
    excerpt_from: str | None = None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else compact_sorted_json(value)


def _cut(text: str, limit: int = EXCERPT_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _excerpt(annotation: Annotation, trace: Trace | None) -> tuple[str | None, str | None]:
    """The trace text a note is shown with: the output of the observation the reviewer named as the first
    failure, else the trace's output; None without the trace."""
    if trace is None:
        return None, None
    if annotation.first_failing_obs is not None:
        for obs in trace.observations:
            if annotation.first_failing_obs in (obs.id, obs.name):
                value = obs.output if obs.output is not None else obs.input
                if value is not None:
                    return _cut(_text(value)), f"{obs.name or obs.id} output"
    if trace.output is not None:
        return _cut(_text(trace.output)), "the trace's output"
    return None, None


def open_notes(annotations: Sequence[Annotation], traces_by_id: Mapping[str, Trace] | None = None, *,
               include_pass: bool = False) -> list[OpenNote]:
    """The notes to draft from: each reviewer's latest note per trace, in review order.

    Args:
        annotations: store records in file order.
        traces_by_id: the traces, for excerpts (none without them).
        include_pass: also notes on passing traces (by default only fail and defer notes: a pass note says
            nothing went wrong).
    """
    notes = []
    for a in latest(annotations):
        if a.note and a.note.strip() and (include_pass or a.label != "pass"):
            excerpt, where = _excerpt(a, (traces_by_id or {}).get(a.trace_id))
            notes.append(OpenNote(a.trace_id, a.annotator, a.label, a.note.strip(), excerpt, where))
    return notes


def notes_digest(notes: Sequence[OpenNote]) -> str:
    """``sha256:`` of the notes as given: which traces, whose notes, what they say, in order."""
    text = compact_sorted_json([[n.trace_id, n.annotator, n.note] for n in notes])
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def draft_prompt(notes: Sequence[OpenNote]) -> list[dict[str, str]]:
    """The messages the drafting model is sent (what ``--show-prompt`` prints).

    Raises:
        InputError: no notes.
    """
    if not notes:
        raise InputError("no notes to draft failure modes from: write notes on failing traces first "
                         "(the review page's note box), or pass --include-pass for notes on passes too",
                         path="annotations")
    lines = [f"{len(notes)} notes:"]
    for i, n in enumerate(notes, start=1):
        lines.append(f"[{i}] trace {n.trace_id} ({n.annotator}, {n.label}): {' '.join(n.note.split())}")
        if n.excerpt:
            lines.append(f"    excerpt ({n.excerpt_from}): {n.excerpt}")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def parse_draft_reply(text: str, note_count: int) -> dict[str, Any]:
    """A drafting reply, checked: every mode named and defined, every note number one of the notes given.

    Raises:
        ValueError: what to fix, for the one correction the model is given.
    """
    import orjson

    from evalkit.judge import reply_body

    body = reply_body(text)
    try:
        reply = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"is not JSON ({exc})") from None
    if not isinstance(reply, dict) or not isinstance(reply.get("modes"), list):
        raise ValueError("has no modes list")
    known = range(1, note_count + 1)
    for i, mode in enumerate(reply["modes"]):
        if not isinstance(mode, dict):
            raise ValueError(f"modes[{i}] is not an object")
        for field in ("name", "definition"):
            if not isinstance(mode.get(field), str) or not mode[field].strip():
                raise ValueError(f"modes[{i}].{field} is missing or empty")
        for field in ("include", "exclude"):
            value = mode.get(field, [])
            if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
                raise ValueError(f"modes[{i}].{field} is not a list of strings")
        numbers = mode.get("notes")
        if not isinstance(numbers, list) or not numbers:
            raise ValueError(f"modes[{i}].notes lists no note (a mode groups at least one note)")
        bad = [x for x in numbers if not isinstance(x, int) or isinstance(x, bool) or x not in known]
        if bad:
            raise ValueError(f"modes[{i}].notes has {bad}, not note numbers 1 to {note_count}")
    unplaced = reply.get("unplaced", [])
    if not isinstance(unplaced, list):
        raise ValueError("unplaced is not a list")
    for i, item in enumerate(unplaced):
        if not isinstance(item, dict) or not isinstance(item.get("note"), int) or item["note"] not in known:
            raise ValueError(f"unplaced[{i}].note is not a note number 1 to {note_count}")
    return {"modes": reply["modes"], "unplaced": unplaced}


def mode_id(name: str, taken: set[str]) -> str:
    """A failure-mode id from a drafted name: a lowercase slug, made unique with ``-2``, ``-3`` ..."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if len(slug) > MODE_ID_CHARS:
        slug = slug[:MODE_ID_CHARS].rsplit("-", 1)[0] or slug[:MODE_ID_CHARS]
    slug = slug or "mode"
    candidate, n = slug, 2
    while candidate in taken:
        candidate, n = f"{slug}-{n}", n + 1
    taken.add(candidate)
    return candidate


def _clean(items: list[str]) -> list[str]:
    return [" ".join(x.split()) for x in items if x.strip()]


def assemble_draft(reply: Mapping[str, Any], notes: Sequence[OpenNote], *, subject: str,
                   drafted_by: DraftedBy) -> DraftTaxonomy:
    """The draft from a checked reply: ids from names, examples as trace ids, every note accounted for."""
    taken: set[str] = set()
    modes, placed = [], set()
    merged: dict[str, dict[str, Any]] = {}  # modes of one name from several batches of notes are one mode
    for mode in reply["modes"]:
        key = " ".join(mode["name"].split()).lower()
        if key in merged:
            first = merged[key]
            first["notes"] = [*first["notes"], *mode["notes"]]
            first["include"] = [*first.get("include", []), *(x for x in mode.get("include", [])
                                                             if x not in first.get("include", []))]
            first["exclude"] = [*first.get("exclude", []), *(x for x in mode.get("exclude", [])
                                                             if x not in first.get("exclude", []))]
        else:
            merged[key] = dict(mode)
    for mode in merged.values():
        numbers = sorted(set(mode["notes"]))
        placed.update(numbers)
        examples = list(dict.fromkeys(notes[n - 1].trace_id for n in numbers))
        modes.append(DraftMode(id=mode_id(mode["name"], taken), name=" ".join(mode["name"].split()),
                               definition=" ".join(mode["definition"].split()),
                               include=_clean(mode.get("include", [])), exclude=_clean(mode.get("exclude", [])),
                               examples=examples))
    reasons = {item["note"]: " ".join(str(item.get("reason") or "").split()) or "no reason given"
               for item in reply["unplaced"] if item["note"] not in placed}
    unplaced = []
    for i, n in enumerate(notes, start=1):
        if i not in placed:
            reason = reasons.get(i, "the model neither placed this note nor listed it as unplaced")
            unplaced.append(UnplacedNote(trace_id=n.trace_id, annotator=n.annotator, note=n.note, reason=reason))
    return DraftTaxonomy(format=DRAFT_FORMAT, version=1, subject=subject, drafted_by=drafted_by, modes=modes,
                         unplaced=unplaced)


def _one_reply(chunks: Sequence[Sequence[OpenNote]], answers: Sequence[Any]) -> dict[str, Any]:
    """The replies to batches of notes as one reply numbered over all notes; a batch the model gave no valid
    draft for leaves its notes unplaced, saying so."""
    reply: dict[str, Any] = {"modes": [], "unplaced": []}
    offset = 0
    for chunk, answer in zip(chunks, answers, strict=True):
        if answer.output is None:
            reply["unplaced"] += [{"note": offset + j, "reason": "the model gave no valid draft for the batch of "
                                   f"notes holding it: {answer.error}"} for j in range(1, len(chunk) + 1)]
        else:
            reply["modes"] += [{**m, "notes": [offset + n for n in m["notes"]]} for m in answer.output["modes"]]
            reply["unplaced"] += [{**u, "note": offset + u["note"]} for u in answer.output["unplaced"]]
        offset += len(chunk)
    return reply


def draft_modes(annotations: Sequence[Annotation], provider: Any, *, subject: str,
                traces_by_id: Mapping[str, Trace] | None = None, include_pass: bool = False,
                cache: Any = None, journal: str | Path | None = None,
                notes_per_call: int | None = None, **judging: Any) -> DraftTaxonomy:
    """Ask ``provider`` to draft failure modes from the notes (see the module docstring).

    Args:
        annotations: the annotation store's records, in file order.
        provider: a judge provider (:func:`evalkit.judge.make_provider`); closed afterwards.
        subject: the subject the modes are of (the ratified taxonomy's ``subject``).
        traces_by_id: the traces, for the excerpts shown with the notes.
        include_pass: also notes on passing traces.
        cache: a :class:`evalkit.judge.JudgeCache`: an unchanged prompt is not asked again.
        journal: the journal a rerun takes the replies from (``DRAFT.journal.jsonl`` from the CLI).
        notes_per_call: send the notes in batches of this many, one call each (a small model's context, or
            its attention, holds few); modes of the same name from different batches become one, and the
            reviewer merges the rest when ratifying. By default every note goes in one call.
        **judging: what a judge run is measured against (:func:`evalkit.judge.judge_setup`: ``prices``,
            ``context_window``, ``strict_model``, ``warn``): the model is checked with its server, and a
            batch whose prompt cannot fit the model's context is refused without a call (its notes unplaced).

    Raises:
        InputError: no notes, or the model gave no valid draft for any batch (the error says what it answered).
    """
    from evalkit.judge import Asker, judge_setup, prompt_digest, run_coroutine

    notes = open_notes(annotations, traces_by_id, include_pass=include_pass)
    draft_prompt(notes)  # no notes: the error says what to write
    if notes_per_call is not None and notes_per_call < 1:
        raise InputError(f"notes per call must be at least 1, not {notes_per_call}", path="--notes-per-call")
    size = notes_per_call or len(notes)
    chunks = [notes[i:i + size] for i in range(0, len(notes), size)]
    prompts = [draft_prompt(chunk) for chunk in chunks]
    asked = [_Asked(tuple(m), DRAFT_SCHEMA, prompt_digest(m, DRAFT_SCHEMA)) for m in prompts]
    try:
        setup = judge_setup(provider, **judging)
        asker = Asker(provider, journal=journal, kind="draftJournal", noun="draft-modes",
                      parse=lambda text: parse_draft_reply(text, size), cache=cache, concurrency=1,
                      prices=setup.prices, counter=setup.counter, context=setup.context)
    except BaseException:
        run_coroutine(provider.aclose())
        raise

    def checked(count: int) -> Any:
        return lambda text: parse_draft_reply(text, count)

    async def ask_each() -> list[Any]:
        try:
            return [await asker.ask(a, label=f"draft-modes:{i}", parse=checked(len(chunk)))
                    for i, (a, chunk) in enumerate(zip(asked, chunks, strict=True))]
        finally:
            asker.close()
            await provider.aclose()

    answers = run_coroutine(ask_each())
    if all(a.output is None for a in answers):
        raise InputError(f"{provider.name}/{provider.model} gave no valid draft: {answers[0].error}; try a larger "
                         "model, or fewer notes per call (--notes-per-call)", path="draft")
    digest = asked[0].digest if len(asked) == 1 else "sha256:" + hashlib.sha256(
        "\n".join(a.digest for a in asked).encode("utf-8")).hexdigest()
    extra = {} if len(answers) == 1 else {"calls": len(answers)}
    by = DraftedBy(provider=provider.name, model=provider.model, temperature=float(provider.temperature),
                   prompt_digest=digest, notes=len(notes), notes_digest=notes_digest(notes), **extra)
    return assemble_draft(_one_reply(chunks, answers), notes, subject=subject, drafted_by=by)


@dataclass(frozen=True)
class _Asked:
    """One batch's prompt as :class:`evalkit.judge.Asker` asks it."""

    messages: tuple[dict[str, str], ...]
    schema: dict[str, Any]
    digest: str


def draft_yaml(draft: DraftTaxonomy) -> str:
    """The draft as YAML, in the contract's field order (the same draft, the same bytes)."""
    import yaml

    return yaml.safe_dump(draft.to_json_obj(), sort_keys=False, allow_unicode=True, width=100)


def draft_digest(draft: DraftTaxonomy) -> str:
    """``sha256:`` of the draft's canonical JSON: what a ratification names as the draft it decided on."""
    text = compact_sorted_json(draft.model_dump(mode="json", by_alias=True, exclude={"schema_uri"}))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_draft(path: str | Path) -> DraftTaxonomy:
    """Read a draft (YAML or JSON).

    Raises:
        InputError: naming the file and the field of the first problem.
    """
    from evalkit.contract_files import read_model

    return read_model(path, DraftTaxonomy)
