"""The journal's lock: one run writes a journal at a time, and no ``.lock`` file is left behind."""

from __future__ import annotations

import pytest

from evalkit.errors import InputError
from evalkit.judge import journal_lock


def test_a_second_run_is_refused_while_the_first_holds_the_lock_and_no_lock_file_is_left(tmp_path) -> None:
    journal = tmp_path / "v.journal.jsonl"
    with journal_lock(journal):
        assert (tmp_path / "v.journal.jsonl.lock").exists()
        with pytest.raises(InputError, match="another judge run is writing this journal"), journal_lock(journal):
            pass
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_lock_file_a_killed_run_left_is_taken_over(tmp_path) -> None:
    journal = tmp_path / "v.journal.jsonl"
    (tmp_path / "v.journal.jsonl.lock").write_text("")  # the kernel released a killed run's lock
    with journal_lock(journal):
        pass
    assert not (tmp_path / "v.journal.jsonl.lock").exists()
