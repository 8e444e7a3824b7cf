"""JSON Schema export: one ``<kind>.schema.json`` per contract, written canonically."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalkit.contracts.registry import CONTRACTS
from evalkit.errors import InputError
from evalkit.io.atomic import atomic_write_text
from evalkit.io.canonical import canonical_dumps

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def contract_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of one contract kind, with its on-disk field names."""
    schema = CONTRACTS[kind].model_json_schema(by_alias=True, mode="validation")
    return {"$schema": SCHEMA_DIALECT, "$id": f"evalkit/{kind}", **schema}


def write_schemas(out_dir: str | Path) -> list[Path]:
    """Write every contract's schema into ``out_dir``; returns the paths written, in kind order."""
    out = Path(out_dir)
    written = []
    for kind in CONTRACTS:
        path = out / f"{kind}.schema.json"
        try:
            atomic_write_text(path, canonical_dumps(contract_schema(kind)))
        except OSError as exc:
            raise InputError(f"cannot write schema: {exc.strerror or exc}", file=str(path)) from None
        written.append(path)
    return written
