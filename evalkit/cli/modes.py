"""``evalkit analysis draft-modes``: failure modes drafted from open-coding notes by an LLM, for a person to
ratify; thin over :func:`evalkit.analysis.draft_modes`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evalkit.cli.annotations import read_annotations
from evalkit.cli.words import plural
from evalkit.errors import InputError


def add_model_options(p: argparse.ArgumentParser) -> None:
    """The judge-provider flags a command that asks a model takes (as ``judge run`` names them)."""
    from evalkit.cli.judge import DEFAULT_TIMEOUT

    p.add_argument("--provider", help="openai (also any OpenAI-compatible server with --base-url), anthropic, "
                                      "replay (a cassette, offline), or a provider a plug-in registers")
    p.add_argument("--model", help="the model id, as the provider names it (replay: the cassette's one model)")
    p.add_argument("--base-url", metavar="URL", help="an OpenAI- or Anthropic-compatible server, e.g. "
                                                     "http://127.0.0.1:8080/v1 for llama.cpp, vLLM or Ollama")
    p.add_argument("--cassette", metavar="FILE", help="with --provider replay: the recorded replies (JSONL)")
    p.add_argument("--record", metavar="FILE", help="append every live reply to this cassette, to replay later")
    p.add_argument("--cache", metavar="FILE", help="the judge's SQLite reply cache: an unchanged prompt is not asked again")
    p.add_argument("--max-tokens", type=int, metavar="N", help="the reply's token cap (default 1024)")
    p.add_argument("--transport", choices=("sdk", "http"), help="openai only: sdk (the default) or http (evalkit's "
                                                                "lean HTTP/1.1 pool, for local servers)")
    p.add_argument("--context-window", type=int, metavar="TOKENS",
                   help="the model's context window: a prompt that cannot fit with the reply's cap is refused "
                        "before any call (default: the price table's for the model, else unknown)")
    p.add_argument("--strict-model", action="store_true",
                   help="a model the server does not list at /v1/models is an error (default: a warning, and its "
                        "replies are not priced)")
    p.add_argument("--prices", metavar="FILE", help="price table to add to the built-in one (as judge run's)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"per call (default {DEFAULT_TIMEOUT:g}: a small local model is slow on a long prompt)")


def model_provider(args: argparse.Namespace) -> Any:
    """The provider the flags name (:func:`evalkit.judge.choose_pin`'s rules), its credential checked
    (temperature is always 0)."""
    from evalkit.judge import choose_pin, make_provider

    if not args.provider:  # before choose_pin, whose message speaks of a spec's pin: these commands have none
        raise InputError("no model named: pass --provider (openai, anthropic or replay) and --model",
                         path="--provider")
    pin = choose_pin([], provider=args.provider, model=args.model, base_url=args.base_url,
                     max_tokens=args.max_tokens, transport=args.transport)
    return make_provider(pin, base_url=args.base_url, cassette=args.cassette, timeout=args.timeout,
                         record=args.record)


def judging_options(args: argparse.Namespace) -> dict[str, Any]:
    """What the model is measured against before any call (:func:`evalkit.judge.judge_setup`'s options)."""
    from evalkit.judge import PriceTable

    return {"prices": PriceTable.load(args.prices), "context_window": args.context_window,
            "strict_model": args.strict_model, "warn": lambda line: print(line, file=sys.stderr)}


def _traces_by_id(path: str | None) -> dict[str, Any]:
    if not path:
        return {}
    from evalkit.traces import load

    return {t.id: t for t in load(path)}


def _cmd_draft_modes(args: argparse.Namespace) -> int:
    from evalkit.analysis import draft_modes, draft_prompt, draft_yaml, open_notes
    from evalkit.io.atomic import atomic_write_text
    from evalkit.io.outputs import guard_outputs
    from evalkit.judge import JudgeCache, prompt_digest

    journal = args.journal or (f"{args.out}.journal.jsonl" if args.out else None)
    guard_outputs({"--out": args.out, "--journal": journal},  # before any work: nothing read, nothing replaced
                  {"ANNOTATIONS": args.annotations, "--traces": args.traces, "--cassette": args.cassette})
    annotations = read_annotations(args.annotations).annotations
    traces = _traces_by_id(args.traces)
    if args.show_prompt:
        from evalkit.analysis import DRAFT_SCHEMA

        notes = open_notes(annotations, traces, include_pass=args.include_pass)
        size = args.notes_per_call or max(1, len(notes))
        for start in range(0, max(1, len(notes)), size):
            messages = draft_prompt(notes[start:start + size])
            print(f"=== draft-modes  {prompt_digest(messages, DRAFT_SCHEMA)}")
            for m in messages:
                print(f"--- {m['role']}")
                print(m["content"])
        return 0
    if not args.out:
        raise InputError("--out is needed to write the draft (or --show-prompt to see the prompt)", path="--out")
    provider = model_provider(args)
    cache = JudgeCache(args.cache) if args.cache else None
    try:
        draft = draft_modes(annotations, provider, subject=args.subject or Path(args.annotations).resolve().parent.name,
                            traces_by_id=traces, include_pass=args.include_pass, cache=cache, journal=journal,
                            notes_per_call=args.notes_per_call, **judging_options(args))
    finally:
        if cache is not None:
            cache.close()
    atomic_write_text(args.out, draft_yaml(draft))
    by = draft.drafted_by
    print(f"{plural(len(draft.modes), 'drafted mode')} from {plural(by.notes, 'note')} via {by.provider} {by.model} "
          f"({plural(len(draft.unplaced), 'note')} unplaced): {args.out}")
    for mode in draft.modes:
        print(f"  {mode.id}: {mode.name} ({plural(len(mode.examples), 'trace')})")
    for note in draft.unplaced:
        print(f"  unplaced: {note.trace_id} ({note.annotator}): {note.note[:80]} [{note.reason}]")
    print("a draft is not a taxonomy: ratify it with `evalkit review build TRACES --draft DRAFT`")
    return 0


def add_draft_modes_parser(asub: argparse._SubParsersAction) -> None:
    """Add ``analysis draft-modes``."""
    p = asub.add_parser("draft-modes", help="an LLM drafts failure modes from open-coding notes, for you to ratify",
                        description="Send every note (the latest per trace and reviewer, fails and defers; with "
                                    "--traces, an excerpt of the trace where the failure was seen) to a model at "
                                    "temperature 0 and write its draft: modes with a name, a definition, include "
                                    "and exclude rules and the traces whose notes they group; notes it could not "
                                    "place are listed, not forced. The draft records the model and the prompt's "
                                    "digest. A rerun takes the reply from OUT.journal.jsonl (or --cache). Nothing "
                                    "drafted is a failure mode until a person ratifies it in the review page.")
    p.add_argument("annotations", metavar="ANNOTATIONS", help="annotation store (JSONL) with notes")
    p.add_argument("--traces", metavar="FILE", help="the traces the notes are about (for excerpts)")
    p.add_argument("--out", metavar="FILE", help="the draft to write (YAML)")
    p.add_argument("--subject", help="the subject's name (default: the folder of ANNOTATIONS)")
    p.add_argument("--include-pass", action="store_true", help="also send notes written on passing traces")
    p.add_argument("--notes-per-call", type=int, metavar="N",
                   help="send the notes in batches of N, one call each (for a small model); same-named modes "
                        "become one, the reviewer merges the rest; a batch without a valid reply leaves its notes "
                        "unplaced (default: every note in one call)")
    p.add_argument("--journal", metavar="FILE", help="the journal a rerun resumes from (default OUT.journal.jsonl)")
    p.add_argument("--show-prompt", action="store_true", help="print the prompt and its digest; ask nothing")
    add_model_options(p)
    p.set_defaults(func=_cmd_draft_modes)


def _cmd_ratify(args: argparse.Namespace) -> int:
    from evalkit.analysis import append_annotations, ratify, read_draft, read_ratification, taxonomy_yaml
    from evalkit.io.atomic import atomic_write_text
    from evalkit.io.outputs import guard_outputs

    guard_outputs({"--out": args.out}, {"DRAFT": args.draft, "EXPORT": args.export})
    record = read_ratification(args.export)
    taxonomy = ratify(read_draft(args.draft), record)
    atomic_write_text(args.out, taxonomy_yaml(taxonomy))
    actions = [d.action for d in record.decisions]
    print(f"{plural(len(taxonomy.modes), 'failure mode')} ratified by {record.reviewer} from "
          f"{plural(len(record.decisions), 'drafted mode')} ("
          + ", ".join(f"{actions.count(a)} {a}" for a in ("accept", "rename", "merge", "split", "reject")
                      if a in actions) + f"): {args.out}")
    if args.into:
        added = append_annotations(args.into, record.annotations)
        print(f"appended {plural(added, 'annotation')} by {record.reviewer} (traces coded with the ratified "
              f"modes) to {args.into}")
    return 0


def _cmd_code_modes(args: argparse.Namespace) -> int:
    from evalkit.analysis import code_with_llm, read_taxonomy
    from evalkit.io.outputs import guard_outputs
    from evalkit.judge import JudgeCache
    from evalkit.traces import load

    guard_outputs({"--out": args.out}, {"--taxonomy": args.taxonomy, "--annotations": args.annotations,
                                        "--traces": args.traces, "--cassette": getattr(args, "cassette", None)},
                  folders=["--out"])
    taxonomy = read_taxonomy(args.taxonomy)
    annotations = read_annotations(args.annotations).annotations
    provider = model_provider(args)
    cache = JudgeCache(args.cache) if args.cache else None
    try:
        done = code_with_llm(taxonomy, load(args.traces), annotations, provider, args.out,
                             annotator=args.annotator, coded_by=args.coded_by,
                             code_unreviewed=args.code_unreviewed, cache=cache, **judging_options(args))
    finally:
        if cache is not None:
            cache.close()
    a = done.agreement
    print(f"LLM ({provider.name} {provider.model}) vs {a.annotator} on {plural(a.reviewed, 'reviewed trace')}:")
    print(f"  {'mode':<32} {'kappa':>6}  {'interval':<15} both human llm neither uncertain  offered")
    for m in a.modes:
        k = "n/a" if m.kappa.kappa is None else f"{m.kappa.kappa:.2f}"
        ci = "" if m.kappa.ci is None else f"[{m.kappa.ci.lo:.2f}, {m.kappa.ci.hi:.2f}]"
        print(f"  {m.mode:<32} {k:>6}  {ci:<15} {m.both:>4} {m.human_only:>5} {m.llm_only:>3} {m.neither:>7} "
              f"{m.uncertain:>9}  {'yes' if m.offered else 'no'}: {m.why}")
    if done.rates is not None:
        if done.not_offered:
            print(f"not coded on unreviewed traces (agreement below the bar): {', '.join(done.not_offered)}")
        for r in done.rates:
            rate = "n/a" if r.rate is None else f"{r.rate:.1%}"
            ci = "" if r.ci is None else f" [{r.ci.lo:.1%}, {r.ci.hi:.1%}]"
            print(f"  LLM-coded rate of {r.mode}: {r.count}/{r.coded} unreviewed traces, {rate}{ci}"
                  + (f", {r.uncertain} uncertain" if r.uncertain else ""))
    print(f"verdicts: {done.reviewed_verdicts}" + (f", {done.unreviewed_verdicts}" if done.unreviewed_verdicts else ""))
    errors = sum(s.errors + s.not_run for s in done.summaries or [])
    return 1 if errors else 0


def add_modes_parsers(asub: argparse._SubParsersAction) -> None:
    """Add ``analysis draft-modes | ratify | code-modes``."""
    add_draft_modes_parser(asub)
    p = asub.add_parser("ratify", help="the taxonomy a reviewer's decisions make of a draft",
                        description="Check a review page's ratification export against the draft it names (every "
                                    "drafted mode decided once) and write the taxonomy the decisions make; with "
                                    "--into, append the reviewer's coding of the noted traces to the store.")
    p.add_argument("draft", metavar="DRAFT", help="the draft (from draft-modes)")
    p.add_argument("export", metavar="EXPORT", help="the ratification the review page downloaded")
    p.add_argument("--out", required=True, metavar="FILE", help="the taxonomy to write (YAML)")
    p.add_argument("--into", metavar="STORE", help="annotation store to append the reviewer's coded labels to")
    p.set_defaults(func=_cmd_ratify)

    p = asub.add_parser("code-modes", help="the LLM as a second coder: agreement per mode with the person",
                        description="Code the reviewed traces with every ratified mode (one binary judge per mode "
                                    "through the judge runner: fail = the trace shows it), then report Cohen's kappa "
                                    "with its interval and the confusion per mode against the person's labels. With "
                                    "--code-unreviewed, the traces nobody reviewed are coded with the modes whose "
                                    "agreement clears the bar only, and their rates are labelled LLM-coded "
                                    "(docs/analysis.md says why the bar is where it is).")
    p.add_argument("--taxonomy", required=True, metavar="FILE", help="the ratified taxonomy")
    p.add_argument("--traces", required=True, metavar="FILE", help="the traces (reviewed and not)")
    p.add_argument("--annotations", required=True, metavar="STORE", help="the person's labels with modes")
    p.add_argument("--annotator", help="whose labels say which traces were reviewed (default: the annotator with "
                                       "the most labels)")
    p.add_argument("--coded-by", metavar="NAME", help="whose modes are the person's coding, when the reviewer who "
                                                      "ratified the draft coded the noted traces (default: the "
                                                      "annotator's own modes)")
    p.add_argument("--out", required=True, metavar="FOLDER", help="where reviewed.jsonl (and unreviewed.jsonl) go")
    p.add_argument("--code-unreviewed", action="store_true",
                   help="also code the unreviewed traces, with the modes whose agreement clears the bar")
    add_model_options(p)
    p.set_defaults(func=_cmd_code_modes)
    add_reviewers_parsers(asub)


def _reviewer_files(args: argparse.Namespace) -> list[Any]:
    from evalkit.analysis import read_reviewer_file, read_taxonomy

    modes = read_taxonomy(args.taxonomy).mode_ids() if args.taxonomy else None
    return [read_reviewer_file(path, modes) for path in args.files]


def _cmd_reviewers(args: argparse.Namespace) -> int:
    from evalkit.analysis import compare_reviewers
    from evalkit.io import canonical_dumps

    report = compare_reviewers(_reviewer_files(args))
    if args.json:
        sys.stdout.write(canonical_dumps(report.to_json_obj()))
        return 0
    print(f"reviewers: {', '.join(report.reviewers)}")
    for a in report.agreement:
        value = "undefined" if a.value is None else f"{a.value:.3f}"
        ci = "" if a.ci is None else f" [{a.ci.lo:.2f}, {a.ci.hi:.2f}]"
        print(f"  {a.kind} {a.about}: {a.statistic} {value}{ci} on {plural(a.items, 'shared item')}"
              + (f" ({a.reason})" if a.reason else ""))
    print(f"disagreement queue: {plural(len(report.disagreements), 'item')}")
    for d in report.disagreements:
        print(f"  {d.trace_id}  {d.kind} {d.about}: " + ", ".join(f"{n} {v}" for n, v in sorted(d.labels.items())))
    return 0


def _cmd_adjudicate(args: argparse.Namespace) -> int:
    from evalkit.analysis import adjudicate, latest
    from evalkit.calibration import read_labels
    from evalkit.io.atomic import atomic_write_text
    from evalkit.io.canonical import canonical_line
    from evalkit.io.documents import read_records
    from evalkit.io.outputs import guard_outputs

    guard_outputs({"--out": args.out}, {"FILES": list(args.files), "--decisions": args.decisions})
    decisions: list[Any] = []
    if args.decisions:
        first = next(iter(read_records(args.decisions, "jsonl")), None)
        is_store = first is not None and "at" in first.value and "annotator" in first.value
        decisions = latest(read_annotations(args.decisions).annotations) if is_store else read_labels(args.decisions)
    gold = adjudicate(_reviewer_files(args), decisions, at=args.at)
    atomic_write_text(args.out, "".join(canonical_line(g.to_json_obj()) for g in gold.labels))
    print(f"{plural(len(gold.labels), 'gold label')} ({gold.agreed} agreed, {gold.adjudicated} adjudicated): {args.out}")
    if gold.unresolved:
        print(f"left out: {plural(len(gold.unresolved), 'disagreement')} nobody adjudicated "
              f"(first: {gold.unresolved[0].trace_id} {gold.unresolved[0].about})", file=sys.stderr)
    return 0


def add_reviewers_parsers(asub: argparse._SubParsersAction) -> None:
    """Add ``analysis reviewers | adjudicate``."""
    p = asub.add_parser("reviewers", help="several reviewers' files: agreement per mode and criterion, disagreements",
                        description="Each FILE is one reviewer's labels (an annotation store, or human labels for "
                                    "criteria), every record naming the reviewer. Prints Cohen's kappa with its "
                                    "interval (two reviewers) or Krippendorff's alpha (more) per failure mode and "
                                    "per criterion, and the queue of items the reviewers labelled differently.")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--taxonomy", metavar="FILE", help="compare on these modes (default: every mode a file names)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_cmd_reviewers)

    p = asub.add_parser("adjudicate", help="gold labels from several reviewers and an adjudicator's decisions",
                        description="Write gold labels (human-label JSONL, what `evalkit calibrate --labels` reads): "
                                    "an item every reviewer labelled alike is gold as agreed; a disagreement is gold "
                                    "when --decisions (the adjudicator's human labels, e.g. the review page's "
                                    "disagreement queue export) decides it. Each gold label names who resolved "
                                    "which labels, and when. Undecided disagreements are left out and counted.")
    p.add_argument("files", nargs="+", metavar="FILE", help="each reviewer's labels")
    p.add_argument("--decisions", metavar="FILE", help="the adjudicator's labels on disputed items")
    p.add_argument("--taxonomy", metavar="FILE", help="gold per mode of this taxonomy")
    p.add_argument("--at", required=True, metavar="TIME", help="when the agreed labels became gold (ISO 8601)")
    p.add_argument("--out", required=True, metavar="FILE", help="the gold labels to write")
    p.set_defaults(func=_cmd_adjudicate)
