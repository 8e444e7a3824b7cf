"""``evalkit eval run``: the agent on the suite's cases, then the matrix's checks over the traces it wrote.

One call, :func:`eval_subject`, writes an eval-run folder::

    OUT/runs.jsonl, OUT/traces.jsonl, OUT/work/   the agent runs (evalkit.suite.run_subject)
    OUT/judge/verdicts.jsonl (+ sidecars)          the judge run, when the subject lists judge specs
    OUT/verdicts.jsonl                             every verdict the scorecard counts (code and judge)
    OUT/scorecard.json, OUT/card.txt               the gate, as a contract file and as the 60-column card
    OUT/manifest.json                              inputs (sha256), options, counts, what was skipped and why

Judge criteria without a spec (or with the judge switched off) are ``skipped`` and a warning on the card
says why; nothing falls back silently. A rerun into the same folder reuses finished agent runs and judge
replies (journal), so the same inputs give byte-identical files.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.checks.batch_judge import BatchJudged, batch_judge
from evalkit.checks.judges import read_judges, with_judges
from evalkit.checks.regressions import regression_set
from evalkit.checks.router import Judge, Outcome, RoutedCriterion, decide, route
from evalkit.checks.run import write_scorecard
from evalkit.checks.scorecard import build_scorecard, tally_outcomes
from evalkit.checks.variance import case_of_metadata, outcome_results, repeat_stability
from evalkit.contracts.judge import JudgeSpec
from evalkit.contracts.scorecard import Scorecard
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.io import InputError, atomic_write_text, canonical_dumps, canonical_line

FILES = ("runs.jsonl", "traces.jsonl", "verdicts.jsonl", "scorecard.json", "card.txt", "manifest.json")
"""What an eval-run folder holds (besides ``work/`` and ``judge/``)."""
NOT_RECORDED = "time not recorded"
"""The scorecard's ``generatedAt`` when no ``--at`` was given: reruns stay byte-identical."""


@dataclass(frozen=True)
class EvalRun:
    """What :func:`eval_subject` did: the scorecard, the outcomes behind it, and the files it wrote."""

    scorecard: Scorecard
    outcomes: list[Outcome]
    traces: list[Trace]
    run_counts: dict[str, int]
    reused_runs: int
    judged_pairs: int
    out: Path


def score_outcomes(routed: Sequence[RoutedCriterion], traces: Iterable[Trace], judge: Judge | None,
                   judged: Iterable[str], skip_note: str) -> list[Outcome]:
    """Every criterion on every trace; judge criteria not in ``judged`` are skipped with ``skip_note``."""
    judged = set(judged)
    out: list[Outcome] = []
    for trace in traces:
        for rc in routed:
            outcome = decide(rc, trace, judge if rc.criterion_id in judged else None)
            if outcome.status == "skipped":
                outcome = dataclasses.replace(outcome, note=skip_note)
            out.append(outcome)
    return out


def write_verdicts(path: Path, outcomes: Iterable[Outcome]) -> int:
    """The verdicts behind the outcomes, sorted by (criterion, trace), as ``criterion-verdict`` JSONL."""
    verdicts = sorted((o.verdict for o in outcomes if o.verdict is not None),
                      key=lambda v: (v.criterion_id, v.trace_id))
    atomic_write_text(path, "".join(canonical_line(v.to_json_obj()) for v in verdicts))
    return len(verdicts)


def read_specs(paths: Iterable[Path]) -> dict[str, JudgeSpec]:
    """Judge specs by criterion id, from the subject's spec files.

    Raises:
        InputError: two specs for one criterion.
    """
    from evalkit.judge import read_judge_specs

    specs: dict[str, JudgeSpec] = {}
    for path in paths:
        for spec in read_judge_specs(path):
            if spec.id in specs:
                raise InputError(f"a second judge spec for criterion {spec.id!r}", file=str(path))
            specs[spec.id] = spec
    return specs


def judge_calibrations(labels: list[Any], verdicts: list[CriterionVerdict], criteria: Iterable[str]) -> dict[str, Any]:
    """The judge's calibration per judged criterion, from the subject's labels and judge verdicts."""
    from evalkit.calibration import calibrate_criterion

    out: dict[str, Any] = {}
    for cid in criteria:
        mine_l = [lab for lab in labels if lab.criterion_id == cid]
        mine_v = [v for v in verdicts if v.criterion_id == cid]
        if not mine_l or not mine_v:
            continue
        try:
            out[cid] = calibrate_criterion(mine_l, mine_v, criterion_id=cid)
        except InputError:
            continue  # too few labels to measure: the scorecard says "no validated judge"
    return out


