"""An error echoes a value short: a 10 MB id or key gives a one-line error, saying how long it was."""

from __future__ import annotations

from evalkit.cli import main
from evalkit.errors import ECHO_LIMIT, InputError


def test_long_words_in_a_message_and_a_path_are_cut_to_their_start_and_length():
    error = InputError(f"duplicate trace id {'x' * 5000!r}; rename one", path="metadata." + "k" * 400)
    assert len(error.render()) < 2 * ECHO_LIMIT + 200
    assert "... (5,003 characters) rename one" in error.message and "(409 characters)" in error.path
    assert InputError("short words stay as they are").message == "short words stay as they are"


def test_a_ten_megabyte_id_is_not_echoed_whole(tmp_path, capsys):
    line = '{"id": "' + "x" * 10_000_000 + '", "observations": []}\n'
    (tmp_path / "dup.jsonl").write_text(line * 2, encoding="utf-8")
    assert main(["traces", "import", str(tmp_path / "dup.jsonl"), "--out", str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err
    assert len(err) < 500 and "duplicate trace id" in err and "(10,000,002 characters)" in err
