"""Every file a judge run writes, named as its messages name them: what the run's output guard checks."""

from __future__ import annotations

from pathlib import Path

from evalkit.judge.run_outputs import sidecar_paths
from evalkit.judge.verification import verify_paths


def run_files(out: str | Path, *, journal: str | None = None, record: str | None = None,
              cache: str | None = None) -> dict[str, Path | None]:
    """The verdicts file, its sidecars, the verifier's files and the optional journal, cassette and cache.

    Args:
        out: the verdicts file (``--out``).
        journal: ``--journal`` (default ``OUT.journal.jsonl``).
        record: ``--record``: the cassette every live reply is appended to.
        cache: ``--cache``: the SQLite reply cache, written as replies come.

    Returns:
        The paths by name (None for an option not given).
    """
    out = Path(out)
    runs, default_journal, repeats = sidecar_paths(out)
    verified, verify_journal = verify_paths(out)
    return {"--out": out, "OUT.runs.jsonl": runs, "--journal" if journal else "OUT.journal.jsonl":
            Path(journal) if journal else default_journal, "OUT.repeats.jsonl": repeats,
            "OUT.verify.jsonl": verified, "OUT.verify.journal.jsonl": verify_journal, "--record": record,
            "--cache": cache}
