"""Which judge decided each criterion, read from a judge run's records, for the scorecard (the seed's pin
rule: the judge's model id and temperature 0 are recorded on the scorecard, with its prompt digest).

A judge run writes ``<verdicts>.runs.jsonl`` beside its verdicts (``evalkit.judge``): one record per
(criterion, trace, repeat) naming the provider, model, temperature and the judge's digest. A scorecard
built from verdicts without that file cannot say which judge decided them, and warns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from evalkit.contracts.judge_run import JudgeRunRecord
from evalkit.contracts.scorecard import JudgeRecord, Scorecard


def judges_from_runs(records: Iterable[JudgeRunRecord]) -> dict[str, list[JudgeRecord]]:
    """The distinct judges behind each criterion's verdicts (error rows, which gave none, left out)."""
    seen: dict[str, set[tuple[str, str, float, str | None]]] = {}
    for r in records:
        if r.result is None:
            continue
        seen.setdefault(r.criterion_id, set()).add((r.provider, r.model, r.temperature, r.judge_digest))
    return {cid: [JudgeRecord(provider=p, model=m, temperature=t, prompt_digest=d)
                  for p, m, t, d in sorted(keys, key=lambda k: (k[0], k[1], k[2], k[3] or ""))]
            for cid, keys in sorted(seen.items())}


def read_judges(verdicts: str | Path) -> dict[str, list[JudgeRecord]] | None:
    """The judges behind a verdicts file, from its run records; None when the file has none beside it.

    Raises:
        InputError: the run records are not ``judge-run-record`` lines (names the file and line).
    """
    from evalkit.contract_files import read_models
    from evalkit.judge import sidecar_paths

    runs = sidecar_paths(Path(verdicts))[0]
    if not runs.is_file():
        return None
    return judges_from_runs(read_models(runs, JudgeRunRecord) if runs.stat().st_size else [])


def with_judges(card: Scorecard, judges: Mapping[str, list[JudgeRecord]] | None, source: str) -> Scorecard:
    """The scorecard with each judged criterion's judges recorded; a criterion that was judged (some outcome
    other than skipped) with no record of its judge is a warning naming ``source``."""
    unknown = []
    components = []
    for comp in card.components:
        criteria = []
        for c in comp.criteria:
            n = c.counts
            judged = c.track != "deterministic" and (n.passed + n.failed + n.uncertain) > 0
            found = list((judges or {}).get(c.criterion_id, []))
            if judged and not found:
                unknown.append(c.criterion_id)
            criteria.append(c.model_copy(update={"judges": found}) if found else c)
        components.append(comp.model_copy(update={"criteria": criteria}))
    warnings = list(card.warnings)
    if unknown:
        warnings.append(f"which judge decided {', '.join(unknown)} is not recorded ({source}): provider, model, "
                        "temperature and prompt digest unknown")
    return card.model_copy(update={"components": components, "warnings": warnings})
