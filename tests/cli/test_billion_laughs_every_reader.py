"""Billion laughs in every YAML file a command reads: refused at once with a clear error, never a hang.

The reliability probe of issue 35 found 13 of 14 readers hanging on nine lines of nested aliases. Each
row gives one reader the bomb through the command a user would run; each must exit 1 within seconds,
saying it refused an alias bomb and naming the file.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from evalkit.cli import main

LAUGHS = "".join(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9) if prev else ', '.join(['lol'] * 9)}]\n"
                 for prev, name in zip([None, *"abcdefgh"], "abcdefghi", strict=True))

TRACE = '{"id": "t1", "observations": [{"id": "o1", "type": "GENERATION", "name": "reply", "output": "hi"}]}\n'
SPEC = "id: c1\ncriterion: Says hi.\npass: It says hi.\nfail: It does not.\n"


@pytest.fixture
def world(tmp_path: Path) -> Path:
    (tmp_path / "traces.jsonl").write_text(TRACE, encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(SPEC, encoding="utf-8")
    (tmp_path / "bomb.yaml").write_text(LAUGHS, encoding="utf-8")
    (tmp_path / "subject").mkdir()
    (tmp_path / "subject" / "subject.yaml").write_text(LAUGHS, encoding="utf-8")
    skill = tmp_path / "skills" / "jot"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\n" + LAUGHS + "---\n\n# Jot\n", encoding="utf-8")
    return tmp_path


READERS = {
    "validate": ["validate", "bomb.yaml"],
    "validate --kind subject": ["validate", "bomb.yaml", "--kind", "subject"],
    "subject (run)": ["run", "subject/subject.yaml", "--out", "out"],
    "subject (eval run)": ["eval", "run", "subject/subject.yaml", "--out", "out"],
    "subject (dataset check)": ["dataset", "check", "subject/subject.yaml"],
    "judge spec": ["judge", "prompt", "--spec", "bomb.yaml", "--trace", "t1", "--traces", "traces.jsonl"],
    "price table": ["judge", "run", "--spec", "spec.yaml", "--traces", "traces.jsonl", "--provider", "replay",
                    "--cassette", "traces.jsonl", "--out", "v.jsonl", "--prices", "bomb.yaml"],
    "taxonomy": ["review", "build", "traces.jsonl", "--taxonomy", "bomb.yaml", "--out", "r.html"],
    "chat mapping": ["traces", "import", "traces.jsonl", "--mapping", "bomb.yaml", "--out", "o.jsonl"],
    "expected flow": ["flow", "build", "traces.jsonl", "--expected", "bomb.yaml", "--out", "g.jsonl"],
    "eval matrix": ["scorecard", "bomb.yaml", "traces.jsonl"],
    "behavior tree": ["tree", "check", "bomb.yaml", "traces.jsonl"],
    "dataset": ["dataset", "check", "bomb.yaml"],
    "table of labels": ["labels", "import", "bomb.yaml", "--label-col", "l", "--criterion", "c",
                        "--into", "labels.jsonl"],
    "skill frontmatter": ["skill-eval", "lint", "skills"],
}


@pytest.mark.parametrize("argv", READERS.values(), ids=READERS.keys())
def test_every_reader_refuses_the_bomb_at_once(world, capsys, argv):
    cwd = os.getcwd()
    os.chdir(world)
    started = time.monotonic()
    try:
        code = main(argv)
    finally:
        os.chdir(cwd)
    out = capsys.readouterr()
    assert time.monotonic() - started < 5
    assert code == 1, out
    assert "alias bomb" in out.err + out.out and ("bomb.yaml" in out.err + out.out or "SKILL.md" in out.err
                                                   + out.out or "subject.yaml" in out.err)
