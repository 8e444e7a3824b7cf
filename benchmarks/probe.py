"""A reliability probe: mutated inputs over a spread of commands, counting tracebacks, inputs overwritten,
exit 0 on an empty input, and commands that wrote over one of their own inputs.

``python -m benchmarks.probe [--out DIR]`` copies a slice of the bundled sample into DIR (a temporary folder
by default), and for every command below and every mutation of the file it reads (empty, blank, cut off,
not JSON, binary, a BOM, duplicate keys, numbers past a double, deep nesting, each field of the first record
set to null, 3, "x", [] and {} or removed, and, for YAML, an alias bomb and a Python tag) runs the command in
this process, as ``evalkit ARGS`` would. Then each command whose options write a file is given its own input
as that output. It prints one line per finding and the counts; the exit code is 1 when a traceback or an
overwrite was found.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sys
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from evalkit.cli import main

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
SLICE = 12  # records per JSONL file: enough for every command, small enough for hundreds of runs


def _slice(src: Path, dest: Path) -> None:
    for path in src.iterdir():
        if path.suffix == ".jsonl":
            dest.joinpath(path.name).write_text("".join(path.read_text().splitlines(keepends=True)[:SLICE * 10]
                                                        if "verdicts" in path.name or "labels" in path.name
                                                        else path.read_text().splitlines(keepends=True)[:SLICE]))
        elif path.is_file():
            shutil.copy(path, dest / path.name)


# Each command: (name, the sample file it reads and the probe mutates, argv with {X} for that file, {S} for
# the sample folder and {O} for a fresh output folder).
COMMANDS: list[tuple[str, str, list[str]]] = [
    ("traces import", "traces.jsonl", ["traces", "import", "{X}", "--out", "{O}/t.jsonl"]),
    ("traces import --skip-invalid", "traces.jsonl", ["traces", "import", "{X}", "--out", "{O}/t.jsonl",
                                                      "--skip-invalid"]),
    ("traces stats", "traces.jsonl", ["traces", "stats", "{X}"]),
    ("validate traces", "traces.jsonl", ["validate", "{X}"]),
    ("flow build", "traces.jsonl", ["flow", "build", "{X}", "--out", "{O}/f.jsonl"]),
    ("scorecard (traces)", "traces.jsonl", ["scorecard", "{S}/eval-matrix.yaml", "{X}", "--out", "{O}/c.json"]),
    ("scorecard (matrix)", "eval-matrix.yaml", ["scorecard", "{X}", "{S}/traces.jsonl", "--out", "{O}/c.json"]),
    ("scorecard --verdicts", "criterion-verdicts.jsonl", ["scorecard", "{S}/eval-matrix.yaml", "{S}/traces.jsonl",
                                                          "--verdicts", "{X}", "--out", "{O}/c.json"]),
    ("judge lint", "criterion-verdicts.jsonl", ["judge", "lint", "{X}", "--traces", "{S}/traces.jsonl"]),
    ("judge run (spec)", "judge-specs.yaml", ["judge", "run", "--spec", "{X}", "--traces", "{S}/traces.jsonl",
                                              "--provider", "replay", "--cassette", "{S}/judge-cassette.jsonl",
                                              "--out", "{O}/v.jsonl", "--limit", "2", "--no-progress"]),
    ("judge run (cassette)", "judge-cassette.jsonl", ["judge", "run", "--spec", "{S}/judge-specs.yaml", "--traces",
                                                      "{S}/traces.jsonl", "--provider", "replay", "--cassette",
                                                      "{X}", "--out", "{O}/v.jsonl", "--limit", "2",
                                                      "--no-progress"]),
    ("calibrate (labels)", "human-labels.jsonl", ["calibrate", "--labels", "{X}", "--verdicts",
                                                  "{S}/criterion-verdicts.jsonl"]),
    ("calibrate (verdicts)", "criterion-verdicts.jsonl", ["calibrate", "--labels", "{S}/human-labels.jsonl",
                                                          "--verdicts", "{X}"]),
    ("analysis rates", "annotations.jsonl", ["analysis", "rates", "{X}"]),
    ("review build", "traces.jsonl", ["review", "build", "{X}", "--out", "{O}/r.html"]),
    ("sample", "traces.jsonl", ["sample", "{X}", "--n", "3", "--out", "{O}/s.jsonl"]),
    ("export otel", "criterion-verdicts.jsonl", ["export", "otel", "{X}", "--traces", "{S}/traces.jsonl",
                                                 "--out", "{O}/e.json"]),
    ("compare", "criterion-verdicts.jsonl", ["compare", "{X}", "{S}/criterion-verdicts.prompt-v2.jsonl"]),
    ("validate subject", "subject.yaml", ["validate", "{X}"]),
    ("validate taxonomy", "failure-modes.yaml", ["validate", "{X}"]),
]


def _first_record(text: str, suffix: str) -> Any:
    if suffix == ".jsonl":
        return json.loads(text.splitlines()[0])
    return yaml.safe_load(text) if suffix == ".yaml" else json.loads(text)


def _with_first(text: str, suffix: str, record: Any) -> str:
    if suffix == ".jsonl":
        return json.dumps(record) + "\n" + "".join(text.splitlines(keepends=True)[1:])
    if suffix == ".yaml":
        return yaml.safe_dump(record, sort_keys=False)
    return json.dumps(record)


def mutations(text: str, suffix: str) -> Iterator[tuple[str, bytes]]:
    """Every mutation of one file's text, by name."""
    yield "empty", b""
    yield "blank", b"\n \n"
    yield "cut off", text.encode()[: len(text.encode()) // 2]
    yield "not JSON", b"{\n"
    yield "binary", bytes(range(256))
    yield "BOM", b"\xef\xbb\xbf" + text.encode()
    yield "CRLF", text.replace("\n", "\r\n").encode()
    yield "huge number", (text.replace(": 0", ": 1e400", 1) if ": 0" in text else "1e400\n" + text).encode()
    yield "deep nesting", ("[" * 5000 + "]" * 5000 + "\n").encode()
    if suffix == ".jsonl":
        first = text.split("\n", 1)[0]
        yield "duplicate key", (first[:-1] + ', "id": "dup"}\n' + text).encode()
    if suffix == ".yaml":
        bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
            f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(8))
        yield "alias bomb", bomb.encode()
        yield "python tag", b"!!python/object/apply:os.system ['true']\n"
    try:
        record = _first_record(text, suffix)
    except Exception:  # noqa: BLE001 (a file the probe cannot read whole has no field mutations)
        return
    if not isinstance(record, dict):
        return
    for key in list(record)[:12]:
        for name, value in (("null", None), ("3", 3), ('"x"', "x"), ("[]", []), ("{}", {})):
            yield f"{key}={name}", _with_first(text, suffix, {**record, key: value}).encode()
        yield f"{key} removed", _with_first(text, suffix, {k: v for k, v in record.items() if k != key}).encode()
    yield "unknown field", _with_first(text, suffix, {**record, "probeUnknown": 1}).encode()
    yield "bidi and U+2028", _with_first(text, suffix, {
        k: (f"{v}\u202e\u2028" if isinstance(v, str) else v) for k, v in record.items()}).encode()


