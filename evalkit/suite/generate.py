"""Synthetic cases from tuples: a model writes realistic messages for each tuple the suite does not realise.

:func:`generate_cases` builds one prompt per tuple (:mod:`evalkit.suite.writer`), asks the model through the
judge's providers, reply cache and journal (:class:`evalkit.judge.Asker`: a rerun replays what was already
answered, a killed run resumes), turns each reply into synthetic cases that record their origin (provider,
model, prompt digest, tuple), drops those that nearly repeat a suite case or an earlier generated case (each
named), and reports the coverage of tuples and of the taxonomy's failure modes before and after. The cases
kept are written to a file; they enter the suite only through ``evalkit dataset merge`` or ``--merge``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from evalkit.contracts.annotation import Taxonomy
from evalkit.contracts.dataset import Case, CaseExpectation, CaseOrigin, Dataset
from evalkit.contracts.matrix import EvalMatrix
from evalkit.errors import InputError
from evalkit.io import atomic_write_text, canonical_line
from evalkit.suite.expand import expand_tuples, uncovered_tuples
from evalkit.suite.files import read_dataset, write_dataset
from evalkit.suite.growing import suite_of
from evalkit.suite.merge import MergeResult, merge, new_case
from evalkit.suite.writer import WriterBrief, WriterPrompt, parse_written, writer_prompt

JUDGED_METHODS = ("llm-judge", "trace-cross-ref", "trajectory-diff", "hybrid")
"""Check methods that judge behaviour: a matrix with one asks each generated case for its expected behaviour."""


@dataclass(frozen=True)
class Coverage:
    """How much of the tuple space and of the taxonomy the suite's cases cover."""

    tuples: int
    tuples_total: int
    modes: list[str]
    """Failure modes at least one case probes (``expected.failureModes``)."""
    modes_total: list[str]

    def describe(self) -> str:
        text = f"tuples {self.tuples}/{self.tuples_total}"
        if self.modes_total:
            text += f", failure modes {len(self.modes)}/{len(self.modes_total)}"
        return text


def coverage(dataset: Dataset, cases: Sequence[Case], mode_ids: Sequence[str]) -> Coverage:
    """The coverage of ``cases`` (seed and synthetic tuples over the suite's dimensions; failure modes of the
    taxonomy any case probes)."""
    names = [d.name for d in dataset.dimensions]
    total = expand_tuples(dataset.dimensions)
    covered = {tuple(c.tuple.get(n) for n in names) for c in cases}
    realised = sum(1 for t in total if tuple(t[n] for n in names) in covered)
    probed = {m for c in cases if c.expected for m in c.expected.failure_modes}
    return Coverage(realised, len(total), [m for m in mode_ids if m in probed], list(mode_ids))


@dataclass(frozen=True)
class GenerateOutcome:
    """What a generation run asked, got, kept and dropped, and the coverage before and after."""

    asked: list[WriterPrompt]
    generated: list[Case]
    errors: dict[str, str]
    """Tuple (``k=v, ...``) -> why no case came for it (an invalid reply, an error, the budget)."""
    merged: MergeResult
    before: Coverage
    after: Coverage
    out: Path
    merged_into_suite: bool
    summary: Any
    """The asker's :class:`~evalkit.judge.AskSummary`: calls, cached, resumed, tokens, cost."""
    still_missing: list[dict[str, str]] = field(default_factory=list)


def _tuple_text(case_tuple: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in case_tuple.items())


def writer_brief(dataset: Dataset, n: int, *, taxonomy: Taxonomy | None = None, matrix: EvalMatrix | None = None,
                 expected: bool | None = None) -> WriterBrief:
    """The brief for a suite: the taxonomy's failure modes, the matrix's judged criteria (``expected`` None:
    asked when the matrix judges any behaviour), the suite's seed cases as examples."""
    modes = [(m.id, m.name, " ".join(m.definition.split())) for m in taxonomy.modes] if taxonomy else []
    criteria: list[tuple[str, str]] = []
    for component in matrix.components if matrix else []:
        for i, c in enumerate(component.criteria):
            if c.check_method in JUDGED_METHODS:
                cid = c.criterion_id or f"{component.component_id}.{i + 1}"
                criteria.append((cid, " ".join(f"{c.statement} Pass: {c.pass_condition}".split())))
    ask_expected = bool(criteria) if expected is None else expected
    examples = [c for c in dataset.cases if c.source == "seed"]
    return WriterBrief(subject=dataset.subject, dimensions=list(dataset.dimensions), n=n, failure_modes=modes,
                       criteria=criteria if ask_expected else (), examples=examples, expected=ask_expected)


def _subject_files(subject: Any) -> tuple[Taxonomy | None, EvalMatrix | None]:
    """The taxonomy and eval matrix a subject names (None for each it does not, or without a subject)."""
    from evalkit.contract_files import read_model

    if subject is None:
        return None, None
    s = subject.subject
    taxonomy = read_model(subject.resolve(s.taxonomy), Taxonomy) if s.taxonomy else None
    matrix = read_model(subject.resolve(s.eval_matrix), EvalMatrix) if s.eval_matrix else None
    return taxonomy, matrix


def cases_from_reply(prompt: WriterPrompt, output: dict[str, Any], provider: Any, selected_by: str) -> list[Case]:
    """The synthetic cases of one reply, each recording who wrote it from which prompt for which tuple."""
    origin = CaseOrigin(provider=provider.name, model=provider.model, prompt_digest=prompt.digest, tuple=prompt.tuple)
    out = []
    for item in output["cases"]:
        expected = None
        if item.get("expected") or item.get("failureModes"):
            fields: dict[str, Any] = {"failure_modes": item.get("failureModes", [])}
            if item.get("expected"):
                fields["behaviour"] = item["expected"]
            expected = CaseExpectation(**fields)
        out.append(new_case(prompt.tuple, item["query"], "synthetic", expected=expected, origin=origin,
                            selected_by=selected_by))
    return out


