"""The test-set ledger: one line per measurement of a judge on the test split, never rewritten.

The test split is measured once per judge prompt; measuring it again after looking at the result
turns it into a second dev set. The ledger makes that visible: a second measurement of the same
criterion and prompt digest is refused unless forced, and a forced one is recorded as such.
"""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.contracts.labels import LedgerEntry
from evalkit.io.canonical import canonical_line
from evalkit.io.errors import InputError
from evalkit.validation import read_models


class TestSetAlreadyMeasured(RuntimeError):
    """The test split was already measured for this criterion and judge prompt."""

    __test__ = False  # not a pytest test class


class TestLedger:
    """An append-only JSONL file of test-set measurements.

    Args:
        path: the ledger file; created on the first record.
    """

    __test__ = False

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def entries(self) -> list[LedgerEntry]:
        """Every recorded measurement, oldest first.

        Raises:
            InputError: a line that is not a valid entry, located as FILE:LINE: field: message.
        """
        if not self.path.exists():
            return []
        return read_models(self.path, LedgerEntry, fmt="jsonl")  # JSONL whatever the file is named

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
        """Add one line at the end of the file; earlier lines are never touched."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = canonical_line(entry.model_dump(mode="json", by_alias=True)).encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if os.fstat(fd).st_size and not _ends_with_newline(self.path):
                raise InputError("last line is incomplete; fix it by hand before recording more",
                                 file=str(self.path))
            os.write(fd, data)  # one write of one short line: appended whole (O_APPEND)
            os.fsync(fd)
        finally:
            os.close(fd)


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"
