"""Every command's output options against its inputs: each pair refused before any work, naming both paths.

The table holds the nineteen pairs the reliability probe found written over (issue 35) and every other
output option a command has. The inputs are real files and folders in a temporary folder; each must keep
its bytes, and the error must name the option, the output and the input. A command whose guard call were
removed would fail later on these placeholder inputs too, but with another message: the message is what
the test holds.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit.cli import main

FILES = ("traces.jsonl", "verdicts.jsonl", "labels.jsonl", "spec.yaml", "cassette.jsonl", "matrix.yaml",
         "calibration.jsonl", "run.jsonl", "base.jsonl", "export.json", "table.csv", "taxonomy.yaml",
         "answers.json", "waiver.json", "report.json", "prices.yaml", "expected.yaml", "mapping.yaml",
         "validation.json", "v.runs.jsonl", "g.diff.jsonl")


@pytest.fixture
def world(tmp_path: Path) -> Path:
    for name in FILES:
        (tmp_path / name).write_text(f"placeholder {name}\n", encoding="utf-8")
    subject = tmp_path / "subject"
    subject.mkdir()
    (subject / "traces.jsonl").write_text("{}\n", encoding="utf-8")
    (subject / "subject.yaml").write_text("name: s\ntraces: traces.jsonl\nnotebooks: [00_overview]\n",
                                          encoding="utf-8")
    (tmp_path / "suite.json").write_text('{"cases": []}\n', encoding="utf-8")
    stage = tmp_path / "stage"
    (stage / "raw" / "case-1" / "candidate").mkdir(parents=True)
    (stage / "stage.json").write_text("{}\n", encoding="utf-8")
    (stage / "raw" / "case-1" / "candidate" / "facts.json").write_text("{}\n", encoding="utf-8")
    for folder in ("registry", "candidate", "baseline"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "kept.txt").write_text("kept\n", encoding="utf-8")
    return tmp_path


# (argv, the output as given, the input it must not replace); paths relative to the world folder.
JUDGE = ["judge", "run", "--spec", "spec.yaml", "--traces", "traces.jsonl", "--provider", "replay",
         "--cassette", "cassette.jsonl"]
SCORECARD = ["scorecard", "matrix.yaml", "traces.jsonl", "--verdicts", "verdicts.jsonl"]
RESUME = ["skill-eval", "resume", "stage", "--answers", "answers.json"]
SKILL_RUN = ["skill-eval", "run", "registry", "--candidate", "candidate", "--baseline", "baseline",
             "--adapter", "script"]
TABLE = [
    # the nineteen
    (JUDGE + ["--out", "traces.jsonl"], "traces.jsonl", "traces.jsonl"),
    (JUDGE + ["--out", "cassette.jsonl"], "cassette.jsonl", "cassette.jsonl"),
    (JUDGE + ["--out", "spec.yaml"], "spec.yaml", "spec.yaml"),
    (JUDGE + ["--labels", "labels.jsonl", "--out", "labels.jsonl"], "labels.jsonl", "labels.jsonl"),
    (["export", "otel", "verdicts.jsonl", "--traces", "traces.jsonl", "--out", "verdicts.jsonl"],
     "verdicts.jsonl", "verdicts.jsonl"),
    (["export", "langfuse", "verdicts.jsonl", "--traces", "traces.jsonl", "--out", "traces.jsonl"],
     "traces.jsonl", "traces.jsonl"),
    (SCORECARD + ["--out", "matrix.yaml"], "matrix.yaml", "matrix.yaml"),
    (SCORECARD + ["--out", "traces.jsonl"], "traces.jsonl", "traces.jsonl"),
    (["gate", "run.jsonl", "--baseline", "base.jsonl", "--markdown-out", "run.jsonl"], "run.jsonl", "run.jsonl"),
    (["calibrate", "--labels", "labels.jsonl", "--verdicts", "verdicts.jsonl", "--save-validation",
      "labels.jsonl"], "labels.jsonl", "labels.jsonl"),
    (["skill-eval", "worksheet", "stage", "--out", "stage/stage.json"], "stage/stage.json", "stage"),
    (["skill-eval", "worksheet", "stage", "--out", "stage/raw/case-1/candidate/facts.json"],
     "stage/raw/case-1/candidate/facts.json", "stage"),
    (RESUME + ["--out", "stage/stage.json"], "stage/stage.json", "stage"),
    (RESUME + ["--out", "stage/raw/case-1/candidate/facts.json"], "stage/raw/case-1/candidate/facts.json", "stage"),
    (RESUME + ["--out", "answers.json"], "answers.json", "answers.json"),
    (["skill-eval", "report-page", "report.json", "--out", "report.json"], "report.json", "report.json"),
    (["eval", "run", "subject/subject.yaml", "--out", "subject"], "subject", "subject/subject.yaml"),
    (JUDGE + ["--out", "v.jsonl", "--record", "cassette.jsonl"], "cassette.jsonl", "cassette.jsonl"),
    (["gate", "run.jsonl", "--baseline", "base.jsonl", "--markdown-out", "base.jsonl"], "base.jsonl", "base.jsonl"),
    # every other output option
    (JUDGE + ["--out", "v.jsonl", "--cache", "traces.jsonl"], "traces.jsonl", "traces.jsonl"),
    (JUDGE + ["--out", "v.jsonl", "--journal", "spec.yaml"], "spec.yaml", "spec.yaml"),
    (JUDGE + ["--prices", "prices.yaml", "--out", "prices.yaml"], "prices.yaml", "prices.yaml"),
    (["judge", "run", "--spec", "spec.yaml", "--traces", "v.runs.jsonl", "--provider", "replay", "--cassette",
      "cassette.jsonl", "--out", "v.jsonl"], "v.runs.jsonl", "v.runs.jsonl"),  # the runs sidecar of v.jsonl
    (SCORECARD + ["--verdicts-out", "verdicts.jsonl"], "verdicts.jsonl", "verdicts.jsonl"),
    (SCORECARD + ["--calibration", "calibration.jsonl", "--out", "calibration.jsonl"],
     "calibration.jsonl", "calibration.jsonl"),
    (["export", "otel", "verdicts.jsonl", "--traces", "traces.jsonl", "--labels", "labels.jsonl", "--out",
      "labels.jsonl"], "labels.jsonl", "labels.jsonl"),
    (["calibrate", "--labels", "labels.jsonl", "--verdicts", "verdicts.jsonl", "--save-validation",
      "verdicts.jsonl"], "verdicts.jsonl", "verdicts.jsonl"),
    (["calibrate", "--labels", "labels.jsonl", "--verdicts", "verdicts.jsonl", "--validation", "validation.json",
      "--save-validation", "validation.json"], "validation.json", "validation.json"),
    (["traces", "import", "traces.jsonl", "--out", "traces.jsonl"], "traces.jsonl", "traces.jsonl"),
    (["traces", "import", "subject/traces.jsonl", "--partition-by", "day", "--out", "subject"],
     "subject", "subject/traces.jsonl"),
    (["sample", "traces.jsonl", "--n", "1", "--out", "traces.jsonl"], "traces.jsonl", "traces.jsonl"),
    (["sample", "traces.jsonl", "--n", "1", "--verdicts", "verdicts.jsonl", "--out", "verdicts.jsonl"],
     "verdicts.jsonl", "verdicts.jsonl"),
    (["review", "build", "traces.jsonl", "--out", "traces.jsonl"], "traces.jsonl", "traces.jsonl"),
    (["review", "build", "traces.jsonl", "--taxonomy", "taxonomy.yaml", "--out", "taxonomy.yaml"],
     "taxonomy.yaml", "taxonomy.yaml"),
    (["labels", "import", "export.json", "--into", "export.json"], "export.json", "export.json"),
    (["labels", "import", "table.csv", "--label-col", "l", "--criterion", "c", "--into", "table.csv"],
     "table.csv", "table.csv"),
    (["verdicts", "import", "table.csv", "--result-col", "r", "--criterion", "c", "--into", "table.csv"],
     "table.csv", "table.csv"),
    (["flow", "build", "traces.jsonl", "--out", "traces.jsonl"], "traces.jsonl", "traces.jsonl"),
    (["flow", "build", "traces.jsonl", "--expected", "g.diff.jsonl", "--out", "g.jsonl"],
     "g.diff.jsonl", "g.diff.jsonl"),
    (["run", "subject/subject.yaml", "--out", "subject"], "subject", "subject/subject.yaml"),
    (["edd", "run", "subject/subject.yaml", "--out", "subject"], "subject", "subject/subject.yaml"),
    (["eval", "run", "subject/subject.yaml", "--out", "subject/..", "--cassette", "cassette.jsonl"],
     "subject/..", "subject/subject.yaml"),
    (RESUME + ["--waiver", "waiver.json", "--out", "waiver.json"], "waiver.json", "waiver.json"),
    (RESUME + ["--registry", "registry", "--out", "registry/report.json"], "registry/report.json", "registry"),
    (SKILL_RUN + ["--out", "registry/stage"], "registry/stage", "registry"),
    (SKILL_RUN + ["--out", "candidate"], "candidate", "candidate"),
    (SKILL_RUN + ["--out", "."], ".", "registry"),
    (["skill-eval", "propose", "stage", "--candidate", "candidate", "--agent-command", "true", "--out",
      "candidate/p.diff"], "candidate/p.diff", "candidate"),
    (["dataset", "merge", "suite.json", "suite.json"], "suite.json", "suite.json"),
    (["analysis", "draft-modes", "labels.jsonl", "--provider", "replay", "--cassette", "cassette.jsonl", "--out",
      "labels.jsonl"], "labels.jsonl", "labels.jsonl"),
    (["analysis", "draft-modes", "labels.jsonl", "--provider", "replay", "--cassette", "cassette.jsonl", "--out",
      "d.yaml", "--journal", "cassette.jsonl"], "cassette.jsonl", "cassette.jsonl"),
    (["analysis", "ratify", "taxonomy.yaml", "export.json", "--out", "export.json"], "export.json", "export.json"),
    (["analysis", "code-modes", "--taxonomy", "taxonomy.yaml", "--traces", "traces.jsonl", "--annotations",
      "labels.jsonl", "--provider", "replay", "--cassette", "cassette.jsonl", "--out", "."], ".", "taxonomy.yaml"),
    (["analysis", "adjudicate", "labels.jsonl", "verdicts.jsonl", "--at", "2026-01-01T00:00:00Z", "--out",
      "verdicts.jsonl"],
     "verdicts.jsonl", "verdicts.jsonl"),
    (["review", "build", "traces.jsonl", "--draft", "taxonomy.yaml", "--out", "taxonomy.yaml"],
     "taxonomy.yaml", "taxonomy.yaml"),
]


def _run(world: Path, argv: list[str]) -> int:
    cwd = os.getcwd()
    os.chdir(world)
    try:
        return main(argv)
    finally:
        os.chdir(cwd)


def _snapshot(world: Path) -> dict[str, bytes]:
    return {str(p.relative_to(world)): p.read_bytes() for p in sorted(world.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("argv", "out", "source"), TABLE, ids=[" ".join(row[0]) for row in TABLE])
def test_each_output_option_refuses_each_input(world, capsys, argv, out, source):
    before = _snapshot(world)
    code = _run(world, argv)
    err = capsys.readouterr().err
    assert code != 0, err
    assert _snapshot(world) == before  # nothing written, nothing replaced
    refusal = ("is also the input", "is inside the input", "holds the input", "is inside the sealed")
    assert any(r in err for r in refusal), err
    assert source in err and out in err, err


def test_an_output_equal_to_another_output_is_refused(world, capsys):
    code = _run(world, [*JUDGE, "--out", "v.jsonl", "--record", "v.jsonl"])
    assert code == 1 and "--record (v.jsonl) is also --out (v.jsonl)" in capsys.readouterr().err
    code = _run(world, [*SCORECARD, "--out", "card.json", "--verdicts-out", "card.json"])
    assert code == 1 and "--verdicts-out (card.json) is also --out (card.json)" in capsys.readouterr().err


def test_a_hard_link_and_a_symlink_to_an_input_are_the_input(world, capsys):
    os.link(world / "traces.jsonl", world / "hard.jsonl")
    (world / "soft.jsonl").symlink_to(world / "traces.jsonl")
    for name in ("hard.jsonl", "soft.jsonl"):
        code = _run(world, ["sample", "traces.jsonl", "--n", "1", "--out", name])
        assert code == 1 and f"--out ({name}) is also the input TRACES (traces.jsonl)" in capsys.readouterr().err
    assert (world / "soft.jsonl").is_symlink()


WRITERS = [
    JUDGE + ["--out", "{}"],
    ["export", "otel", "verdicts.jsonl", "--traces", "traces.jsonl", "--out", "{}"],
    ["export", "langfuse", "verdicts.jsonl", "--traces", "traces.jsonl", "--out", "{}"],
    SCORECARD + ["--out", "{}"],
    SCORECARD + ["--verdicts-out", "{}"],
    ["gate", "run.jsonl", "--baseline", "base.jsonl", "--markdown-out", "{}"],
    ["calibrate", "--labels", "labels.jsonl", "--verdicts", "verdicts.jsonl", "--save-validation", "{}"],
    ["skill-eval", "worksheet", "stage", "--out", "{}"],
    RESUME + ["--out", "{}"],
    ["skill-eval", "report-page", "report.json", "--out", "{}"],
    ["traces", "import", "traces.jsonl", "--out", "{}"],
    ["sample", "traces.jsonl", "--n", "1", "--out", "{}"],
    ["review", "build", "traces.jsonl", "--out", "{}"],
    ["labels", "import", "export.json", "--into", "{}"],
    ["verdicts", "import", "table.csv", "--result-col", "r", "--criterion", "c", "--into", "{}"],
    ["flow", "build", "traces.jsonl", "--out", "{}"],
    ["schema", "--out", "{}"],
    ["skill-eval", "propose", "stage", "--candidate", "candidate", "--agent-command", "true", "--out", "{}"],
]


@pytest.mark.parametrize("argv", WRITERS, ids=[" ".join(a[:2]) + " " + a[-2] for a in WRITERS])
@pytest.mark.parametrize("special", ["fifo.jsonl", "to-dev-null.jsonl", "to-stdout.jsonl"])
def test_no_writer_replaces_a_device_a_fifo_or_a_stream(world, capsys, argv, special):
    """A FIFO here, and links to /dev/null and /dev/stdout: a writer without the guard would replace the link
    (never the device itself), so the test is safe to run as root."""
    os.mkfifo(world / "fifo.jsonl")
    (world / "to-dev-null.jsonl").symlink_to("/dev/null")
    (world / "to-stdout.jsonl").symlink_to("/dev/stdout")
    code = _run(world, [a.replace("{}", special) for a in argv])
    err = capsys.readouterr().err
    assert code != 0 and f"({special}) is " in err and ("FIFO" in err or "device" in err or "stream" in err), err
    assert (world / "fifo.jsonl").is_fifo()
    assert os.readlink(world / "to-dev-null.jsonl") == "/dev/null"
    assert os.readlink(world / "to-stdout.jsonl") == "/dev/stdout"
