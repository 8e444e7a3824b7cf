"""Reading records from JSON, JSONL and YAML files, each with the line it starts on.

A record is one value to validate: the whole document of a JSON file, one line of a JSONL file, or
one document of a (multi-document) YAML file. YAML is read as strictly as JSON, within bounds on size
and aliases (:mod:`evalkit.io.yaml_text`): duplicate keys and a byte-order mark are errors, and a value
must be one JSON could hold, as :mod:`evalkit.io.json_values` says (string keys, finite numbers, no sets,
bytes or timestamps, bounded nesting).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.errors import InputError
from evalkit.io.regular import open_regular
from evalkit.io.strict_json import iter_jsonl_strict, loads_strict
from evalkit.io.yaml_text import check_yaml_size, yaml_documents, yaml_limit


@dataclass(frozen=True)
class Record:
    """One value read from a file; ``line`` is where it starts (None for a whole JSON document), and
    ``lines`` the line of each field path in it where the format tells (YAML)."""

    value: Any
    line: int | None = None
    lines: dict[str, int] = field(default_factory=dict, compare=False, repr=False)


def document_format(path: str | Path) -> str:
    """``json``, ``jsonl`` or ``yaml`` from the file's extension."""
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix in (".yaml", ".yml"):
        return "yaml"
    return "json"


def _read_yaml(path: Path, kind: str | None) -> list[Record]:
    limit = yaml_limit(kind)
    with open_regular(path) as fh:
        data = fh.read(limit + 1)  # never more than the limit: a file past it is refused unread
        if len(data) > limit:
            check_yaml_size(os.fstat(fh.fileno()).st_size, kind, str(path))
    return [Record(doc.value, doc.line, doc.lines) for doc in yaml_documents(data, file=str(path), kind=kind)]


def read_records(path: str | Path, fmt: str | None = None, *, kind: str | None = None) -> list[Record]:
    """All records of a JSON, JSONL or YAML file.

    Args:
        path: the file.
        fmt: ``json``, ``jsonl`` or ``yaml``; guessed from the extension when None.
        kind: what the file holds (a contract's kind, ``prices``, ``chat-mapping``): sets a YAML file's size
            limit (:data:`evalkit.io.yaml_text.YAML_LIMITS`).

    Raises:
        InputError: the file cannot be read or parsed; the error names file and line.
    """
    p = Path(path)
    fmt = fmt or document_format(p)
    if fmt == "jsonl":
        return [Record(value, line) for line, value in iter_jsonl_strict(p)]
    if fmt == "yaml":
        return _read_yaml(p, kind)
    with open_regular(p) as fh:
        data = fh.read()
    return [Record(loads_strict(data, file=str(p)))]


def read_document(path: str | Path, *, kind: str | None = None) -> Any:
    """The single document of a JSON or YAML file (an error if a YAML file holds several)."""
    records = read_records(path, kind=kind)
    if len(records) != 1:
        raise InputError(f"expected one document, found {len(records)}", file=str(path))
    return records[0].value
