"""Do two annotators see the same failures? Cohen's kappa on the traces both of them labelled.

Kappa corrects raw agreement for the agreement two annotators would reach by chance given how often
each says pass or fail: with 90% passing traces, two people agree 82% of the time by luck alone.

This is kappa on error-analysis :class:`~evalkit.contracts.Annotation` records (latest label per trace,
pass/fail and each failure mode); :func:`evalkit.calibration.annotator_kappa` is kappa on a criterion's
human labels, the judge's ground truth. Both compute it with :func:`evalkit.stats.cohens_kappa`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit import stats
from evalkit.analysis.store import latest
from evalkit.contracts.annotation import Annotation, Taxonomy
from evalkit.errors import InputError
from evalkit.io.json_case import camel_json


@dataclass(frozen=True)
class AgreementOn:
    """Agreement on one question (``label``, or whether a trace shows one failure mode)."""

    about: str
    traces: int
    observed: float | None
    expected: float | None
    kappa: float | None
    """None when undefined: no shared traces, or chance agreement is already 1 (one category only)."""


@dataclass(frozen=True)
class AnnotatorAgreement:
    """Two annotators' agreement on pass/fail and on each failure mode."""

    annotators: tuple[str, str]
    shared_traces: int
    deferred: int
    """Shared traces left out because at least one of the two deferred."""
    label: AgreementOn
    modes: list[AgreementOn]

    def to_json_obj(self) -> dict[str, Any]:
        """A JSON-ready dict (camelCase keys, as ``evalkit analysis agreement --json`` prints it)."""
        return camel_json(self)


def agreement_on(pairs: Sequence[tuple[Hashable, Hashable]], about: str = "label") -> AgreementOn:
    """Cohen's kappa for paired ratings ``(first annotator's, second annotator's)`` on one question.

    The statistic itself is :func:`evalkit.stats.cohens_kappa`; this names what it is about.
    """
    k = stats.cohens_kappa([a for a, _ in pairs], [b for _, b in pairs])
    return AgreementOn(about, k.n, k.observed_agreement, k.chance_agreement, k.kappa)


def annotator_agreement(annotations: Sequence[Annotation], first: str, second: str,
                        taxonomy: Taxonomy | None = None) -> AnnotatorAgreement:
    """AgreementOn between two annotators' latest labels where both labelled the same traces.

    Pass/fail agreement leaves out traces either annotator deferred. Per-mode agreement asks, on the
    same traces, whether each annotator tagged the mode (a pass tags none).

    Args:
        annotations: store records in file order.
        first: one annotator.
        second: the other.
        taxonomy: the modes to report; without one, every mode either annotator used.

    Raises:
        InputError: an annotator with no labels, or the same annotator twice.
    """
    if first == second:
        raise InputError(f"agreement needs two different annotators (got {first!r} twice)", path="annotators")
    mine = {name: {a.trace_id: a for a in latest(annotations, name)} for name in (first, second)}
    for name, labels in mine.items():
        if not labels:
            raise InputError(f"no annotations by {name!r}", path="annotators")
    shared = [t for t in mine[first] if t in mine[second]]
    decided = [t for t in shared if mine[first][t].label != "defer" and mine[second][t].label != "defer"]
    pairs = [(mine[first][t], mine[second][t]) for t in decided]
    if taxonomy is not None:
        modes = taxonomy.mode_ids()
    else:
        modes = sorted({m for pair in pairs for a in pair for m in a.modes})
    return AnnotatorAgreement(
        annotators=(first, second), shared_traces=len(shared), deferred=len(shared) - len(decided),
        label=agreement_on([(a.label, b.label) for a, b in pairs]),
        modes=[agreement_on([(m in a.modes, m in b.modes) for a, b in pairs], about=m) for m in modes],
    )