def eval_subject(subject_file: str | Path, out_dir: str | Path, *, repeats: int = 1, concurrency: int = 4,
                 case_ids: Sequence[str] | None = None, generated_at: str | None = None,
                 provider: Any = None, use_judge: bool = True, judge_concurrency: int = 8,
                 progress: bool = False, history: str | Path | None = None) -> EvalRun:
    """Run the subject's agent on its cases and score the traces against its eval matrix.

    Args:
        subject_file: the subject (needs ``agent``, ``dataset`` and ``eval_matrix``).
        out_dir: the eval-run folder (see the module docstring); reused on a rerun.
        repeats, concurrency, case_ids: passed to :func:`evalkit.suite.run_subject`.
        generated_at: the timestamp recorded on the scorecard (default: none is recorded).
        provider: the judge provider for the subject's judge specs; None with specs makes one from the
            specs' pin (or the subject's ``judge``).
        use_judge: False skips every judge criterion (each skip says so).
        judge_concurrency: judge calls in flight.
        progress: show the judge runner's progress bar.
        history: the history folder to record the run's scorecard and verdicts in; None records nothing.

    Raises:
        InputError: the subject lacks what is needed, or a judge cannot be made for its specs.
    """
    from evalkit.contract_files import read_model, read_models
    from evalkit.contracts.labels import HumanLabel
    from evalkit.contracts.matrix import EvalMatrix
    from evalkit.judge import ProviderError
    from evalkit.subjects import input_digests, load_subject
    from evalkit.suite import read_dataset, run_subject

    resolved = load_subject(subject_file)
    subject = resolved.subject
    if subject.eval_matrix is None:
        raise InputError("the subject names no eval_matrix to score the runs with", file=str(subject_file),
                         path="eval_matrix")
    matrix = read_model(resolved.resolve(subject.eval_matrix), EvalMatrix)
    routed = route(matrix)
    out = Path(out_dir)
    ran = run_subject(subject_file, out, repeats=repeats, concurrency=concurrency, case_ids=case_ids)
    traces = ran.traces
    specs = read_specs(resolved.resolve(p) for p in subject.judges) if use_judge else {}
    labels = read_models(resolved.resolve(subject.labels), HumanLabel) if subject.labels else []
    judge_track = [rc.criterion_id for rc in routed if rc.track != "deterministic"]
    judged: BatchJudged | None = None
    if specs and any(cid in specs for cid in judge_track):
        if provider is None:
            try:
                provider = _provider_for(specs, subject)
            except (InputError, ProviderError) as exc:
                raise InputError(f"the judge for the subject's judge specs: {exc} (or --no-judge to skip the "
                                 "judge criteria, each said on the card)", file=str(subject_file),
                                 path="judges") from None
        judged = batch_judge(routed, traces, specs, provider, out / "judge" / "verdicts.jsonl", labels=labels,
                             concurrency=judge_concurrency, progress=progress)
    skip_note = "judge off (--no-judge)" if not use_judge else "no judge spec in subject"
    outcomes = score_outcomes(routed, traces, judged.judge if judged else None,
                              judged.criteria if judged else (), skip_note)
    calibrations: dict[str, Any] = {}
    if judged and subject.verdicts:
        past = read_models(resolved.resolve(subject.verdicts), CriterionVerdict)
        calibrations = judge_calibrations(labels, past, judged.criteria)
    card = build_scorecard(routed, tally_outcomes(routed, outcomes), subject=subject.name,
                           matrix_version=matrix.version, generated_at=generated_at or NOT_RECORDED,
                           trace_count=len(traces), calibrations=calibrations)
    if judged is not None:
        card = with_judges(card, read_judges(judged.verdicts_path),
                           "no run records beside judge/verdicts.jsonl")
    card = card.model_copy(update={"warnings": [*card.warnings, *_run_warnings(ran.counts(), routed,
                                                                                    judged, skip_note),
                                                *_stability_warnings(outcomes, traces, repeats)]})
    regressions = regression_set(read_dataset(resolved.resolve(subject.dataset)).cases, routed, outcomes, traces)
    if regressions is not None:
        card = card.model_copy(update={"regressions": regressions})
    write_verdicts(out / "verdicts.jsonl", outcomes)
    write_scorecard(out / "scorecard.json", card)
    from evalkit.checks.card import render_card

    atomic_write_text(out / "card.txt", render_card(card) + "\n")
    manifest = {
        "subject": subject.name,
        "inputs": [d.to_json_obj() for d in input_digests(resolved)],
        "options": {"repeats": repeats, "cases": list(case_ids) if case_ids else "all", "judge": use_judge},
        "runs": ran.counts(),
        "traces": len(traces),
        "judge": None if judged is None else {
            "provider": getattr(provider, "name", None), "model": getattr(provider, "model", None),
            "criteria": list(judged.criteria), "pairs": judged.pairs, "verdicts": len(judged.verdicts)},
        "calibratedCriteria": sorted(calibrations),
        "regressions": None if regressions is None else {
            "cases": len(regressions.cases), "passed": regressions.passed, "failed": regressions.failed,
            "incomplete": regressions.incomplete, "notRun": regressions.not_run},
        "verdict": card.verdict,
        "files": list(FILES),
    }
    atomic_write_text(out / "manifest.json", canonical_dumps(manifest))
    if history is not None:
        from evalkit.checks.headline import scorecard_headline
        from evalkit.history import record_run

        record_run(history, series=subject.name, source="eval-run", headline=scorecard_headline(card),
                   inputs=input_digests(resolved), run_path=out, run_at=generated_at, seed=subject.seed,
                   judge=f"{subject.judge.provider}/{subject.judge.model}" if subject.judge else None,
                   verdicts_file=out / "verdicts.jsonl")
    return EvalRun(card, outcomes, traces, ran.counts(), ran.reused, judged.pairs if judged else 0, out)


