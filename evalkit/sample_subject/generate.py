"""Generating the sample subject: build every file in memory, validate each against its contract, write.

A file whose content does not validate, or does not round-trip byte-identically through its contract,
stops the generation before anything is written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from evalkit.contracts.annotation import Annotation, Taxonomy
from evalkit.contracts.behavior_tree import BehaviorTree
from evalkit.contracts.dataset import Dataset
from evalkit.contracts.flow import ExpectedFlow
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.matrix import EvalMatrix
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import SampleContractError
from evalkit.io import atomic_write_text, canonical_dumps, canonical_line
from evalkit.sample_subject.agent import simulate_traces
from evalkit.sample_subject.agent_spec import AgentSpec, default_spec
from evalkit.sample_subject.annotations import build_taxonomy, simulate_annotations
from evalkit.sample_subject.catalog import JUDGE_ITERATIONS, SUBJECT
from evalkit.sample_subject.drafter import draft_cassette, sample_draft
from evalkit.sample_subject.judge_files import judge_cassette, judge_specs_yaml, replayed_verdicts
from evalkit.sample_subject.judging import judge_run_file, simulate_labels, simulate_verdicts
from evalkit.sample_subject.readme import readme_text, subject_yaml
from evalkit.sample_subject.specs import (
    build_behavior_tree,
    build_dataset,
    build_eval_matrix,
    build_expected_flow,
)
from evalkit.sample_subject.truth import build_ground_truth
from evalkit.sample_subject.writer_cassette import writer_cassette


@dataclass(frozen=True)
class SampleFile:
    """One file of the sample: its name, its text, and how many records it holds (None: not a record file)."""

    name: str
    text: str
    records: int | None = None


def _checked(name: str, contract: type[BaseModel], obj: Any, where: str) -> None:
    try:
        again = contract.model_validate(obj).to_json_obj()  # type: ignore[attr-defined]
    except ValidationError as exc:
        raise SampleContractError(f"{name}: {where}: not a valid {contract.__name__}: {exc}") from None
    if again != obj:
        raise SampleContractError(f"{name}: {where}: does not round-trip through {contract.__name__}")


def _jsonl(name: str, contract: type[BaseModel], models: Sequence[BaseModel]) -> SampleFile:
    lines = []
    for i, model in enumerate(models, 1):
        obj = model.to_json_obj()  # type: ignore[attr-defined]
        line = canonical_line(obj)
        _checked(name, contract, json.loads(line), f"line {i}")
        lines.append(line)
    return SampleFile(name, "".join(lines), len(lines))


def _json(name: str, contract: type[BaseModel], model: BaseModel) -> SampleFile:
    text = canonical_dumps(model.to_json_obj())  # type: ignore[attr-defined]
    _checked(name, contract, json.loads(text), "document")
    return SampleFile(name, text)


def _yaml(name: str, contract: type[BaseModel], model: BaseModel) -> SampleFile:
    text = yaml.safe_dump(model.to_json_obj(), sort_keys=True, allow_unicode=True,  # type: ignore[attr-defined]
                          default_flow_style=False, width=100)
    _checked(name, contract, yaml.safe_load(text), "document")
    return SampleFile(name, text)


def build_sample(seed: int, trace_count: int) -> list[SampleFile]:
    """Every file of the sample subject, validated, sorted by name."""
    if trace_count < 1:
        raise ValueError("trace_count: must be at least 1")
    traces = simulate_traces(seed, trace_count)
    labels = simulate_labels(traces, seed)
    verdicts = simulate_verdicts(traces, seed)
    # Earlier prompts were only ever scored on dev: that is where a judge prompt is iterated on.
    dev = {(lab.criterion_id, lab.trace_id) for lab in labels if lab.split == "dev"}
    earlier = [(name, [v for v in simulate_verdicts(traces, seed, targets, prompt=name)
                       if (v.criterion_id, v.trace_id) in dev])
               for name, targets in JUDGE_ITERATIONS]
    annotations = simulate_annotations(traces, seed)
    truth = build_ground_truth(traces, labels, verdicts, seed, annotations)
    # The current judge's verdicts are the runner's: replayed from the cassette the simulated judge fills.
    cassette = judge_cassette(traces, verdicts)
    verdicts_text, runs_text = replayed_verdicts(traces, cassette)
    dataset, taxonomy, matrix = build_dataset(seed), build_taxonomy(), build_eval_matrix()
    writer = writer_cassette(dataset, taxonomy, matrix)  # what `dataset generate` replays on the sample
    files = [
        _jsonl("traces.jsonl", Trace, sorted(traces, key=lambda t: t.id)),
        _jsonl("human-labels.jsonl", HumanLabel,
               sorted(labels, key=lambda lab: (lab.criterion_id or "", lab.trace_id))),
        SampleFile("criterion-verdicts.jsonl", verdicts_text, verdicts_text.count("\n")),
        SampleFile("criterion-verdicts.runs.jsonl", runs_text, runs_text.count("\n")),
        SampleFile("judge-cassette.jsonl", cassette, cassette.count("\n")),
        SampleFile("judge-specs.yaml", judge_specs_yaml()),
        *(_jsonl(judge_run_file(name), CriterionVerdict, sorted(run, key=lambda v: (v.criterion_id, v.trace_id)))
          for name, run in earlier),
        # An append-only store: its order is the order the reviews happened, not sorted.
        _jsonl("annotations.jsonl", Annotation, annotations),
        _yaml("failure-modes.yaml", Taxonomy, taxonomy),
        SampleFile("draft-cassette.jsonl", draft_cassette(annotations, traces), 1),
        SampleFile("draft-modes.yaml", sample_draft(annotations, traces, SUBJECT)),
        _yaml("eval-matrix.yaml", EvalMatrix, matrix),
        _json("dataset.json", Dataset, dataset),
        SampleFile("writer-cassette.jsonl", writer, writer.count("\n")),
        _yaml("agent-spec.yaml", AgentSpec, default_spec(seed)),
        _json("expected-flow.json", ExpectedFlow, build_expected_flow()),
        _json("behavior-tree.json", BehaviorTree, build_behavior_tree()),
        SampleFile("ground-truth.json", canonical_dumps(truth)),
        SampleFile("subject.yaml", subject_yaml(seed)),
        SampleFile("README.md", readme_text(truth, trace_count, seed)),
    ]
    return sorted(files, key=lambda f: f.name)


def write_files(out: str | Path, files: Sequence[SampleFile]) -> list[Path]:
    """Write ``files`` into ``out`` (created when missing), each atomically; returns the paths written."""
    paths = []
    for f in files:
        path = Path(out) / f.name
        atomic_write_text(path, f.text)
        paths.append(path)
    return paths


def write_sample(out: str | Path, seed: int, trace_count: int) -> list[Path]:
    """Generate the sample into ``out``; returns the paths written."""
    return write_files(out, build_sample(seed, trace_count))
