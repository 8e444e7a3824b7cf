"""A scratch copy of the sample subject, ready for the EDD loop (``evalkit edd run``).

``python -m evalkit.sample_subject.edd_demo DEST [--from FOLDER] [--factor F]`` writes the sample subject
to ``DEST`` (generated as ``python -m evalkit.sample_subject`` writes ``data/sample``, so it works from any
folder; or copied from ``--from``: the loop amends the copy's ``agent-spec.yaml``, never the checkout's
sample) and makes it loop-ready offline:

- the eval matrix's code criteria get their checks, and the two cross-ref criteria (is a tool's result in
  the input of ``respond``?) become code checks (``ref-integrity`` on the SKU and KB article ids), so four
  of the six criteria are decided without a judge;
- the two judged criteria (HIGH ``grounded-policy``, CRIT ``escalation-correct``) get the sample's judge
  specs (``judges:``), judged offline by the sample's rules judge (:mod:`evalkit.sample_subject.rules_judge`,
  pin ``provider: sample-rules``); the escalation spec also shows ``metadata.customer_tier``, which the
  premium-complaint trigger needs. So every criterion is decided on every case and repeat, and full green
  means what it says (``--without-spec ID`` leaves a judged criterion without its spec: the loop then
  stops ``incomplete-evidence``, never green);
- the subject gets ``edd:`` naming :mod:`evalkit.sample_subject.remedy` as its remedy command
  (``--factor 0`` turns a failure mode off: the loop converges; ``--factor 1`` never helps: it stops on
  the no-improvement streak).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import yaml

from evalkit.io import atomic_write_text
from evalkit.io.documents import read_document
from evalkit.sample_subject.catalog import DEFAULT_SEED, DEFAULT_TRACE_COUNT, JUDGE_MODEL
from evalkit.sample_subject.generate import build_sample, write_files
from evalkit.sample_subject.judge_files import SPECS
from evalkit.sample_subject.rules_judge import NAME as RULES_JUDGE

CHECKS = {
    "order-id-matches": {"primitive": "string-equality", "params": {
        "actual": {"obs": "order_lookup", "path": "input.order_id"},
        "expected": {"obs": "$trace", "path": "input", "pattern": r"ORD-\d{4}-\d{6}"},
        "when": {"obs": "$trace", "path": "input", "value": "ORD-"}}},  # only when the customer named an order
    "order-result-threaded": {"primitive": "ref-integrity", "params": {
        "target": {"obs": "order_lookup", "path": "output"}, "source": {"obs": "respond", "path": "input"},
        "pattern": r"SKU-\d+"}},
    "kb-result-threaded": {"primitive": "ref-integrity", "params": {
        "target": {"obs": "kb_search", "path": "output"}, "source": {"obs": "respond", "path": "input"},
        "pattern": r"KB-\d+"}},
    "billing-handoff-complete": {"primitive": "presence", "params": {
        "obs": "dispatch_billing_agent", "path": "input.context.disputed_amount", "min": 1, "max": 1,
        "when": {"obs": "dispatch_billing_agent", "path": "name", "value": "dispatch_billing_agent"}}},
}
"""Code checks for the sample's criteria that code can decide, by criterion id."""


def _criterion_id(criterion: dict) -> str | None:
    source = str(criterion.get("evidenceSource", ""))
    return criterion.get("criterionId") or (source.split(".")[0].removeprefix("criterion ") if source else None)


JUDGE_SPECS = "judge-specs.yaml"
SHOWN_FACTS = {"escalation-correct": ["metadata.customer_tier"]}
"""Trace metadata fields a demo judge spec shows besides the sample spec's (facts a criterion needs, never
the injected failures)."""


def demo_judge_specs(without: Sequence[str] = ()) -> list[dict]:
    """The sample's judge specs as the demo uses them (see the module docstring), less those ``without``."""
    specs = []
    for spec in SPECS:
        if spec["id"] in without:
            continue
        spec = {**spec, "input": {**spec["input"]}}
        spec["input"]["trace"] = [*spec["input"]["trace"], *SHOWN_FACTS.get(spec["id"], [])]
        specs.append(spec)
    return specs


