"""The run history: one record per run of a subject, appended to ``HISTORY/history.jsonl``.

A record holds what the run is compared by (its :class:`~evalkit.contracts.summary.Headline`), where it
came from, and the name of the per-item verdicts kept beside the store, so two runs can be paired item by
item (McNemar, paired bootstrap) long after their run folders are gone.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from evalkit.contracts.base import SchemaNamed, SnakeContract
from evalkit.contracts.summary import Headline
from evalkit.contracts.types import NonEmptyStr

Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]

HistorySource = Literal["run", "eval-run"]
"""What wrote the record: ``evalkit run`` (the subject's notebooks, a batch's subjects too) or ``evalkit eval
run`` (the agent on the dataset's cases, then the matrix). Records of one subject from each form two series."""


class HistoryRecord(SnakeContract, SchemaNamed):
    """One run's headline numbers, as the history keeps them."""

    id: Sha256
    """Digest of the record's other fields: a run recorded twice with the same inputs, time and numbers is
    one point of the history, not two."""
    series: NonEmptyStr
    """The subject's name; with ``source``, the line of runs a record is compared along."""
    source: HistorySource
    run_at: str | None = None
    """The run's injected timestamp (``--at``); the store's order is the order of the runs."""
    run: str | None = None
    """The run folder, relative to the history folder when it lies below the same parent, else as given."""
    inputs: Sha256
    """Digest of the run's input files (their names and SHA-256s): the same data, the same digest."""
    seed: int | None = None
    judge: str | None = None
    """The subject's pinned judge (``provider/model``); the judge of each criterion is in the headline."""
    batch: str | None = None
    """The batch the run was part of, when a batch ran it."""
    headline: Headline
    verdicts: Annotated[str, Field(pattern=r"^verdicts/[0-9a-f]{64}\.jsonl$")] | None = None
    """The run's per-item verdicts, kept in the history folder by content digest; None when it had none."""
