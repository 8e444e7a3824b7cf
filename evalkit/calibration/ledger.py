"""The test-set ledger: one line per measurement of a judge on the test split, never rewritten.

The test split is measured once per judge prompt; measuring it again after looking at the result
turns it into a second dev set. The ledger makes that visible: a second measurement of the same
criterion and prompt digest is refused unless forced, and a forced one is recorded as such.

The ledger is an append-only store (:mod:`evalkit.io.append_only`): a final line cut off by an
interrupted write is left out on reading and dropped by the next record; any other bad line is an
error naming it.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.contracts.labels import LedgerEntry
from evalkit.errors import TestSetAlreadyMeasured
from evalkit.io.append_only import AppendOnlyStore, append_batch, store_lock


class TestLedger:
    """An append-only JSONL file of test-set measurements.

    Args:
        path: the ledger file; created on the first record.
    """

    __test__ = False

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._store = AppendOnlyStore(self.path, LedgerEntry)

    def entries(self) -> list[LedgerEntry]:
        """Every recorded measurement, oldest first.

        Raises:
            InputError: a line that is not a valid entry, located as FILE:LINE: field: message.
        """
        return self._store.read().records  # JSONL whatever the file is named; missing is empty

    def previous(self, criterion_id: str, prompt_digest: str) -> list[LedgerEntry]:
        """The earlier measurements of this criterion with this judge prompt."""
        return [e for e in self.entries()
                if e.criterion_id == criterion_id and e.prompt_digest == prompt_digest]

    def check(self, criterion_id: str, prompt_digest: str, *, force: bool = False) -> None:
        """Refuse a second measurement of the same criterion and prompt unless ``force``.

        Raises:
            TestSetAlreadyMeasured: naming when the earlier measurement was made.
        """
        earlier = self.previous(criterion_id, prompt_digest)
        if earlier and not force:
            first = earlier[0]
            raise TestSetAlreadyMeasured(
                f"{self.path}: the test set was already measured for criterion {criterion_id!r} with "
                f"judge prompt {prompt_digest} (at {first.measured_at}, {len(earlier)} time(s)); "
                "iterate on the dev split, or change the prompt, or pass force=True (--force) to "
                "measure again, which is recorded as forced")

    def append(self, entry: LedgerEntry) -> None:
        """Add one line at the end of the file; earlier lines are never touched.

        Raises:
            TestSetAlreadyMeasured: a measurement that is not forced, when another one of the same criterion
                and prompt landed since :meth:`check` (two runs at once): checked again in the store's turn.
        """
        with store_lock(self.path):
            if not entry.forced:
                self.check(entry.criterion_id, entry.prompt_digest)
            append_batch(self.path, [entry.model_dump(mode="json", by_alias=True)])  # every field, defaults too
