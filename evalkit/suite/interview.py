"""The interview: the designer confirms the suite's dimensions and seed tuples, and the seeds become cases.

``evalkit dataset interview SUBJECT`` walks through the dimensions (the suite's, and trace metadata fields that
look like one, with the values seen: :mod:`evalkit.suite.proposals`), asks which to keep and with which values,
then proposes the tuples the traces realise most often, each with a real message, and asks which to keep as
seed cases (and lets the designer add their own). Every answer can come from a file instead
(:class:`~evalkit.contracts.dataset.InterviewAnswers`, which a terminal session writes with
``--save-answers``), so CI runs the same interview. The seed cases are merged into the suite like any others
(append-only, near-duplicates dropped and named, version + 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from evalkit.contracts.dataset import Dataset, Dimension, InterviewAnswers, InterviewDimension, SeedAnswer
from evalkit.errors import InputError
from evalkit.suite.files import read_dataset, write_dataset
from evalkit.suite.growing import suite_of
from evalkit.suite.merge import MergeResult, merge, new_case
from evalkit.suite.proposals import (
    ProposedDimension,
    ProposedSeed,
    TraceSummary,
    propose_dimensions,
    propose_seeds,
    summarise_traces,
)

Ask = Callable[[str], str]
"""Shows a question and returns the line typed (empty: take the default); raises EOFError when input ends."""
Say = Callable[[str], None]

PROPOSED_SEEDS = 5
"""Seed tuples proposed by default: the designer confirms a few real ones, the generator fills the rest."""


@dataclass(frozen=True)
class InterviewOutcome:
    """What the interview decided and did: the answers, the suite as written (or as it would be), the merge."""

    answers: InterviewAnswers
    dataset: Dataset
    merged: MergeResult
    suite: Path
    written: bool
    traces: int


def _yes(ask: Ask, say: Say, question: str, default: bool) -> bool:
    while True:
        line = ask(f"{question} [{'Y/n' if default else 'y/N'}] ").strip().lower()
        if not line:
            return default
        if line in ("y", "yes", "n", "no"):
            return line.startswith("y")
        say("   answer y or n")


def _list(line: str) -> list[str]:
    return [v.strip() for v in line.split(",") if v.strip()]


def _walk_dimensions(proposed: Sequence[ProposedDimension], ask: Ask, say: Say) -> list[InterviewDimension]:
    say("Dimensions: the axes the cases vary along. Enter takes the [default].")
    kept: list[InterviewDimension] = []
    for i, d in enumerate(proposed, 1):
        where = "in the suite" if d.source == "suite" else "a metadata field of the traces"
        say(f"{i}/{len(proposed)} {d.name} ({where}){': ' + d.description if d.description else ''}")
        seen = ", ".join(f"{v} {d.counts[v]}" for v in d.values if d.counts.get(v))
        say(f"   values: {', '.join(d.values)}" + (f"  (traces: {seen})" if seen else ""))
        if not _yes(ask, say, f"   Keep {d.name}?", d.keep_by_default):
            continue
        values = _list(ask("   Values (Enter: as listed, or type them comma-separated): "))
        description = d.description or ask(f"   What does {d.name} describe? (Enter: leave it blank) ").strip() or None
        fields = {"values": values} if values else {}
        kept.append(InterviewDimension(name=d.name, description=description, **fields))
    while True:
        name = ask("Another dimension? Its name (Enter: no more): ").strip()
        if not name:
            return kept
        values: list[str] = []
        while not values:
            values = _list(ask(f"   Values of {name}, comma-separated: "))
        description = ask(f"   What does {name} describe? (Enter: leave it blank) ").strip() or None
        kept.append(InterviewDimension(name=name, description=description, values=values))


def _parse_tuple(line: str, dimensions: Sequence[Dimension]) -> dict[str, str]:
    """``name=value, ...`` for every dimension, values among the dimension's.

    Raises:
        ValueError: saying what is wrong.
    """
    pairs = [p.split("=", 1) for p in _list(line)]
    if any(len(p) != 2 for p in pairs):
        raise ValueError("write it as name=value, name=value, ...")
    given = {k.strip(): v.strip() for k, v in pairs}
    _check_tuple(given, dimensions)
    return {d.name: given[d.name] for d in dimensions}


def _check_tuple(given: dict[str, str], dimensions: Sequence[Dimension]) -> None:
    names = {d.name: d for d in dimensions}
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise ValueError(f"not a dimension: {', '.join(unknown)} (dimensions: {', '.join(names)})")
    lacking = [n for n in names if n not in given]
    if lacking:
        raise ValueError(f"a seed gives every dimension a value; missing: {', '.join(lacking)}")
    for name, value in given.items():
        if value not in names[name].values:
            raise ValueError(f"{value!r} is not a value of {name} ({', '.join(names[name].values)})")


def _walk_seeds(proposals: Sequence[ProposedSeed], dimensions: Sequence[Dimension], ask: Ask,
                say: Say) -> list[SeedAnswer]:
    say("Seed cases: the tuples the traces show most, each with a real message. Enter takes the [default].")
    seeds: list[SeedAnswer] = []
    for i, p in enumerate(proposals, 1):
        say(f"{i}/{len(proposals)} {', '.join(f'{k}={v}' for k, v in p.tuple.items())}  ({p.traces} trace(s))")
        if p.example_query is None:
            say("   (no trace of it has a text message)")
        else:
            say(f"   trace {p.example_trace}: {p.example_query[:300]!r}")
        if not _yes(ask, say, "   Keep it as a seed case?", p.example_query is not None):
            continue
        query = ask("   Query (Enter: the trace's message): ").strip() or p.example_query
        while not query:
            query = ask("   Query: ").strip()
        seeds.append(SeedAnswer(tuple=p.tuple, query=query))
    while True:
        line = ask("Another seed tuple? name=value, ... (Enter: done): ").strip()
        if not line:
            return seeds
        try:
            seed_tuple = _parse_tuple(line, dimensions)
        except ValueError as exc:
            say(f"   {exc}")
            continue
        query = ""
        while not query:
            query = ask("   Its query, as a user would write it: ").strip()
        seeds.append(SeedAnswer(tuple=seed_tuple, query=query))


def resolve_dimensions(answers: InterviewAnswers, proposed: Sequence[ProposedDimension], dataset: Dataset | None,
                       *, file: str | None = None) -> list[Dimension]:
    """The dimensions the answers keep, values taken from the proposals where left out; refused when a value or
    dimension a seed or synthetic case of the suite uses would go.

    Raises:
        InputError: naming the answer (``dimensions[i]``) and what to do.
    """
    by_name = {p.name: p for p in proposed}
    out: list[Dimension] = []
    for i, d in enumerate(answers.dimensions):
        values = d.values
        if values is None:
            if d.name not in by_name:
                raise InputError(f"dimension {d.name!r} was not proposed (no suite dimension or trace metadata field "
                                 "of that name): give its values", file=file, path=f"dimensions[{i}].values")
            values = by_name[d.name].values
        description = d.description if d.description is not None else \
            (by_name[d.name].description if d.name in by_name else None)
        out.append(Dimension(name=d.name, description=description, values=list(dict.fromkeys(values))))
    names = [d.name for d in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"dimension {twice[0]!r} is answered twice", file=file, path="dimensions")
    kept = {d.name: set(d.values) for d in out}
    for case in dataset.cases if dataset else []:
        if case.source == "derived":
            continue
        for name, value in case.tuple.items():
            if name not in kept:
                raise InputError(f"dimension {name!r} is used by case {case.id} of the suite: a suite only grows, "
                                 "keep it", file=file, path="dimensions")
            if value not in kept[name]:
                raise InputError(f"value {value!r} of {name!r} is used by case {case.id} of the suite: keep it",
                                 file=file, path="dimensions")
    return out


def _seed_query(seed: SeedAnswer, summary: TraceSummary, i: int, file: str | None) -> str:
    if seed.query is not None:
        return seed.query
    for _, plain, query in summary.rows:
        if query and all(plain.get(k) == v for k, v in seed.tuple.items()):
            return query
    raise InputError("no trace realises this tuple with a text message: write its query",
                     file=file, path=f"seeds[{i}].query")


def run_interview(subject_or_dataset: str | Path, *, answers: str | Path | None = None, ask: Ask | None = None,
              say: Say = print, out: str | Path | None = None, traces: str | Path | None = None,
              propose: int = PROPOSED_SEEDS, save_answers: str | Path | None = None) -> InterviewOutcome:
    """Run the interview (in a terminal through ``ask``/``say``, or from an answers file) and write the seed cases.

    Args:
        subject_or_dataset: the subject (its suite and traces) or a suite file.
        answers: an answers file (YAML or JSON, :class:`InterviewAnswers`): no question is asked.
        ask, say: the terminal (``input`` and ``print``); needed when no answers file is given.
        out: the suite to write (default the subject's ``dataset``; needed when it names none).
        traces: the traces to propose from (default the subject's ``traces``).
        propose: seed tuples proposed at most.
        save_answers: write the answers given to this file (replayable with ``answers``).

    Raises:
        InputError: no answers and no terminal, a bad answer in the file (located), a change the suite refuses.
    """
    from evalkit.contract_files import read_model
    from evalkit.traces import iter_traces

    where = suite_of(subject_or_dataset, missing_ok=True)
    subject = where.subject
    suite = Path(out) if out is not None else where.path
    if suite.is_dir():
        raise InputError("the subject names no dataset: give --out FILE (then add dataset: FILE to the subject)",
                         file=str(subject_or_dataset), path="dataset")
    dataset = read_dataset(suite) if suite.exists() else None
    if traces is None and subject is not None:
        traces = subject.resolve(subject.subject.traces)  # type: ignore[attr-defined]
    summary = summarise_traces(iter_traces(traces)) if traces is not None else TraceSummary()
    proposed = propose_dimensions(dataset, summary)
    file = None if answers is None else str(answers)
    if answers is not None:
        given = read_model(answers, InterviewAnswers)
    else:
        if ask is None:
            raise InputError("the interview needs a terminal to ask in, or --answers FILE (for CI)")
        name = dataset.subject if dataset else getattr(getattr(subject, "subject", None), "name", suite.stem)
        say(f"Interview for {name}: {summary.count} trace(s) read" +
            (f"; the suite {suite} has {len(dataset.dimensions)} dimension(s) and {len(dataset.cases)} case(s)."
             if dataset else f"; no suite yet ({suite} will be written)."))
        try:
            given = InterviewAnswers(dimensions=_walk_dimensions(proposed, ask, say), seeds=[])
        except EOFError:
            raise InputError("the input ended before the interview did: answer in a terminal, or give --answers "
                             "FILE") from None
    dimensions = resolve_dimensions(given, proposed, dataset, file=file)
    if answers is None:
        realised = [c.tuple for c in dataset.cases] if dataset else []
        seeds = propose_seeds([(d.name, d.values) for d in dimensions], summary, realised, propose)
        try:
            walked = _walk_seeds(seeds, dimensions, ask, say)  # type: ignore[arg-type]
        except EOFError:
            raise InputError("the input ended before the interview did: answer in a terminal, or give --answers "
                             "FILE") from None
        # What is saved is what was confirmed: values and queries written out, so a replay needs no proposal.
        given = InterviewAnswers(dimensions=[InterviewDimension(name=d.name, description=d.description,
                                                                values=list(d.values)) for d in dimensions],
                                 seeds=walked)
    cases = []
    for i, seed in enumerate(given.seeds):
        try:
            _check_tuple(seed.tuple, dimensions)
        except ValueError as exc:
            raise InputError(str(exc), file=file, path=f"seeds[{i}].tuple") from None
        cases.append(new_case({d.name: seed.tuple[d.name] for d in dimensions}, _seed_query(seed, summary, i, file),
                              "seed", selected_by="interview"))
    subject_name = dataset.subject if dataset else getattr(getattr(subject, "subject", None), "name", suite.stem)
    base = Dataset(subject=subject_name, dimensions=dimensions, cases=dataset.cases if dataset else [],
                   version=dataset.version if dataset else 0)
    merged = merge(base, cases)
    grown = merged.dataset
    if dataset is None or grown.dimensions != dataset.dimensions and grown.version == dataset.version:
        grown = grown.model_copy(update={"version": base.version + 1})
    written = True
    if answers is None:
        try:
            written = _yes(ask, say, f"Write {len(dimensions)} dimension(s) and {len(merged.added)} new seed case(s) to "  # type: ignore[arg-type]
                           f"{suite}?", True)
        except EOFError:
            raise InputError("the input ended before the interview did: nothing was written") from None
    if written:
        write_dataset(suite, grown)
    if save_answers is not None:
        _save(save_answers, given)
    return InterviewOutcome(given, grown, merged, suite, written, summary.count)


def _save(path: str | Path, answers: InterviewAnswers) -> None:
    """The answers as a file ``--answers`` reads: YAML for ``.yaml``/``.yml``, else canonical JSON."""
    from evalkit.io import atomic_write_text, canonical_dumps

    obj = answers.to_json_obj()
    if Path(path).suffix in (".yaml", ".yml"):
        import yaml

        atomic_write_text(path, yaml.safe_dump(obj, sort_keys=False, allow_unicode=True, width=100))
    else:
        atomic_write_text(path, canonical_dumps(obj))
