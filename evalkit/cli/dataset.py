"""``evalkit dataset expand|merge|derive|interview|generate|check``: grow and check a subject's suite (thin over evalkit.suite)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.cli.parsers import add_command_group


def _suite_path(subject_or_dataset: str) -> Path:
    from evalkit.suite import suite_of

    return suite_of(subject_or_dataset).path


def _cmd_expand(args: argparse.Namespace) -> int:
    from evalkit.io.canonical import canonical_line
    from evalkit.suite import expand_tuples, read_dataset, uncovered_tuples

    dataset = read_dataset(_suite_path(args.subject))
    if args.missing:
        tuples = uncovered_tuples(dataset.dimensions, [c.tuple for c in dataset.cases])
    else:
        tuples = expand_tuples(dataset.dimensions)
    for t in tuples:
        sys.stdout.write(canonical_line(t))
    what = "not yet realised by a case" if args.missing else "in all"
    print(f"{len(tuples)} tuple(s) {what} ({len(dataset.cases)} case(s) in the suite)", file=sys.stderr)
    return 0


def _print_merge(suite: Path, result) -> None:
    for dup in result.near_duplicates:
        print(f"near-duplicate dropped: {dup.case.id} repeats {dup.of} (similarity {dup.similarity:.2f})",
              file=sys.stderr)
    print(f"{suite}: {result.summary()}")


def _cmd_merge(args: argparse.Namespace) -> int:
    from evalkit.io.outputs import guard_outputs
    from evalkit.suite import merge_into, read_offered

    suite = _suite_path(args.subject)
    guard_outputs({"the suite": suite}, {"CASES_FILE": args.cases_file})
    _print_merge(suite, merge_into(suite, read_offered(args.cases_file)))
    return 0


def _cmd_derive(args: argparse.Namespace) -> int:
    from evalkit.io.outputs import guard_outputs
    from evalkit.suite import derive_into_suite

    guard_outputs({"the suite": _suite_path(args.subject)},
                  {"TRACES": args.traces, "--labels": args.labels, "--from-review": args.from_review,
                   "--from-verdicts": args.from_verdicts})
    done = derive_into_suite(args.subject, args.traces, labels=args.labels, review=args.from_review,
                             verdicts=args.from_verdicts, only=args.only)
    for why, n in done.reasons.items():
        print(f"{n} trace(s) left out: {why}", file=sys.stderr)
    same = f" ({done.repeats} repeat the prompt and outcome of an earlier trace: one case each)" if done.repeats else ""
    print(f"{len(done.derived.cases)} case(s) derived{same}", file=sys.stderr)
    _print_merge(done.suite, done.merged)
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    from evalkit.contracts.judge import JudgePin
    from evalkit.suite import generate_cases

    pin = JudgePin(provider=args.provider, model=args.model or "*", base_url=args.base_url,
                   max_tokens=args.max_tokens)
    done = generate_cases(args.subject, pin, n=args.n, missing=args.missing,
                          expected={"auto": None, "yes": True, "no": False}[args.expected], out=args.out,
                          journal=args.journal, cache=args.cache, concurrency=args.concurrency,
                          max_cost=args.max_cost, merge_into_suite=args.merge, cassette=args.cassette,
                          record=args.record, timeout=args.timeout)
    s = done.summary
    which = "missing tuple(s)" if args.missing else "tuple(s)"
    print(f"asked for {args.n} case(s) for each of {len(done.asked)} {which}: {s.calls} call(s), {s.cache_hits} "
          f"cached, {s.resumed} resumed, {s.input_tokens + s.output_tokens} tokens, cost {s.cost_text()}")
    if not done.asked:
        print("every tuple is realised by a case already: nothing was asked" if args.missing else
              "the suite has no dimensions to make tuples of: nothing was asked")
    for tuple_text, why in done.errors.items():
        print(f"no case for {tuple_text}: {why}", file=sys.stderr)
    for dup in done.merged.near_duplicates:
        print(f"near-duplicate dropped: {dup.case.id} ({dup.case.query[:60]!r}) repeats {dup.of} "
              f"(similarity {dup.similarity:.2f})", file=sys.stderr)
    m = done.merged
    print(f"written: {len(done.generated)} case(s); kept {len(m.added)}, {len(m.near_duplicates)} near-duplicate(s) "
          f"dropped, {len(m.already_present)} already in the suite")
    print(f"coverage: {done.before.describe()} -> {done.after.describe()}")
    lacking = [mode for mode in done.after.modes_total if mode not in done.after.modes]
    if lacking:
        print(f"failure modes no case probes yet: {', '.join(lacking)}")
    if done.merged_into_suite:
        print(f"merged into the suite: {m.summary()}; the cases are also in {done.out}")
    elif m.added:
        print(f"{done.out}: {len(m.added)} case(s), not in the suite yet: evalkit dataset merge {args.subject} "
              f"{done.out}")
    if done.still_missing:
        shown = "; ".join(", ".join(f"{k}={v}" for k, v in t.items()) for t in done.still_missing[:5])
        more = len(done.still_missing) - 5
        print(f"{len(done.still_missing)} tuple(s) still missing: {shown}" + (f"; and {more} more" if more > 0 else ""),
              file=sys.stderr)
        if args.provider == "replay":  # a cassette answers only the prompts it recorded, byte for byte
            print("a replay cassette holds replies to the exact prompts it was recorded with; each prompt shows the "
                  "subject's dimensions, taxonomy, seed cases and --n, so a change to any of them needs replies "
                  "recorded anew (--provider openai ... --record CASSETTE)", file=sys.stderr)
        return 3
    return 0


def _cmd_interview(args: argparse.Namespace) -> int:
    from evalkit.suite import run_interview

    ask = input if args.answers is None and sys.stdin.isatty() else None
    done = run_interview(args.subject, answers=args.answers, ask=ask, out=args.out, traces=args.traces,
                     propose=args.propose, save_answers=args.save_answers)
    for dup in done.merged.near_duplicates:
        print(f"near-duplicate dropped: {dup.case.id} repeats {dup.of} (similarity {dup.similarity:.2f})",
              file=sys.stderr)
    dims = ", ".join(f"{d.name} ({len(d.values)})" for d in done.dataset.dimensions)
    if not done.written:
        print(f"nothing written to {done.suite}")
        return 1
    print(f"{done.suite}: dimensions {dims}; {len(done.merged.added)} seed case(s) added, "
          f"{len(done.merged.near_duplicates)} near-duplicate(s) dropped; version {done.dataset.version}")
    if args.save_answers:
        print(f"answers saved to {args.save_answers} (replay them with --answers)")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from evalkit.suite import check_dataset

    suite = _suite_path(args.subject)
    result = check_dataset(suite)
    for problem in result.problems:
        print(f"error: {problem.render()}", file=sys.stderr)
    sources = ", ".join(f"{n} {s}" for s, n in result.by_source.items()) or "none"
    state = "ok" if result.ok else f"{len(result.problems)} problem(s)"
    print(f"{suite}: {result.cases} case(s) ({sources}): {state}")
    return 0 if result.ok else 1


def add_dataset_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``dataset expand|merge|derive|check`` to the ``evalkit`` command."""
    commands = add_command_group(sub, "dataset", help="grow and check the subject's suite of test cases",
                                 description="The suite is append-only: a case once written stays unchanged; "
                                             "merge adds new ids, drops near-duplicates (each one reported) and "
                                             "bumps the version. SUBJECT is a subject file naming dataset:, or "
                                             "the suite file.")

    e = commands.add_parser("expand", help="print every dimension tuple (JSONL), or those no case realises")
    e.add_argument("subject", metavar="SUBJECT")
    e.add_argument("--missing", action="store_true", help="only the tuples no case realises yet")
    e.set_defaults(func=_cmd_expand)

    m = commands.add_parser("merge", help="append new cases from a file (a suite file or case records)",
                            description="The only way cases from a file enter the suite: new ids are appended, "
                                        "near-duplicates of a suite case (or of a case kept before them) dropped "
                                        "and named, the version bumped.")
    m.add_argument("subject", metavar="SUBJECT")
    m.add_argument("cases_file", metavar="CASES_FILE")
    m.set_defaults(func=_cmd_merge)

    d = commands.add_parser(
        "derive", help="derive cases from past traces and how they came out (labels, a review, judge verdicts)",
        description="One derived case per past trace with an outcome: the trace's input prompt as the query, tuple "
                    "{outcome: pass|fail}, the origin trace id; from a review or verdicts, the failure modes (or "
                    "failed criteria) and critique as the case's expectation. Derived fail cases are the "
                    "regression set the next eval run shows on the card. Merged into the suite (near-duplicates "
                    "dropped, each named).")
    d.add_argument("subject", metavar="SUBJECT")
    d.add_argument("traces", metavar="TRACES", nargs="?", help="the past traces (default: the subject's traces)")
    source = d.add_mutually_exclusive_group(required=True)
    source.add_argument("--labels", metavar="LABELS", help="human labels (pass/fail per trace and criterion)")
    source.add_argument("--from-review", metavar="FILE",
                        help="the review page's export (its Export button), or an annotation store (JSONL)")
    source.add_argument("--from-verdicts", metavar="FILE", help="judge verdicts (criterion-verdict JSONL)")
    d.add_argument("--only", nargs="+", metavar="OUTCOME", help="keep only these outcomes, e.g. --only fail")
    d.set_defaults(func=_cmd_derive)

    i = commands.add_parser(
        "interview", help="confirm the suite's dimensions and seed tuples in a terminal (or from --answers)",
        description="Walks through the dimensions (the suite's, and trace metadata fields that look like one, with "
                    "the values seen), asks which to keep and with which values, then proposes the tuples the "
                    "traces show most, each with a real message, and which to keep as seed cases (add your own "
                    "too). The seeds are merged into the suite (append-only, near-duplicates dropped). Every "
                    "answer can come from a file: --save-answers writes one from a terminal session, --answers "
                    "replays it (CI).")
    i.add_argument("subject", metavar="SUBJECT")
    i.add_argument("--answers", metavar="FILE", help="answers (YAML/JSON: dimensions, seeds); no question is asked")
    i.add_argument("--save-answers", metavar="FILE", help="write the answers given to this file, to replay them")
    i.add_argument("--out", metavar="FILE", help="the suite to write (default: the subject's dataset)")
    i.add_argument("--traces", metavar="FILE", help="the traces to propose from (default: the subject's traces)")
    i.add_argument("--propose", type=int, default=5, metavar="N", help="seed tuples to propose (default 5)")
    i.set_defaults(func=_cmd_interview)

    g = commands.add_parser(
        "generate", help="a model writes cases for the tuples the suite does not realise (into a file)",
        description="For each tuple no case realises (--missing), a model writes --n realistic user messages (and, "
                    "where the matrix judges behaviour, each one's expected behaviour, and the taxonomy's failure "
                    "modes it probes), through the judge's providers, reply cache and journal (a rerun replays, a "
                    "killed run resumes). Near-duplicates of suite cases or of each other are dropped and named; "
                    "coverage of tuples and failure modes is printed before and after; every case records its "
                    "origin (provider, model, prompt digest, tuple). The cases go to --out; they enter the suite "
                    "only by `evalkit dataset merge` or --merge. Exit 3 when a tuple is still missing.",
        epilog="examples:\n"
               "  evalkit dataset generate subject.yaml --missing --provider openai --model gpt-4.1-mini --cache c.sqlite\n"
               "  evalkit dataset generate subject.yaml --missing --provider openai --model smollm2-135m \\\n"
               "      --base-url http://127.0.0.1:8080/v1               # any OpenAI-compatible server\n"
               "  evalkit dataset generate data/sample/subject.yaml --missing --provider replay \\\n"
               "      --cassette data/sample/writer-cassette.jsonl        # offline, recorded replies",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    g.add_argument("subject", metavar="SUBJECT")
    g.add_argument("--missing", action="store_true", help="only the tuples no case realises yet (else every tuple)")
    g.add_argument("--n", type=int, default=3, metavar="N", help="cases asked for per tuple (default 3)")
    g.add_argument("--provider", required=True,
                   help="openai (also any OpenAI-compatible server with --base-url), anthropic, replay, or a plug-in")
    g.add_argument("--model", help="the model id, as the provider names it (replay: the cassette's by default)")
    g.add_argument("--base-url", metavar="URL", help="an OpenAI- or Anthropic-compatible server")
    g.add_argument("--max-tokens", type=int, default=1024, metavar="N", help="each reply's token cap (default 1024)")
    g.add_argument("--cassette", metavar="FILE", help="with --provider replay: the recorded replies (JSONL)")
    g.add_argument("--record", metavar="FILE", help="append every live reply to this cassette, to replay later")
    g.add_argument("--cache", metavar="FILE", help="a reply cache (SQLite; the judge's format): a rerun is free")
    g.add_argument("--journal", metavar="FILE", help="the replies' journal (default OUT.journal.jsonl; resumed from)")
    g.add_argument("--out", metavar="FILE", help="the cases kept (JSONL; default SUITE.generated.jsonl beside it)")
    g.add_argument("--merge", action="store_true", help="also merge the cases kept into the suite, and say so")
    g.add_argument("--expected", choices=("auto", "yes", "no"), default="auto",
                   help="ask for each case's expected behaviour: auto (when the matrix judges behaviour), yes, no")
    g.add_argument("--concurrency", type=int, default=4, metavar="N", help="calls in flight (default 4)")
    g.add_argument("--max-cost", type=float, metavar="USD", help="a call starts only when what it may cost (its prompt "
                   "and a reply at the token cap) fits what is left of this budget")
    g.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS", help="per call (default 120)")
    g.set_defaults(func=_cmd_generate)

    c = commands.add_parser("check", help="check ids, duplicates and tuple values; exit 1 on a problem")
    c.add_argument("subject", metavar="SUBJECT_OR_DATASET")
    c.set_defaults(func=_cmd_check)