def prepare(source: str | Path, dest: str | Path, *, factor: float = 0.0, timeout_s: float = 60,
            without_spec: Sequence[str] = ()) -> Path:
    """Copy the sample to ``dest`` and make it loop-ready; returns the copy's subject file.

    Args:
        source: the sample folder.
        dest: where the copy goes.
        factor: what the scripted remedy leaves of a failure rate it is asked to fix.
        timeout_s: the remedy command's timeout.
        without_spec: judged criteria to leave without a judge spec (skipped: the loop cannot go green).
    """
    unknown = sorted(set(without_spec) - {spec["id"] for spec in SPECS})
    if unknown:
        raise ValueError(f"no judge spec to leave out for {', '.join(unknown)} (the sample judges "
                         f"{', '.join(spec['id'] for spec in SPECS)})")
    dest = Path(dest)
    shutil.copytree(source, dest, dirs_exist_ok=True)
    matrix_file = dest / "eval-matrix.yaml"
    matrix = read_document(matrix_file, kind="eval-matrix")
    for component in matrix["components"]:
        for criterion in component["criteria"]:
            check = CHECKS.get(_criterion_id(criterion) or "")
            if check is not None:
                criterion["check"] = check
                criterion["checkMethod"] = "deterministic-script"
    atomic_write_text(matrix_file, yaml.safe_dump(matrix, sort_keys=True, allow_unicode=True))
    specs = demo_judge_specs(without_spec)
    atomic_write_text(dest / JUDGE_SPECS, "".join(("---\n" if i else "") + yaml.safe_dump(
        spec, sort_keys=False, allow_unicode=True, width=100) for i, spec in enumerate(specs)))
    subject_file = dest / "subject.yaml"
    subject = read_document(subject_file, kind="subject")
    subject["judges"] = [JUDGE_SPECS] if specs else []
    subject["judge"] = {"provider": RULES_JUDGE, "model": f"{JUDGE_MODEL}-rules", "temperature": 0}
    subject["edd"] = {"remedy_command": ["{python}", "-m", "evalkit.sample_subject.remedy", "--spec", "agent-spec.yaml",
                                         "--matrix", "eval-matrix.yaml", "--request", "{request}",
                                         "--response", "{response}", "--factor", f"{factor:g}"],
                      "timeout_s": timeout_s}
    # The loop's report: notebook 05 reads the folder `evalkit edd run ... --out DEST/edd` writes.
    subject["notebooks"] = [*subject["notebooks"], "05_edd"]
    subject.setdefault("parameters", {})["05_edd"] = {"edd_run_path": "edd"}
    atomic_write_text(subject_file, yaml.safe_dump(subject, sort_keys=False, allow_unicode=True))
    return subject_file


def main(argv: Sequence[str] | None = None) -> int:
    """Prepare the copy and print the command that runs the loop on it."""
    parser = argparse.ArgumentParser(prog="python -m evalkit.sample_subject.edd_demo",
                                     description="Copy the sample subject and make it ready for evalkit edd run.")
    parser.add_argument("dest")
    parser.add_argument("--from", dest="source", metavar="FOLDER",
                        help="copy the sample from this folder (default: write the sample afresh, as "
                             "python -m evalkit.sample_subject writes data/sample)")
    parser.add_argument("--factor", type=float, default=0.0,
                        help="what the scripted remedy leaves of a failure rate (0 converges, 1 never helps)")
    parser.add_argument("--without-spec", action="append", default=[], metavar="ID",
                        help="leave this judged criterion (grounded-policy, escalation-correct) without a judge "
                             "spec: the loop then stops incomplete-evidence, never green (repeatable)")
    args = parser.parse_args(argv)
    if args.source is not None and not Path(args.source, "subject.yaml").is_file():
        parser.error(f"{args.source}: no subject.yaml (give the sample folder with --from)")
    try:
        with tempfile.TemporaryDirectory(prefix="evalkit-sample-") as fresh:
            if args.source is None:  # the sample is generated, never looked up relative to the working folder
                write_files(fresh, build_sample(DEFAULT_SEED, DEFAULT_TRACE_COUNT))
            subject = prepare(args.source or fresh, args.dest, factor=args.factor, without_spec=args.without_spec)
    except ValueError as exc:
        parser.error(str(exc))
    print(f"ready: evalkit edd run {subject} --out {Path(args.dest) / 'edd'}")
    print(f"then:  evalkit run {subject} --only 05_edd --out {Path(args.dest) / 'report'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