def generate_cases(subject_or_dataset: str | Path, provider: Any, *, n: int = 3, missing: bool = True,
                   expected: bool | None = None, out: str | Path | None = None, journal: str | Path | None = None,
                   cache: str | Path | None = None, concurrency: int = 4, max_cost: float | None = None,
                   merge_into_suite: bool = False, cassette: str | Path | None = None, record: str | Path | None = None,
                   timeout: float = 120.0) -> GenerateOutcome:
    """``evalkit dataset generate``: cases for each tuple the suite does not realise (see the module docstring).

    Args:
        subject_or_dataset: the subject (its suite, taxonomy and matrix) or a suite file.
        provider: a judge provider (the scripted fake in tests), or a :class:`~evalkit.contracts.judge.JudgePin`
            to make one with :func:`evalkit.judge.make_provider` (openai, anthropic, any OpenAI-compatible
            server by ``base_url``, replay, a plug-in); closed at the end.
        n: cases asked for per tuple.
        missing: only the tuples no case realises (False: every tuple).
        expected: ask for each case's expected behaviour; None: when the matrix judges behaviour.
        out: the file the cases kept are written to (JSONL); default ``SUITE.generated.jsonl`` beside the suite.
        journal: the replies' journal (resumed from); default ``OUT.journal.jsonl``.
        cache: a reply cache (SQLite, shared with judge runs), or None.
        concurrency: calls in flight at most.
        max_cost: USD; a call starts only when its worst case fits what is left (the tuples left are said).
        merge_into_suite: also merge the cases kept into the suite (append-only, version + 1).
        cassette, record, timeout: for a pin: the replay provider's cassette, a cassette to record live replies
            to, seconds per call.

    Raises:
        InputError: ``n`` below 1, or a suite or subject that cannot be read.
        MissingCredential: the pin's provider needs a key that is not set.
    """
    from evalkit.contracts.judge import JudgePin
    from evalkit.judge import Asker, AskSummary, JudgeCache, make_provider, run_coroutine

    if n < 1 or concurrency < 1:
        raise InputError(f"--n ({n}) and --concurrency ({concurrency}) must be at least 1")
    where = suite_of(subject_or_dataset)
    dataset = read_dataset(where.path)
    taxonomy, matrix = _subject_files(where.subject)
    brief = writer_brief(dataset, n, taxonomy=taxonomy, matrix=matrix, expected=expected)
    tuples = uncovered_tuples(dataset.dimensions, [c.tuple for c in dataset.cases]) if missing \
        else expand_tuples(dataset.dimensions)
    prompts = [writer_prompt(brief, t) for t in tuples]
    out_path = Path(out) if out is not None else where.path.with_name(f"{where.path.stem}.generated.jsonl")
    journal_path = Path(journal) if journal is not None else out_path.with_name(f"{out_path.stem}.journal.jsonl")
    if isinstance(provider, JudgePin):
        if provider.model in ("", "*") and provider.provider != "replay":
            raise InputError(f"no model named for the {provider.provider} writer: pass --model", path="--model")
        provider = make_provider(provider, cassette=cassette, record=record, timeout=timeout)
    replies = JudgeCache(cache) if cache and prompts else None

    async def ask_all() -> list[Any]:
        asker = Asker(provider, journal=journal_path, kind="generatorJournal", noun="case generator",
                      parse=partial(parse_written, brief=brief), cache=replies, concurrency=concurrency,
                      budget=max_cost)
        try:
            answers = await asyncio.gather(*(asker.ask(p, label=f"generate\0{_tuple_text(p.tuple)}") for p in prompts))
        finally:
            asker.close()
            await provider.aclose()
        return [answers, asker.summary]

    if not prompts:  # every tuple realised already: no journal, no provider call
        answers, summary = [], AskSummary()
        run_coroutine(provider.aclose())
    else:
        try:
            answers, summary = run_coroutine(ask_all())
        finally:
            if replies is not None:
                replies.close()
    selected_by = "missing-tuple" if missing else "tuple"
    generated: list[Case] = []
    errors: dict[str, str] = {}
    for prompt, answer in zip(prompts, answers, strict=True):
        if answer.output is None:
            errors[_tuple_text(prompt.tuple)] = answer.error or "no reply"
            continue
        generated += cases_from_reply(prompt, answer.output, provider, selected_by)
    merged = merge(dataset, generated)
    mode_ids = [m[0] for m in brief.failure_modes]
    before = coverage(dataset, dataset.cases, mode_ids)
    after = coverage(dataset, [*dataset.cases, *merged.added], mode_ids)
    names = [d.name for d in dataset.dimensions]
    now = {tuple(c.tuple.get(k) for k in names) for c in [*dataset.cases, *merged.added]}
    still = [t for t in tuples if tuple(t[k] for k in names) not in now]
    if prompts:  # nothing asked, nothing written
        atomic_write_text(out_path, "".join(canonical_line(c.to_json_obj()) for c in merged.added))
    if merge_into_suite and merged.added:
        write_dataset(where.path, merged.dataset)
    return GenerateOutcome(prompts, generated, errors, merged, before, after, out_path,
                           merge_into_suite and bool(merged.added), summary, still)
