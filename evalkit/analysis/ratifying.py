"""From a draft to a taxonomy: only what a person decided, mode by mode, becomes a failure mode.

The review page exports a :class:`~evalkit.contracts.Ratification`: one decision per drafted mode (accept,
rename, merge, split, reject), who made it and when, and the reviewer's coding of the noted traces with the
ratified modes. :func:`ratify` checks it against the draft it names and builds the taxonomy from the
decisions alone; a drafted mode without a decision stops it.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.analysis.drafting import draft_digest
from evalkit.contracts.annotation import FailureMode, Taxonomy
from evalkit.contracts.modes import DraftTaxonomy, Ratification
from evalkit.errors import InputError


def read_ratification(path: str | Path) -> Ratification:
    """Read a ratification the review page exported.

    Raises:
        InputError: naming the file and the field of the first problem.
    """
    from evalkit.contract_files import read_model

    return read_model(path, Ratification)


def ratify(draft: DraftTaxonomy, ratification: Ratification, *, version: int = 1) -> Taxonomy:
    """The taxonomy the decisions make of the draft.

    Args:
        draft: the draft the reviewer decided on.
        ratification: the page's export.
        version: the taxonomy's version.

    Raises:
        InputError: decisions on another draft, a drafted mode decided twice or not at all, a merge into a
            mode that is not kept, or two ratified modes with one id.
    """
    if ratification.draft_digest != draft_digest(draft):
        raise InputError(f"these decisions were made on another draft ({ratification.draft_digest}, this draft "
                         f"is {draft_digest(draft)}): ratify this draft in the review page", path="draftDigest")
    drafted = {m.id: m for m in draft.modes}
    decided: dict[str, int] = {}
    for i, decision in enumerate(ratification.decisions):
        if decision.draft_mode not in drafted:
            raise InputError(f"no drafted mode {decision.draft_mode!r} in the draft",
                             path=f"decisions[{i}].draftMode")
        if decision.draft_mode in decided:
            raise InputError(f"drafted mode {decision.draft_mode!r} is decided twice (also decisions"
                             f"[{decided[decision.draft_mode]}])", path=f"decisions[{i}].draftMode")
        decided[decision.draft_mode] = i
    missing = [m for m in drafted if m not in decided]
    if missing:
        raise InputError(f"no decision on drafted mode(s) {', '.join(missing)}: nothing drafted becomes a failure "
                         "mode, or is dropped, without a person deciding", path="decisions")
    by_mode = {d.draft_mode: d for d in ratification.decisions}
    merged: dict[str, list[str]] = {}
    for i, decision in enumerate(ratification.decisions):
        if decision.action == "merge":
            target = by_mode.get(decision.into or "")
            if target is None or target.action not in ("accept", "rename"):
                raise InputError(f"{decision.draft_mode!r} is merged into {decision.into!r}, which is not a mode "
                                 "kept whole (accepted or renamed)", path=f"decisions[{i}].into")
            merged.setdefault(decision.into or "", []).extend(drafted[decision.draft_mode].examples)
    modes: list[FailureMode] = []
    seen: dict[str, str] = {}
    for decision in ratification.decisions:
        for part in decision.parts:
            if part.id in seen:
                raise InputError(f"ratified mode id {part.id!r} comes from {seen[part.id]!r} and "
                                 f"{decision.draft_mode!r}: give one of them another name", path="decisions")
            seen[part.id] = decision.draft_mode
            examples = list(dict.fromkeys([*part.examples, *merged.get(decision.draft_mode, [])]))
            rules = {k: v for k, v in (("include", part.include), ("exclude", part.exclude)) if v}
            modes.append(FailureMode(id=part.id, name=part.name, definition=part.definition, examples=examples,
                                     **rules))
    if not modes:
        raise InputError("every drafted mode was rejected: a taxonomy needs at least one mode", path="decisions")
    return Taxonomy(subject=draft.subject, version=version, modes=modes)


def taxonomy_yaml(taxonomy: Taxonomy) -> str:
    """A taxonomy as YAML (keys sorted, as the sample's ``failure-modes.yaml``)."""
    import yaml

    return yaml.safe_dump(taxonomy.to_json_obj(), sort_keys=True, allow_unicode=True, width=100)
