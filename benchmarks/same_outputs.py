"""Do two versions of evalkit write the same bytes? A refactor's check that no behaviour changed.

The scenario runs the README's main jobs on the bundled sample (the demo's validate, stats, eval run,
replayed judge run, ``evalkit run`` with its notebooks and report, the skill release chain) plus a spread
of other commands (calibrate, flow, sample, analysis, review, compare, gate, scorecard, dataset, export,
schema) and every command's ``--help``. Each command's exit code, standard output and standard error are
recorded, and every file the scenario leaves in its work folder is compared byte for byte.

Both versions run in the same work folder path, with their own ``data/`` and ``examples/``, so absolute
paths in outputs are equal; each runs with its own code first on ``PYTHONPATH``.

Run: ``python -m benchmarks.same_outputs --against REV`` (a commit, branch or tag: the base is checked
out in a temporary git worktree), or ``--record DIR`` then ``--check DIR`` to compare later.
Exit 0 when every byte is the same, 1 with a list of what differs.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = Path(tempfile.gettempdir()) / "evalkit-same-outputs" / "work"
AT = "2026-12-01T00:00:00Z"
SKILL = "data/skilleval"

SCENARIO: list[tuple[str, list[str]]] = [
    ("validate", ["validate", "--quiet", *[f"examples/contracts/{n}" for n in (
        "agent-run.json", "behavior-tree.json", "criterion-verdict.json", "dataset.json", "eval-matrix.json",
        "human-label.json", "judge-spec.json", "scorecard.json", "subject.json", "trace.jsonl",
        "skill-eval-case.json", "skill-eval-stage.json", "skill-eval-report.json")],
        "data/sample/subject.yaml", "data/sample/traces.jsonl", "data/sample/human-labels.jsonl"]),
    ("validate-loud", ["validate", "data/sample/eval-matrix.yaml", "data/sample/dataset.json"]),
    ("stats", ["traces", "stats", "data/sample/traces.jsonl"]),
    ("stats-json", ["traces", "stats", "data/sample/traces.jsonl", "--json"]),
    ("import", ["traces", "import", "data/sample/traces.jsonl", "--out", "out/imported.jsonl"]),
    ("eval-run", ["eval", "run", "data/sample/subject.yaml", "--out", "out/sample-eval", "--repeats", "2",
                  "--concurrency", "4"]),
    ("scorecard-show", ["scorecard", "show", "out/sample-eval/scorecard.json"]),
    ("judge-run", ["judge", "run", "--spec", "data/sample/judge-specs.yaml", "--traces",
                   "data/sample/traces.jsonl", "--labels", "data/sample/human-labels.jsonl", "--provider",
                   "replay", "--cassette", "data/sample/judge-cassette.jsonl", "--out",
                   "out/judge/criterion-verdicts.jsonl", "--no-progress"]),
    ("judge-lint", ["judge", "lint", "data/sample/criterion-verdicts.jsonl", "--traces",
                    "data/sample/traces.jsonl"]),
    ("judge-prompt", ["judge", "prompt", "--spec", "data/sample/judge-specs.yaml", "--trace", "tr-0002",
                      "--traces", "data/sample/traces.jsonl"]),
    ("calibrate", ["calibrate", "--labels", "data/sample/human-labels.jsonl", "--verdicts",
                   "data/sample/criterion-verdicts.jsonl", "--criterion", "grounded-policy"]),
    ("calibrate-gate", ["calibrate", "--labels", "data/sample/human-labels.jsonl", "--verdicts",
                        "data/sample/criterion-verdicts.jsonl", "--criterion", "escalation-correct", "--gate",
                        "lower-bound", "--save-validation", "out/validation.json"]),
    ("flow", ["flow", "build", "data/sample/traces.jsonl", "--out", "out/graphs.jsonl", "--expected",
              "data/sample/expected-flow.json"]),
    ("sample", ["sample", "data/sample/traces.jsonl", "--n", "20", "--strategy", "failure-driven", "--out",
                "out/to-review.jsonl"]),
    ("rates", ["analysis", "rates", "data/sample/annotations.jsonl"]),
    ("review", ["review", "build", "out/to-review.jsonl", "--taxonomy", "data/sample/failure-modes.yaml",
                "--out", "out/review.html", "--hide-metadata", "injected_failures"]),
    ("compare", ["compare", "data/sample/criterion-verdicts.prompt-v1.jsonl",
                 "data/sample/criterion-verdicts.prompt-v2.jsonl"]),
    ("gate", ["gate", "data/sample/criterion-verdicts.prompt-v2.jsonl", "--baseline",
              "data/sample/criterion-verdicts.prompt-v1.jsonl"]),
    ("scorecard", ["scorecard", "data/sample/eval-matrix.yaml", "data/sample/traces.jsonl", "--verdicts",
                   "data/sample/criterion-verdicts.jsonl", "--out", "out/scorecard.json"]),
    ("dataset-expand", ["dataset", "expand", "data/sample/subject.yaml", "--missing"]),
    ("dataset-check", ["dataset", "check", "data/sample/subject.yaml"]),
    ("export-otel", ["export", "otel", "data/sample/criterion-verdicts.jsonl", "--traces",
                     "data/sample/traces.jsonl", "--out", "out/otel.jsonl"]),
    ("schema", ["schema", "--out", "out/schemas"]),
    ("run", ["run", "data/sample/subject.yaml", "--out", "out/sample", "--at", AT]),
    ("skill-lint", ["skill-eval", "lint", f"{SKILL}/skills/candidate", "--policy",
                    f"{SKILL}/registry/policy.json"]),
    ("skill-validate", ["skill-eval", "validate", f"{SKILL}/registry"]),
    ("skill-run", ["skill-eval", "run", f"{SKILL}/registry", "--candidate", f"{SKILL}/skills/candidate",
                   "--baseline", f"{SKILL}/skills/baseline", "--adapter", "script", "--bin",
                   f"tasknote={SKILL}/tool/tasknote", "--session-id", "sample-release-0-2", "--generated-at",
                   "2026-11-30T09:00:00Z", "--candidate-version", "0.2.0", "--baseline-version", "0.1.0",
                   # the work folder is no Git checkout: provenance cannot be verified, so the report says so
                   "--tested-head", "0" * 40, "--bin", f"git={shutil.which('git')}", "--same-baseline-bin",
                   "--allow-dirty", "--out", "out/skilleval/stage"]),
    ("skill-worksheet", ["skill-eval", "worksheet", "out/skilleval/stage", "--out",
                         "out/skilleval/worksheet.html"]),
    ("skill-resume", ["skill-eval", "resume", "out/skilleval/stage", "--answers", f"{SKILL}/answers.json",
                      "--out", "out/skilleval/report.json"]),
    ("skill-page", ["skill-eval", "report-page", "out/skilleval/report.json", "--out",
                    "out/skilleval/report.html"]),
    ("report", ["report", "out/sample"]),
    # Errors are behaviour too
    ("error-missing", ["traces", "stats", "no-such-file.jsonl"]),
    ("error-criterion", ["calibrate", "--labels", "data/sample/human-labels.jsonl", "--verdicts",
                         "data/sample/criterion-verdicts.jsonl", "--criterion", "no-such-criterion"]),
]

# Printed timings and progress bars differ from run to run of the same code.
_VOLATILE = [
    (re.compile(r"\d+(\.\d+)?\s?(s|ms|seconds)\b"), "<time>"),
    (re.compile(r"\d+(\.\d+)?(it|item|items)/s"), "<rate>"),
    (re.compile(r"\[\d\d:\d\d(<[^\]]*)?\]"), "[<elapsed>]"),
]


def _normalise(text: str) -> str:
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


# Notebook 04 before issue 35 showed some charts with altair's own HTML renderer, whose element ids are random;
# every notebook now draws its charts as SVG (no ids), so this matters only when REV is older than that.
_RANDOM_IDS = re.compile(rb"altair-viz-[0-9a-f]{32}")


def _notebook_outputs(data: bytes) -> bytes:
    """An executed notebook without its code: what it showed, prints joined per stream as evalkit now writes
    them (a refactor moves code out of the notebooks; what they show must stay the same)."""
    nb = json.loads(data)
    for cell in nb.get("cells", []):
        cell.pop("source", None)
        merged: list = []
        for out in cell.get("outputs", []):
            if (merged and out.get("output_type") == "stream" == merged[-1].get("output_type")
                    and out.get("name") == merged[-1].get("name")):
                merged[-1] = {**merged[-1], "text": "".join(merged[-1]["text"]) + "".join(out["text"])}
            else:
                merged.append(out)
        for out in merged:
            if out.get("output_type") == "stream":
                out["text"] = "".join(out["text"])
        if "outputs" in cell:
            cell["outputs"] = merged
    return json.dumps(nb, sort_keys=True).encode()


def _digest(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix in (".ipynb", ".html"):
        data = _RANDOM_IDS.sub(b"altair-viz-<id>", data)
    if path.suffix == ".ipynb":
        data = _notebook_outputs(data)
    return hashlib.sha256(data).hexdigest()


def _help_commands(tree: Path) -> list[tuple[str, list[str]]]:
    """``--help`` of every command and subcommand the tree's CLI defines."""
    code = ("import argparse, json, sys\n"
            "from evalkit.cli.main import build_parser\n"
            "def walk(p, path):\n"
            "    yield path\n"
            "    for a in p._actions:\n"
            "        if isinstance(a, argparse._SubParsersAction):\n"
            "            for name, sub in a.choices.items():\n"
            "                yield from walk(sub, path + [name])\n"
            "print(json.dumps(list(walk(build_parser(), []))))\n")
    out = subprocess.run([sys.executable, "-c", code], env=_env(tree), capture_output=True, text=True,
                         check=True).stdout
    return [("help " + " ".join(path), [*path, "--help"]) for path in json.loads(out)]


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    env["COLUMNS"] = "100"
    env.pop("EVALKIT_ALLOW_OUTSIDE", None)
    return env


