"""Run folders and verdict files shaped as evalkit writes them, built without papermill (fast tests)."""

from __future__ import annotations

from pathlib import Path

from evalkit.contracts.subject import JudgeSettings
from evalkit.contracts.summary import (
    CriterionHeadline,
    Headline,
    InputDigest,
    ModeHeadline,
    NotebookRun,
    RunManifest,
)
from evalkit.io import atomic_write_text, canonical_dumps, canonical_line
from evalkit.report import SummaryBuilder


def write_verdicts(path: Path, results: dict[str, str]) -> Path:
    """A criterion-verdict JSONL: ``{criterion: "ppf..."}`` gives trace ``tr-000i`` result p/f/u."""
    names = {"p": "pass", "f": "fail", "u": "uncertain"}
    lines = []
    for criterion, letters in results.items():
        for i, letter in enumerate(letters):
            record = {"criterionId": criterion, "traceId": f"tr-{i:04d}", "result": names[letter],
                      "confidence": 0.9, "critique": f"{criterion} on trace {i}"}
            if letter == "u":
                record["blockedBy"] = {"kind": "scope", "text": "not in the trace"}
            lines.append(canonical_line(record))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), encoding="utf-8")
    return path


def rate(criterion: str, value: float, lo: float, hi: float, *, judge: str | None = "sim prompt sha256:aaaa",
         corrected: bool = True) -> CriterionHeadline:
    return CriterionHeadline(criterion=criterion, rate=value, lo=lo, hi=hi, corrected=corrected, observed=value,
                             n=100, status="validated", judge=judge)


def write_run_folder(folder: Path, *, subject: str = "support-agent", run_at: str | None = None,
                     criteria: list[CriterionHeadline] = (), modes: list[ModeHeadline] = (),
                     gate: str | None = None, failed: str | None = None, digest: str = "a" * 64) -> Path:
    """A finished run folder: run.json, one summary per headline part, and an index.html."""
    folder.mkdir(parents=True, exist_ok=True)
    notebooks = []
    parts = [("01_error_analysis", Headline(failure_modes=list(modes))),
             ("02_judge_calibration", Headline(criteria=list(criteria))),
             ("04_scorecard", Headline(gate=gate, gate_reasons=["C1 agent: HIGH grounded failed"] if gate else []))]
    for name, headline in parts:
        if name == failed:
            notebooks.append(NotebookRun(name=name, status="failed", error=f"{name}: cell 3 raised ValueError: boom"))
            continue
        summary = SummaryBuilder(name, name, subject)
        summary.headline(headline)
        summary.conclude("done")
        (folder / name).mkdir(exist_ok=True)
        summary.write(folder / name)
        notebooks.append(NotebookRun(name=name, status="ok"))
    manifest = RunManifest(subject=subject, evalkit_version="0", run_at=run_at, seed=7,
                           judge=JudgeSettings(provider="simulated", model="sim-judge"),
                           inputs=[InputDigest(field="traces", path="traces.jsonl", sha256=digest, bytes=10)],
                           notebooks=notebooks)
    atomic_write_text(folder / "run.json", canonical_dumps(manifest.model_dump(mode="json")))
    atomic_write_text(folder / "index.html", "<!DOCTYPE html><title>report</title>\n")
    return folder