def _run_warnings(counts: dict[str, int], routed: Sequence[RoutedCriterion], judged: BatchJudged | None,
                  skip_note: str) -> list[str]:
    warnings = []
    failed = counts.get("error", 0) + counts.get("timeout", 0)
    if failed:
        warnings.append(f"{failed} of {sum(counts.values())} agent runs gave no trace (runs.jsonl)")
    decided = set(judged.criteria) if judged else set()
    skipped = [rc.criterion_id for rc in routed if rc.track != "deterministic" and rc.criterion_id not in decided]
    if skipped:
        warnings.append(f"{len(skipped)} judge criteria skipped: {skip_note}")
    return warnings


UNSTEADY_LISTED = 5
"""Unsteady (case, criterion) pairs the card names, worst first (the rest are counted)."""


def _stability_warnings(outcomes: Sequence[Outcome], traces: Sequence[Trace], repeats: int) -> list[str]:
    """With repeats, the pairs whose outcome was not the same decided one on every repeat, said on the card:
    a flip, or a repeat uncertain, errored or missing (fewer traces than repeats), each named."""
    if repeats < 2:
        return []
    case_of = {t.id: case_of_metadata(t) for t in traces}
    unsteady = repeat_stability(outcome_results(outcomes, case_of), repeats=repeats).unstable
    if not unsteady:
        return []
    named = "; ".join(c.describe() for c in unsteady[:UNSTEADY_LISTED])
    more = f"; and {len(unsteady) - UNSTEADY_LISTED} more" if len(unsteady) > UNSTEADY_LISTED else ""
    return [f"repeats not stable: {len(unsteady)} (case, criterion) pair(s): {named}{more}"]


def _provider_for(specs: dict[str, JudgeSpec], subject: Any) -> Any:
    """The provider the specs pin (all must agree), else the subject's judge."""
    from evalkit.judge import make_provider

    pins = {(s.judge.provider, s.judge.model, s.judge.base_url): s.judge for s in specs.values() if s.judge}
    if len(pins) > 1:
        raise InputError(f"the judge specs pin {len(pins)} different judges; run them with one (--provider, "
                         f"--model): {sorted(k[:2] for k in pins)}")
    pin = next(iter(pins.values()), None) or subject.judge
    if pin is None:
        raise InputError("the judge specs pin no judge and the subject has none: give --provider and --model")
    return make_provider(pin)


def read_eval_run(folder: str | Path) -> tuple[Scorecard, list[Trace], list[CriterionVerdict], dict[str, Any]]:
    """An eval-run folder's scorecard, traces, verdicts and manifest (what the notebook reads).

    Raises:
        InputError: the folder is not an eval-run folder (names the first missing file).
    """
    import json

    from evalkit.contract_files import read_model, read_models
    from evalkit.traces import iter_traces

    folder = Path(folder)
    for name in ("scorecard.json", "traces.jsonl", "verdicts.jsonl", "manifest.json"):
        if not (folder / name).is_file():
            raise InputError(f"not an eval-run folder: {name} is missing (write one with evalkit eval run)",
                             file=str(folder))
    card = read_model(folder / "scorecard.json", Scorecard)
    traces = list(iter_traces(folder / "traces.jsonl")) if (folder / "traces.jsonl").stat().st_size else []
    verdicts = read_models(folder / "verdicts.jsonl", CriterionVerdict) \
        if (folder / "verdicts.jsonl").stat().st_size else []
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return card, traces, verdicts, manifest
