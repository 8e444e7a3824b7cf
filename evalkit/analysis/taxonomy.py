"""The failure-mode taxonomy: reading it, checking labels against it, and mapping notes onto modes.

Open coding leaves a note on each failing trace; axial coding groups the notes into modes. A taxonomy's
``noteRules`` make that grouping repeatable: each rule maps notes matching a pattern onto one mode.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from evalkit.analysis.store import latest
from evalkit.contract_files import read_model
from evalkit.contracts.annotation import Annotation, Taxonomy
from evalkit.errors import InputError

TAXONOMY_SHAPE = ("a failure-mode taxonomy is an object: subject (the subject's name), version (an integer) "
                  "and modes, a list of {id, name, definition, examples}; see the README's failure-mode "
                  "taxonomy, or data/sample/failure-modes.yaml")
"""What a taxonomy file holds, said with every error reading one (its ``subject`` is not the subject file)."""


def read_taxonomy(path: str | Path) -> Taxonomy:
    """Read a taxonomy file (YAML or JSON).

    Raises:
        InputError: naming the file and the field path of the first problem, and what a taxonomy holds.
    """
    try:
        return read_model(path, Taxonomy)
    except InputError as exc:
        message = exc.message
        if "valid dictionary" in message:
            message = "this file is not an object (a list of modes? put it under modes:)"
        elif "required field is missing" not in message and "unknown field" not in message:
            raise  # a rule of the taxonomy (a cycle, a duplicate id) says enough
        raise InputError(f"{message} ({TAXONOMY_SHAPE})", file=exc.file, line=exc.line, path=exc.path) from None


def unknown_modes(annotations: Iterable[Annotation], taxonomy: Taxonomy) -> list[str]:
    """Failure-mode ids that annotations use but the taxonomy does not define, sorted."""
    known = set(taxonomy.mode_ids())
    return sorted({m for a in annotations for m in a.modes if m not in known})


def check_modes(annotations: Sequence[Annotation], taxonomy: Taxonomy, *, file: str | None = None,
                line_of: Callable[[Annotation], int | None] | None = None) -> None:
    """Refuse annotations whose modes the taxonomy does not define.

    Args:
        annotations: the annotations to check.
        taxonomy: the failure modes they may name.
        file: where the annotations were read from, named in the error.
        line_of: the line of ``file`` an annotation is on (a store's
            :meth:`~evalkit.analysis.store.StoreContents.line_of`); the error then names ``FILE:LINE``
            and the field within that record, instead of the annotation's position in the list.

    Raises:
        InputError: naming the first such annotation (its line, or its position) and the mode.
    """
    known = set(taxonomy.mode_ids())
    for i, annotation in enumerate(annotations):
        for j, mode in enumerate(annotation.modes):
            if mode not in known:
                line = line_of(annotation) if line_of is not None else None
                raise InputError(f"unknown failure mode {mode!r} (taxonomy has: {', '.join(sorted(known))})",
                                 file=file, line=line,
                                 path=f"modes[{j}]" if line is not None else f"annotations[{i}].modes[{j}]")


def descendants(taxonomy: Taxonomy, mode_id: str) -> set[str]:
    """A mode and every mode below it."""
    children: dict[str, list[str]] = {}
    for m in taxonomy.modes:
        if m.parent is not None:
            children.setdefault(m.parent, []).append(m.id)
    out, stack = set(), [mode_id]
    while stack:
        current = stack.pop()
        if current not in out:
            out.add(current)
            stack.extend(children.get(current, []))
    return out


def modes_for_note(note: str | None, taxonomy: Taxonomy) -> list[str]:
    """The modes whose note rules match ``note`` (case-insensitive), in taxonomy order."""
    if not note:
        return []
    hits = {rule.mode for rule in taxonomy.note_rules or [] if re.search(rule.pattern, note, re.IGNORECASE)}
    return [m for m in taxonomy.mode_ids() if m in hits]


def axial_code(annotations: Iterable[Annotation], taxonomy: Taxonomy, at: str) -> list[Annotation]:
    """New records that tag open-coded fails with the modes their notes map to.

    Only the latest fail per (trace, annotator) that has a note and no modes yet is coded; the result is
    meant to be appended to the store (the original records stay).

    Args:
        annotations: records in file order.
        taxonomy: the taxonomy whose ``noteRules`` map notes to modes.
        at: the time to stamp on the new records (injected).
    """
    coded = []
    for a in latest(annotations):
        if a.label == "fail" and not a.modes:
            modes = modes_for_note(a.note, taxonomy)
            if modes:
                coded.append(Annotation.model_validate(a.to_json_obj() | {"modes": modes, "at": at}))
    return coded


def uncoded_fails(annotations: Iterable[Annotation]) -> list[Annotation]:
    """The latest fails that name no failure mode yet: notes still waiting for a mode."""
    return [a for a in latest(annotations) if a.label == "fail" and not a.modes]