def run_scenario(tree: Path, into: Path) -> None:
    """Run the scenario with ``tree``'s code in :data:`WORK` and move what it wrote to ``into``."""
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    for name in ("data", "examples"):
        shutil.copytree(tree / name, WORK / name, symlinks=True,  # what git tracks, not what an install built
                        ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    transcript = []
    for name, argv in SCENARIO + _help_commands(tree):
        proc = subprocess.run([sys.executable, "-m", "evalkit.cli", *argv], cwd=WORK, env=_env(tree),
                              capture_output=True, text=True, timeout=900)
        transcript.append({"name": name, "argv": argv, "rc": proc.returncode,
                           "stdout": _normalise(proc.stdout), "stderr": _normalise(proc.stderr)})
        print(f"  {name}: rc {proc.returncode}", file=sys.stderr)
    shutil.rmtree(into, ignore_errors=True)
    shutil.move(str(WORK), into)
    (into / "transcript.json").write_text(json.dumps(transcript, indent=1) + "\n")


def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): _digest(p)
            for p in sorted(folder.rglob("*"))
            # a sandbox's git index holds file system stat data (times, inodes), not what the arm did
            if p.is_file() and not p.is_symlink() and not (p.name == "index" and p.parent.name == ".git")}


def compare(a: Path, b: Path) -> list[str]:
    """Every difference between two recorded scenario folders, one line each (empty: the same bytes)."""
    problems = []
    fa, fb = _files(a), _files(b)
    for name in sorted(set(fa) | set(fb)):
        if name == "transcript.json":
            continue
        if name not in fa or name not in fb:
            problems.append(f"{name}: only in {'the check' if name in fb else 'the base'}")
        elif fa[name] != fb[name]:
            problems.append(f"{name}: bytes differ")
    ta = {t["name"]: t for t in json.loads((a / "transcript.json").read_text())}
    tb = {t["name"]: t for t in json.loads((b / "transcript.json").read_text())}
    for name in sorted(set(ta) | set(tb)):
        if name not in ta or name not in tb:
            problems.append(f"command {name!r}: only in {'the check' if name in tb else 'the base'}")
            continue
        for key in ("rc", "stdout", "stderr"):
            if ta[name][key] != tb[name][key]:
                diff = "".join(list(difflib.unified_diff(str(ta[name][key]).splitlines(True),
                                                         str(tb[name][key]).splitlines(True), n=0))[2:8])
                problems.append(f"command {name!r}: {key} differs\n{diff}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--against", metavar="REV", help="compare this tree with commit REV")
    group.add_argument("--record", metavar="DIR", type=Path, help="record this tree's outputs in DIR")
    group.add_argument("--check", metavar="DIR", type=Path, help="compare this tree with outputs in DIR")
    args = parser.parse_args(argv)
    base_dir = Path(tempfile.gettempdir()) / "evalkit-same-outputs"
    if args.record:
        run_scenario(ROOT, args.record.resolve())
        print(f"recorded {len(_files(args.record))} files in {args.record}")
        return 0
    mine = base_dir / "this-tree"
    if args.against:
        base = base_dir / "base"
        tree = base_dir / "base-tree"
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), args.against], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            print(f"base {args.against}:", file=sys.stderr)
            run_scenario(tree, base)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
    else:
        base = args.check.resolve()
    print("this tree:", file=sys.stderr)
    run_scenario(ROOT, mine)
    problems = compare(base, mine)
    for line in problems:
        print(line)
    print(f"{len(_files(mine))} files and {len(json.loads((mine / 'transcript.json').read_text()))} commands "
          f"compared: {'the same' if not problems else f'{len(problems)} differences'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
