"""Verdict files for comparisons, written the way a judge run writes them (one CriterionVerdict per line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def verdict(crit: str, trace: str, result: str, critique: str | None = None) -> dict:
    v = {"criterionId": crit, "traceId": trace, "result": result, "confidence": None,
         "critique": critique if critique is not None else f"{result} on {trace}"}
    if result == "uncertain":
        v["blockedBy"] = {"kind": "normative", "text": "repeats disagree"}
    return v


def run_of(outcomes: list[str], crit: str = "cites-order-id", prefix: str = "t") -> list[dict]:
    """One verdict per outcome letter: p pass, f fail, u uncertain; trace ids t000, t001, ..."""
    names = {"p": "pass", "f": "fail", "u": "uncertain"}
    return [verdict(crit, f"{prefix}{i:03d}", names[o]) for i, o in enumerate(outcomes)]


@pytest.fixture
def write_run(tmp_path):
    def write(name: str, records: list[dict]) -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        return path
    return write
