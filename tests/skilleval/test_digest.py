"""Tree digests: the seed's test vector, refusals of what cannot be framed, streaming of big files."""

from __future__ import annotations

import hashlib
import os
import socket
import tracemalloc

import pytest

from evalkit.errors import InputError
from evalkit.skilleval import DOMAINS, bytes_sha256, file_sha256, outside_git, tree_digest, tree_files
from evalkit.skilleval import digest as digest_module

VECTOR = "5db773a558c295a028a00d61ac340c02f821857b65c0e3fd27e1134819c391d2"


def _vector_tree(root):
    (root / "nested").mkdir(parents=True)
    (root / "a.txt").write_bytes(b"alpha")
    (root / "nested" / "b.txt").write_bytes(b"beta")
    return root


def test_seed_test_vector(tmp_path):
    root = _vector_tree(tmp_path / "tree")
    assert tree_digest(root, "taskrail-skill-eval-fixtures-v1") == VECTOR


def test_framing_written_out_by_hand(tmp_path):
    root = _vector_tree(tmp_path / "tree")
    framed = (b"evalkit-skill-eval-fixtures-v1\x00" + b"a.txt\x005\x00alpha\x00" + b"nested/b.txt\x004\x00beta\x00")
    assert tree_digest(root, DOMAINS["fixtures"]) == hashlib.sha256(framed).hexdigest()


def test_domains_are_evalkits_own_and_change_the_digest(tmp_path):
    assert sorted(DOMAINS) == ["case", "fixtures", "product", "raw", "sandbox", "skill", "skill-set"]
    assert all(v == f"evalkit-skill-eval-{k}-v1" for k, v in DOMAINS.items())
    root = _vector_tree(tmp_path / "tree")
    assert len({tree_digest(root, d) for d in DOMAINS.values()}) == len(DOMAINS)


def test_sorted_by_utf8_bytes_and_content_sensitive(tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    (root / "b").write_bytes(b"1")
    (root / "a-b").write_bytes(b"2")
    (root / "a").mkdir()
    (root / "a" / "z").write_bytes(b"3")
    (root / "é").write_bytes(b"4")
    # "a-b" < "a/z" as bytes ('-' 0x2d < '/' 0x2f); "é" (0xc3..) after ASCII names
    assert [rel for rel, _ in tree_files(root)] == ["a-b", "a/z", "b", "é"]
    before = tree_digest(root, DOMAINS["case"])
    (root / "b").write_bytes(b"x")
    assert tree_digest(root, DOMAINS["case"]) != before
    (root / "b").write_bytes(b"1")
    assert tree_digest(root, DOMAINS["case"]) == before
    (root / "empty").mkdir()  # an empty folder frames nothing
    assert tree_digest(root, DOMAINS["case"]) == before
    (root / "b").rename(root / "c")  # a renamed file changes the digest
    assert tree_digest(root, DOMAINS["case"]) != before


def test_moving_bytes_between_files_changes_the_digest(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    (one / "a").write_bytes(b"xy")
    (one / "b").write_bytes(b"")
    (two / "a").write_bytes(b"x")
    (two / "b").write_bytes(b"y")
    assert tree_digest(one, DOMAINS["raw"]) != tree_digest(two, DOMAINS["raw"])


def test_symlinks_are_refused_naming_the_path(tmp_path):
    root = _vector_tree(tmp_path / "tree")
    (root / "nested" / "link").symlink_to(root / "a.txt")
    with pytest.raises(InputError, match="symlink") as err:
        tree_digest(root, DOMAINS["fixtures"])
    assert err.value.file == str(root / "nested" / "link")
    (root / "nested" / "link").unlink()
    (root / "dirlink").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(InputError, match="symlink") as err:
        tree_digest(root, DOMAINS["fixtures"])
    assert err.value.file == str(root / "dirlink")


def test_fifo_and_socket_are_refused(tmp_path):
    root = _vector_tree(tmp_path / "tree")
    os.mkfifo(root / "pipe")
    with pytest.raises(InputError, match="FIFO") as err:
        tree_digest(root, DOMAINS["fixtures"])  # must not hang waiting for a writer
    assert err.value.file == str(root / "pipe")
    with pytest.raises(InputError, match="FIFO"):
        file_sha256(root / "pipe")
    (root / "pipe").unlink()
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(root / "sock"))
        with pytest.raises(InputError, match="socket"):
            tree_digest(root, DOMAINS["fixtures"])
    finally:
        sock.close()


def test_non_utf8_names_are_refused(tmp_path):
    root = _vector_tree(tmp_path / "tree")
    bad = os.path.join(os.fsencode(root), b"caf\xe9.txt")
    with open(bad, "wb") as fh:
        fh.write(b"x")
    with pytest.raises(InputError, match="not valid UTF-8"):
        tree_digest(root, DOMAINS["fixtures"])


def test_not_a_folder_and_symlinked_file_refused(tmp_path):
    with pytest.raises(InputError, match="not a folder"):
        tree_digest(tmp_path / "missing", DOMAINS["case"])
    target = tmp_path / "t.txt"
    target.write_bytes(b"t")
    (tmp_path / "l.txt").symlink_to(target)
    with pytest.raises(InputError, match="symlink"):
        file_sha256(tmp_path / "l.txt")


def test_exclude_prunes_git_state(tmp_path):
    root = _vector_tree(tmp_path / "tree")
    plain = tree_digest(root, DOMAINS["product"])
    (root / ".git").mkdir()
    (root / ".git" / "index").write_bytes(b"changes every run")
    os.mkfifo(root / ".git" / "fifo")  # never even looked at
    (root / ".gitignore").write_bytes(b"x\n")
    assert [rel for rel, _ in tree_files(root, outside_git)] == [".gitignore", "a.txt", "nested/b.txt"]
    (root / ".gitignore").unlink()
    assert tree_digest(root, DOMAINS["product"], outside_git) == plain


def test_file_and_bytes_sha256(tmp_path):
    (tmp_path / "f").write_bytes(b"alpha")
    assert file_sha256(tmp_path / "f") == bytes_sha256(b"alpha") == hashlib.sha256(b"alpha").hexdigest()


def test_streams_a_file_larger_than_the_chunk(tmp_path, monkeypatch):
    monkeypatch.setattr(digest_module, "CHUNK", 4096)
    root = tmp_path / "tree"
    root.mkdir()
    block = bytes(range(256)) * 64  # 16 KiB, not a multiple of anything odd
    size = 3 * 1024 * 1024 + 17  # many chunks and a partial last one
    with open(root / "big.bin", "wb") as fh:
        for _ in range(size // len(block)):
            fh.write(block)
        fh.write(block[: size % len(block)])
    data = (root / "big.bin").read_bytes()
    expected = hashlib.sha256(DOMAINS["raw"].encode() + b"\x00big.bin\x00" + str(size).encode() + b"\x00"
                              + data + b"\x00").hexdigest()
    del data
    tracemalloc.start()
    try:
        got = tree_digest(root, DOMAINS["raw"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got == expected
    assert file_sha256(root / "big.bin") == hashlib.sha256((root / "big.bin").read_bytes()).hexdigest()
    assert peak < 256 * 1024, f"digesting a {size}-byte file held {peak} bytes at once"
