"""Validating files against contracts, with one located problem per error.

Every problem renders as ``FILE[:LINE]: field.path: message`` so a user can go straight to it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from evalkit.contracts.registry import CONTRACTS, LIST_ROOTED, kind_from_filename, kinds_matching
from evalkit.errors import InputError
from evalkit.io.append_only import read_store_lines
from evalkit.io.documents import Record, document_format, read_records
from evalkit.io.strict_json import iter_jsonl_strict
from evalkit.io.validation import (  # noqa: F401  (other packages read them from here too)
    loc_to_path,
    validate_value,
    validation_problems,
)

M = TypeVar("M", bound=BaseModel)

def kind_of(model: type[BaseModel]) -> str | None:
    """The kind name of a contract (None for a model that is not one)."""
    return next((kind for kind, contract in CONTRACTS.items() if contract is model), None)


def detect_kind(path: str | Path, records: Sequence[Record]) -> str:
    """The kind of a file, from its name or else from its records' keys.

    Raises:
        InputError: when the name says nothing and the content fits no kind or several.
    """
    by_name = kind_from_filename(Path(path).name)
    if by_name:
        return by_name
    candidates: set[str] = set()
    for record in records[:50]:
        value = record.value
        items = value if isinstance(value, list) and not kinds_matching(value) else [value]
        for item in items[:50]:
            candidates.update(kinds_matching(item))
    if len(candidates) == 1:
        return candidates.pop()
    if not candidates:
        raise InputError("cannot tell which contract this file follows; pass --kind "
                         f"(one of: {', '.join(CONTRACTS)})", file=str(path))
    raise InputError(f"ambiguous contract ({', '.join(sorted(candidates))}); pass --kind", file=str(path))


APPEND_ONLY_KINDS = frozenset({"annotation", "human-label", "criterion-verdict", "ledger-entry"})
"""Kinds kept in append-only stores (:mod:`evalkit.io.append_only`), whose cut-off final line is repaired."""


ONE_DOCUMENT_KINDS = frozenset({"subject", "eval-matrix", "taxonomy", "expected-flow", "behavior-tree", "scorecard",
                                "methodology-review", "notebook-summary", "review-export", "skill-eval-policy",
                                "skill-eval-report", "skill-eval-stage"})
"""Kinds whose file is one document (the commands read them with :func:`read_model`)."""


def _repeated_ids(kind: str, records: list[Record], file: str) -> list[InputError]:
    """A judge spec file's second spec for one criterion, which ``judge run`` refuses."""
    if kind != "judge-spec":
        return []
    from evalkit.contracts.judge import spec_id_repeated

    problems, first_line = [], {}
    for record in records:
        for i, value in enumerate(record.value if isinstance(record.value, list) else [record.value]):
            spec_id = value.get("id") if isinstance(value, dict) else None
            if not isinstance(spec_id, str):
                continue
            if spec_id in first_line:
                path = f"[{i}].id" if isinstance(record.value, list) else "id"
                problems.append(InputError(spec_id_repeated(spec_id, first_line[spec_id]), file=file,
                                           line=record.line, path=path))
            else:
                first_line[spec_id] = record.line
    return problems