def run(argv: list[str]) -> tuple[int | str, str]:
    """One command in this process: its exit code (or ``traceback``) and what it printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code: int | str = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        except BaseException:  # noqa: BLE001 (a traceback is what the probe counts)
            code = "traceback"
            err.write(traceback.format_exc())
    return code, out.getvalue() + err.getvalue()


def probe(root: Path, report: Callable[[str], None]) -> Counter[str]:
    """Run every command on every mutation of its input, then every writer on its own input as its output."""
    sample = root / "sample"
    sample.mkdir(parents=True)
    _slice(SAMPLE, sample)
    counts: Counter[str] = Counter()
    for name, file, argv in COMMANDS:
        base = (sample / file).read_text()
        for mutation, data in mutations(base, Path(file).suffix):
            case = root / "cases" / f"{counts['runs']}"
            (case / "out").mkdir(parents=True)
            target = case / file
            target.write_bytes(data)
            args = [a.format(X=target, S=sample, O=case / "out") for a in argv]
            code, said = run(args)
            counts["runs"] += 1
            if code == "traceback" or "Traceback (most recent call last)" in said:
                counts["tracebacks"] += 1
                report(f"TRACEBACK {name} / {mutation}: {said.strip().splitlines()[-1][:200]}")
            if target.read_bytes() != data:
                counts["inputs changed"] += 1
                report(f"INPUT CHANGED {name} / {mutation}")
            if mutation in ("empty", "blank") and code == 0:
                counts["exit 0 on an empty input"] += 1
                report(f"EXIT 0 ON EMPTY {name} / {mutation}")
            counts[f"exit {code}"] += 1
            shutil.rmtree(case)
    for name, file, argv in COMMANDS:  # each writer given its own input as its output
        if not any("{O}" in a for a in argv):
            continue
        case = root / "own" / name.replace(" ", "-")
        case.mkdir(parents=True)
        target = case / file
        shutil.copy(sample / file, target)
        before = target.read_bytes()
        args = [str(target) if "{O}" in a else a.format(X=target, S=sample) for a in argv]
        code, said = run(args)
        counts["own-input runs"] += 1
        if target.read_bytes() != before:
            counts["overwrites"] += 1
            report(f"OVERWRITE {name}: exit {code}")
        elif code == 0:
            counts["own input accepted, unchanged"] += 1
            report(f"ACCEPTED {name}: exit 0 with its input as its output")
    return counts


def cli(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.probe", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="a new folder for the probe's files (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="evalkit-probe-") as tmp:
        root = Path(args.out) if args.out else Path(tmp)
        counts = probe(root, print)
    print("; ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    return 1 if counts["tracebacks"] or counts["overwrites"] or counts["inputs changed"] else 0


if __name__ == "__main__":
    sys.exit(cli())
