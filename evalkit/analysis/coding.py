"""The LLM as a second coder, measured against the person who coded the traces.

Once a taxonomy is ratified, each failure mode becomes a binary judge (:func:`mode_specs`: pass = the
trace does not show the mode, fail = it does; shown the mode's definition and its include and exclude
rules, never the trace's metadata nor the reviewer's note) and the judge runner codes the reviewed traces
with it: the same providers, cache, journal and grounded verdicts as any judge run. Per mode, Cohen's
kappa with its interval and the confusion against the human coder's latest labels say how far the LLM
codes as the person did (:func:`coder_agreement`).

Only modes whose agreement clears the bar (:data:`KAPPA_FLOOR` on the interval's lower end, with at least
:data:`MIN_HUMAN_POSITIVES` traces the person coded with the mode) are offered for coding traces nobody
reviewed, and rates from those traces are labelled LLM-coded (:func:`llm_coded_rates`). Why this bar:
docs/analysis.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit import stats
from evalkit.analysis.store import labels_of
from evalkit.contracts.annotation import Annotation, Taxonomy
from evalkit.contracts.judge import JudgeSpec
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.io.json_case import camel_json

KAPPA_FLOOR = 0.6
"""The lower end of kappa's 95% interval a mode must reach to be offered for unreviewed traces: 0.61 is where
Landis & Koch (1977) begin "substantial" agreement; asking it of the interval's lower end, not the point, keeps a
few lucky traces from clearing it."""

MIN_HUMAN_POSITIVES = 5
"""Traces the person coded with a mode, at least, before its kappa counts: with fewer, one trace swings it."""

CODER_INPUT = {"trace": ["name", "input", "output"], "fields": ["input", "output", "level", "statusMessage"]}
"""What the coder is shown of a trace: no trace or observation metadata (where labels, outcomes and injected
ground truth are kept)."""


def mode_specs(taxonomy: Taxonomy, *, shown: dict[str, Any] | None = None) -> list[JudgeSpec]:
    """One binary judge spec per failure mode: fail when the trace shows the mode.

    Args:
        taxonomy: the ratified failure modes (their definitions, include and exclude rules).
        shown: what of each trace the coder sees (a judge spec's ``input``); :data:`CODER_INPUT` by default.
    """
    specs = []
    for mode in taxonomy.modes:
        rules = [f"Counts as {mode.name}: {rule}" for rule in mode.include or []]
        rules += [f"Does not count: {rule}" for rule in mode.exclude or []]
        criterion = "\n".join([f"An agent's trace is coded for one failure mode of {taxonomy.subject}: "
                               f"{mode.name}.", f"Definition: {mode.definition}", *rules])
        specs.append(JudgeSpec.model_validate({
            "id": mode.id, "criterion": criterion,
            "pass": f"The trace does not show {mode.name}.",
            "fail": f"The trace shows {mode.name}: {mode.definition}",
            "input": shown or CODER_INPUT}))
    return specs


@dataclass(frozen=True)
class ModeAgreement:
    """How the LLM coded one mode against the person, on the reviewed traces both decided."""

    mode: str
    traces: int
    both: int
    """Traces both coded with the mode."""
    human_only: int
    llm_only: int
    neither: int
    uncertain: int
    """Reviewed traces the LLM left uncertain (or had no verdict on): not in the kappa."""
    kappa: stats.Kappa
    offered: bool
    why: str

    @property
    def human_positives(self) -> int:
        return self.both + self.human_only


@dataclass(frozen=True)
class CoderAgreement:
    """Per-mode agreement of the LLM coder with one human coder."""

    annotator: str | None
    reviewed: int
    modes: list[ModeAgreement]
    floor: float = KAPPA_FLOOR
    min_positives: int = MIN_HUMAN_POSITIVES

    @property
    def offered(self) -> list[str]:
        """The modes offered for coding unreviewed traces."""
        return [m.mode for m in self.modes if m.offered]

    def to_json_obj(self) -> dict[str, Any]:
        """A JSON-ready dict (camelCase keys)."""
        return camel_json(self) | {"offered": self.offered}


def _offer(kappa: stats.Kappa, positives: int, coded: int) -> tuple[bool, str]:
    """``positives``: the person's traces with the mode that the LLM decided; ``coded``: all of them."""
    if positives < MIN_HUMAN_POSITIVES:
        if coded > positives:  # the person coded enough, the LLM left them uncertain: say which fell short
            return False, (f"the LLM decided {positives} of the {coded} trace(s) the person coded with it "
                           f"(needs {MIN_HUMAN_POSITIVES})")
        return False, f"only {positives} trace(s) coded with it by the person (needs {MIN_HUMAN_POSITIVES})"
    if kappa.kappa is None or kappa.ci is None:
        return False, f"kappa undefined ({kappa.reason})"
    if kappa.ci.lo < KAPPA_FLOOR:
        return False, f"kappa {kappa.kappa:.2f}, interval lower end {kappa.ci.lo:.2f} < {KAPPA_FLOOR}"
    return True, f"kappa {kappa.kappa:.2f}, interval lower end {kappa.ci.lo:.2f} >= {KAPPA_FLOOR}"


def coder_agreement(annotations: Sequence[Annotation], verdicts: Iterable[CriterionVerdict], taxonomy: Taxonomy,
                    *, annotator: str | None = None, coded_by: str | None = None,
                    level: float = stats.DEFAULT_LEVEL, coded: Iterable[str] | None = None) -> CoderAgreement:
    """Per mode, the LLM coder's verdicts against one person's latest labels on the traces they reviewed.

    A reviewed trace (pass or fail; defer is left out) shows a mode for the person when the label names it,
    and for the LLM when its verdict on the mode is ``fail``; a trace it left uncertain, or has no verdict on
    (an error: a prompt over the context, an invalid reply), is counted apart.

    Args:
        annotations: store records in file order.
        verdicts: the coder's verdicts (criterion id = mode id).
        taxonomy: the ratified modes.
        annotator: whose labels say which traces were reviewed (pass or fail); by default the one with the most.
        coded_by: whose modes count, when another person coded the traces with the ratified modes (the reviewer
            who ratified the draft: ``analysis ratify --into``); by default the annotator's own modes.
        level: the kappa interval's confidence level.
        coded: the traces the LLM was asked to code (default: every reviewed trace); a reviewed trace left
            out of the coding run is neither agreement nor uncertainty.
    """
    who, labels = labels_of(annotations, annotator)
    reviewed = [a for a in labels if a.label != "defer"]
    if coded_by is not None:
        modes_of = {a.trace_id: a.modes for a in labels_of(annotations, coded_by)[1]}
        reviewed = [a.model_copy(update={"modes": modes_of.get(a.trace_id, [])}) for a in reviewed]
        who = f"{who} (modes coded by {coded_by})"
    by_item = {(v.criterion_id, v.trace_id): v.result for v in verdicts}
    if coded is not None:
        asked = set(coded)
        reviewed = [a for a in reviewed if a.trace_id in asked]
    modes = []
    for mode in taxonomy.mode_ids():
        human, llm, uncertain = [], [], 0
        for a in reviewed:
            result = by_item.get((mode, a.trace_id))
            if result not in ("pass", "fail"):
                uncertain += 1
                continue
            human.append(mode in a.modes)
            llm.append(result == "fail")
        pairs = list(zip(human, llm, strict=True))
        kappa = stats.cohens_kappa(human, llm, level=level)
        counts = {k: sum(1 for p in pairs if p == k) for k in ((True, True), (True, False), (False, True))}
        positives = counts[(True, True)] + counts[(True, False)]
        offered, why = _offer(kappa, positives, sum(1 for a in reviewed if mode in a.modes))
        modes.append(ModeAgreement(mode, len(pairs), counts[(True, True)], counts[(True, False)],
                                   counts[(False, True)], len(pairs) - sum(counts.values()), uncertain, kappa,
                                   offered, why))
    return CoderAgreement(who, len(reviewed), modes)


@dataclass(frozen=True)
class LlmCodedRate:
    """A failure mode's rate on traces nobody reviewed, as the LLM coded them."""

    mode: str
    coded: int
    count: int
    rate: float | None
    ci: Any
    uncertain: int
    source: str = "LLM-coded"


def llm_coded_rates(verdicts: Iterable[CriterionVerdict], agreement: CoderAgreement,
                    level: float = stats.DEFAULT_LEVEL) -> list[LlmCodedRate]:
    """Each offered mode's rate among the traces the LLM decided (Wilson interval), labelled LLM-coded.

    Verdicts on modes not offered are left out: their coding was not shown to agree with a person.
    """
    by_mode: dict[str, list[str]] = {}
    for v in verdicts:
        by_mode.setdefault(v.criterion_id, []).append(v.result)
    out = []
    for mode in agreement.offered:
        results = by_mode.get(mode, [])
        decided = [r for r in results if r in ("pass", "fail")]
        fails = decided.count("fail")
        out.append(LlmCodedRate(mode, len(decided), fails, fails / len(decided) if decided else None,
                                stats.wilson_interval(fails, len(decided), level), len(results) - len(decided)))
    return out


def split_reviewed(traces: Sequence[Trace], annotations: Sequence[Annotation],
                   annotator: str | None = None) -> tuple[list[Trace], list[Trace]]:
    """``(reviewed, unreviewed)``: traces the coder labelled pass or fail, and traces nobody labelled."""
    _, labels = labels_of(annotations, annotator)
    decided = {a.trace_id for a in labels if a.label != "defer"}
    anyone = {a.trace_id for a in annotations}
    return ([t for t in traces if t.id in decided], [t for t in traces if t.id not in anyone])


@dataclass
class SecondCoding:
    """What :func:`code_with_llm` did: the agreement on reviewed traces and, when asked, LLM-coded rates."""

    agreement: CoderAgreement
    reviewed_verdicts: Any
    unreviewed_verdicts: Any = None
    rates: list[LlmCodedRate] | None = None
    not_offered: list[str] | None = None
    summaries: list[Any] | None = None


def code_with_llm(taxonomy: Taxonomy, traces: Sequence[Trace], annotations: Sequence[Annotation], provider: Any,
                  out: Any, *, annotator: str | None = None, coded_by: str | None = None,
                  code_unreviewed: bool = False, cache: Any = None,
                  shown: dict[str, Any] | None = None, **judging: Any) -> SecondCoding:
    """Code the reviewed traces with every ratified mode, measure agreement, and (when asked) code the
    unreviewed traces with the offered modes only.

    Writes ``OUT/reviewed.jsonl`` (and, with ``code_unreviewed``, ``OUT/unreviewed.jsonl``), each with the judge
    runner's sidecars (runs, journal: a rerun resumes). The provider is closed at the end. ``judging`` is
    what a judge run is measured against (:func:`evalkit.judge.judge_setup`: ``prices``, ``context_window``,
    ``strict_model``, ``warn``): the model is checked with its server and each prompt counted against its
    context, as ``judge run`` does.

    Raises:
        InputError: no reviewed traces among ``traces``.
    """
    from pathlib import Path

    from evalkit.calibration import read_verdicts as read_verdict_file
    from evalkit.errors import InputError
    from evalkit.judge import build_prompts, judge_setup, run_coroutine, run_prompts, verifier

    folder = Path(out)
    specs = mode_specs(taxonomy, shown=shown)
    reviewed, unreviewed = split_reviewed(traces, annotations, annotator)
    if not reviewed:
        raise InputError("no reviewed trace among the traces: the LLM coder is measured on traces a person "
                         "labelled pass or fail", path="traces")
    by_id = {t.id: t for t in traces}
    try:
        setup = judge_setup(provider, **judging)
    except BaseException:
        run_coroutine(provider.aclose())
        raise

    async def run(specs_now: list[JudgeSpec], chosen: list[Trace], name: str) -> Any:
        prompts = [p for spec in specs_now for p in build_prompts(spec, chosen, traces_by_id=by_id)]
        return await run_prompts(prompts, provider, out=folder / name, cache=cache, verify=verifier(by_id),
                                 progress=False, concurrency=4, prices=setup.prices, counter=setup.counter,
                                 context=setup.context)

    async def both() -> SecondCoding:
        try:
            first = await run(specs, reviewed, "reviewed.jsonl")
            agreement = coder_agreement(annotations, read_verdict_file(folder / "reviewed.jsonl"), taxonomy,
                                        annotator=annotator, coded_by=coded_by, coded=[t.id for t in reviewed])
            done = SecondCoding(agreement, folder / "reviewed.jsonl", summaries=[first])
            if code_unreviewed:
                offered = [s for s in specs if s.id in agreement.offered]
                done.not_offered = [s.id for s in specs if s.id not in agreement.offered]
                if offered and unreviewed:
                    done.summaries.append(await run(offered, unreviewed, "unreviewed.jsonl"))
                    done.unreviewed_verdicts = folder / "unreviewed.jsonl"
                    done.rates = llm_coded_rates(read_verdict_file(folder / "unreviewed.jsonl"), agreement)
                else:
                    done.rates = []
            return done
        finally:
            await provider.aclose()

    return run_coroutine(both())