def validate_file(path: str | Path, kind: str | None = None, *,
                  notes: list[InputError] | None = None) -> tuple[str | None, int, list[InputError]]:
    """Validate every record of a file.

    Args:
        path: a JSON, JSONL or YAML file.
        kind: the contract's kind; detected from the file when None.
        notes: receives what is not a problem but left out: the final line of an append-only store
            cut off by an interrupted write, which every reader leaves out and the next append drops.
            Without ``notes`` (or for other kinds, whose readers refuse it) it is a problem.

    Returns:
        ``(kind, number of records checked, problems)``; kind is None when it could not be read.
    """
    file = str(path)
    cut_off = None
    problems: list[InputError] = []
    try:
        if document_format(path) == "jsonl":
            values, cut_off = read_store_lines(path, missing_ok=False)
            records = [Record(value, line) for line, value in values]
        else:
            records = read_records(path, kind=kind)
        kind = kind or detect_kind(path, records)
    except InputError as exc:
        return None, 0, [exc]
    if cut_off is not None:
        store = kind in APPEND_ONLY_KINDS
        fate = ("left out by every reader of an append-only store, dropped by its next append" if store
                else "the file ends in the middle of a record")
        note = InputError(f"line cut off by an interrupted write ({cut_off.size} bytes, not a record): {fate}",
                          file=file, line=cut_off.line)
        (notes if notes is not None and store else problems).append(note)
    if kind not in CONTRACTS:
        return None, 0, [InputError(f"unknown kind {kind!r} (one of: {', '.join(CONTRACTS)})", file=file)]
    model = CONTRACTS[kind]
    if kind in ONE_DOCUMENT_KINDS and len(records) > 1:  # as read_model refuses it for every command
        problems.append(InputError(f"expected one document, found {len(records)}", file=file,
                                   line=records[1].line))
    problems += _repeated_ids(kind, records, file)
    count = 0
    for record in records:
        value = record.value
        if isinstance(value, list) and kind not in LIST_ROOTED:
            for i, item in enumerate(value):
                count += 1
                problems += validate_value(model, item, file=file, line=record.line, prefix=f"[{i}]",
                                       lines=record.lines)[1]
        else:
            count += 1
            problems += validate_value(model, value, file=file, line=record.line, lines=record.lines)[1]
    if count == 0:
        problems.append(InputError("no records found", file=file))
    return kind, count, problems


def read_model(path: str | Path, model: type[M]) -> M:
    """Read one document (JSON or YAML) as ``model``.

    Raises:
        InputError: naming the file and the first problem's field path.
    """
    records = read_records(path, kind=kind_of(model))
    if len(records) != 1:
        raise InputError(f"expected one document, found {len(records)}", file=str(path))
    obj, problems = validate_value(model, records[0].value, file=str(path), line=records[0].line,
                                   lines=records[0].lines)
    if problems:
        raise problems[0]
    assert obj is not None
    return obj


def iter_located_models(path: str | Path, model: type[M],
                        fmt: str | None = None) -> Iterator[tuple[M, int | None, str]]:
    """Every record of a JSONL, JSON or YAML file as ``(model, line, prefix)``: where it stands, for errors
    about it that only its reader can find (a duplicate id); ``prefix`` is ``[i]`` for the items of a
    JSON array, else empty.

    JSONL files are read line by line, never whole. ``fmt`` (json, jsonl, yaml) overrides the
    format the extension implies.

    Raises:
        InputError: the first problem, rendered as ``FILE:LINE: field.path: message``.
    """
    file = str(path)
    fmt = fmt or document_format(path)
    records = (Record(v, line) for line, v in iter_jsonl_strict(path)) if fmt == "jsonl" \
        else iter(read_records(path, fmt, kind=kind_of(model)))
    for record in records:
        many = isinstance(record.value, list)
        for i, item in enumerate(record.value if many else [record.value]):
            prefix = f"[{i}]" if many else ""
            obj, problems = validate_value(model, item, file=file, line=record.line, prefix=prefix,
                                           lines=record.lines)
            if problems:
                raise problems[0]
            assert obj is not None
            yield obj, record.line, prefix


def iter_models(path: str | Path, model: type[M], fmt: str | None = None) -> Iterator[M]:
    """Every record of a JSONL, JSON or YAML file as ``model``; a JSON array holds one per item
    (see :func:`iter_located_models`)."""
    for obj, _, _ in iter_located_models(path, model, fmt):
        yield obj


def read_models(path: str | Path, model: type[M], fmt: str | None = None) -> list[M]:
    """All records of a file as ``model`` (see :func:`iter_models`)."""
    return list(iter_models(path, model, fmt))
