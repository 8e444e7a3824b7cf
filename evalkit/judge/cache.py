"""The judge cache: validated replies stored by what produced them, so a rerun makes no calls.

The key is the sha256 of the canonical JSON of provider, model, temperature, the reply's token cap
(``max_tokens``, for providers that send one), the prompt's digest (its messages and schema) and the
repeat number: change any of them and the judge is asked again; change
none and the stored reply is used, so the verdicts written are byte-identical. Repeats are separate
entries, or ``--repeats 5`` would replay one answer five times. Only replies that passed validation
are stored, and deterministic errors (a context overflow, a reply invalid after the correction: the same
request fails the same way), with ``mode`` ``error`` and the message as ``output``, so a rerun does not
pay for them again (``--retry-errors`` asks again). Transient errors are never stored.

SQLite in WAL mode: readers never block, writes are committed in batches by the runner (at the same
points it appends to its journal), and a process killed mid-batch loses only uncommitted entries.
Several processes may share one cache file on one machine (the workers of ``evalkit judge run
--workers N``): each batch takes the write lock when it begins (``BEGIN IMMEDIATE``) and a writer that
finds it held waits up to :data:`BUSY_SECONDS` instead of failing. (Not on a network file system:
SQLite's locks need one machine's.)
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import InputError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key BLOB PRIMARY KEY,          -- sha256 digest, 32 bytes
    output TEXT NOT NULL,          -- the validated reply, canonical JSON
    input_tokens INTEGER,
    output_tokens INTEGER,
    cost_usd REAL,                 -- NULL: unknown (no price for the model)
    mode TEXT NOT NULL
) WITHOUT ROWID
"""


def cache_key(provider: str, model: str, temperature: float, prompt_digest: str, repeat: int,
              max_tokens: int | None = None) -> bytes:
    """The content address of one judged prompt (see the module docstring)."""
    return key_maker(provider, model, temperature, max_tokens)(prompt_digest, repeat)


def key_maker(provider: str, model: str, temperature: float,
              max_tokens: int | None = None) -> Callable[[str, int], bytes]:
    """:func:`cache_key` with the run's constant part encoded once (the cache replays 50,000+ items/s).

    ``max_tokens`` is the cap the provider sends (a different cap is a different request); providers that
    send none (replay, scripted) leave it out.
    """
    cap = "" if max_tokens is None else f'"maxTokens":{int(max_tokens)},'
    head = (f'{{{cap}"model":{json.dumps(model, ensure_ascii=False)},"provider":'
            f'{json.dumps(provider, ensure_ascii=False)},"temperature":{float(temperature)!r},"digest":"').encode()
    sha256 = hashlib.sha256

    def key(prompt_digest: str, repeat: int) -> bytes:
        return sha256(head + f'{prompt_digest}","repeat":{int(repeat)}}}'.encode()).digest()

    return key


MMAP_BYTES = 1 << 30

BUSY_SECONDS = 60.0
"""How long a process waits for another's write to the cache file to finish (a batch takes milliseconds)."""


@dataclass(frozen=True)
class CachedReply:
    """A stored reply: the validated output as canonical JSON, and what producing it cost."""

    output: str
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    mode: str


class JudgeCache:
    """A SQLite file of validated judge replies.

    Args:
        path: the database file; created with its folder when missing.

    Raises:
        InputError: the file exists but is not a judge cache.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                       timeout=BUSY_SECONDS)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            # Lookups are random (keys are hashes): map the file rather than read it page by page. The
            # mapping is the OS's file cache, not this process's heap, and is capped.
            self._db.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            self._db.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise InputError(f"not a judge cache: {exc}", file=str(path)) from None
        self._pending: list[tuple] = []

    def get(self, key: bytes) -> CachedReply | None:
        """The stored reply for ``key``, or None."""
        row = self._db.execute("SELECT output, input_tokens, output_tokens, cost_usd, mode FROM replies "
                               "WHERE key = ?", (key,)).fetchone()
        return CachedReply(*row) if row else None

    def get_many(self, keys: Iterable[bytes]) -> dict[bytes, tuple]:
        """The stored replies among ``keys`` (up to 500 per query), as :class:`CachedReply` field tuples."""
        return {key: row[1:] for key, row in self.rows(keys).items()}

    def rows(self, keys: Iterable[bytes]) -> dict[bytes, tuple]:
        """Like :meth:`get_many`, each row with its key first (``key, *CachedReply fields``): the runner's
        replay loop reads these, a tuple less per reply."""
        keys = sorted(keys)  # the B-tree is walked in key order: fewer pages touched per query
        found: dict[bytes, tuple] = {}
        for start in range(0, len(keys), 500):
            part = keys[start:start + 500]
            marks = ",".join("?" * len(part))
            found.update({row[0]: row for row in self._db.execute(
                f"SELECT key, output, input_tokens, output_tokens, cost_usd, mode FROM replies "
                f"WHERE key IN ({marks})", part)})
        return found

    def put(self, key: bytes, reply: CachedReply) -> None:
        """Store a reply; it is written at the next :meth:`commit`."""
        self._pending.append((key, reply.output, reply.input_tokens, reply.output_tokens, reply.cost_usd,
                              reply.mode))

    def commit(self) -> None:
        """Write the pending replies in one transaction."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")  # the write lock now, waiting for another process's batch
            self._db.executemany("INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?)", pending)

    def __len__(self) -> int:
        return self._db.execute("SELECT count(*) FROM replies").fetchone()[0]

    def close(self) -> None:
        """Commit what is pending and close the file."""
        self.commit()
        self._db.close()
