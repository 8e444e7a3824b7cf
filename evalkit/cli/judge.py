"""``evalkit judge run | lint | prompt``: LLM judges run over traces, their verdicts checked, their prompts shown.

Thin over :mod:`evalkit.judge`: the specs say what to judge, the flags (or the specs' pins) say which model
judges it; the runner writes ``OUT`` (``criterion-verdict`` JSONL, what ``evalkit calibrate`` and a subject's
``verdicts`` read unchanged) and ``OUT.runs.jsonl`` (one ``judge-run-record`` per call: tokens, cost, errors).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evalkit.cli.cluster import add_cluster_arguments, on_cluster
from evalkit.cli.judge_audit import add_audit_parser
from evalkit.errors import InputError

INVALID_REPLY = "invalid reply after the correction"
"""The error cause (:data:`evalkit.judge.run_control.CAUSES`) that --allow-invalid-replies lets pass."""

DEFAULT_TIMEOUT = 300.0
"""Seconds per judge call: a call to a 135M local model on a leasing trace took 96 s here."""


def _read_specs(paths: list[str]) -> list[Any]:
    from evalkit.judge import read_judge_spec_files

    return read_judge_spec_files(paths)


def _pin(args: argparse.Namespace, specs: list[Any]) -> Any:
    """The judge to run: the flags, else the specs' one pin (:func:`evalkit.judge.choose_pin`)."""
    from evalkit.judge import choose_pin

    return choose_pin(specs, provider=args.provider, model=args.model, base_url=args.base_url,
                      max_tokens=args.max_tokens, transport=args.transport)


def _provider(args: argparse.Namespace, pin: Any) -> Any:
    from evalkit.judge import make_provider

    return make_provider(pin, base_url=args.base_url, cassette=args.cassette, timeout=args.timeout,
                         record=args.record)


def _traces(path: str, limit: int | None = None) -> list[Any]:
    from itertools import islice

    from evalkit.traces import iter_traces

    traces = list(islice(iter_traces(path), limit))
    if not traces:
        raise InputError("no traces to judge", file=path)
    return traces


def _labels(path: str | None) -> list[Any] | None:
    if not path:
        return None
    from evalkit.calibration import read_labels

    return list(read_labels(path))


def _criterion_lines(runs_path: Path) -> list[str]:
    from evalkit.judge import judge_run_table

    lines = []
    for row in judge_run_table(runs_path):
        cost = "unknown" if row["costUsd"] is None else f"${row['costUsd']:.4f}"
        uncertain = "n/a" if row["uncertainRate"] is None else f"{row['uncertainRate']:.1%}"
        # No call count here: the runs file holds the calls of earlier runs too (resumed items); the line
        # above counts this run's calls, and one summary gives one call count.
        lines.append(f"  {row['criterionId']}: {row['items']} items, {row['cached']} cached, "
                     f"{row['errors']} errors, {uncertain} uncertain, tokens {row['inputTokens']} in / "
                     f"{row['outputTokens']} out, cost {cost}")
    return lines


def _warn_examples(specs: list[Any]) -> None:
    from evalkit.judge import example_warning

    for spec in specs:
        warning = example_warning(spec)
        if warning:
            print(f"warning: {warning}", file=sys.stderr)


LIVE_PROVIDERS = ("openai", "anthropic")
"""Providers whose verdicts get the LLM verifier by default (a replayed or scripted judge gets refs)."""


def _verify_mode(args: argparse.Namespace, provider: Any) -> str:
    """``--verify``, or its default: llm with a live provider (or a --verifier-model) in one process, else refs."""
    if args.verify is not None:
        if args.verify != "llm" and args.verifier_model:
            raise InputError(f"--verifier-model asks for the LLM verifier, but --verify is {args.verify}",
                             path="--verifier-model")
        return args.verify
    if on_cluster(args):  # the verifier runs in one process: a cluster run is checked by its refs by default
        return "refs"
    return "llm" if args.verifier_model or provider.name in LIVE_PROVIDERS else "refs"


def _warn(line: str) -> None:
    print(line, file=sys.stderr)


def _confirm(estimate: Any) -> bool:
    """Show the estimate and ask at a terminal; without one (a script, CI) the answer is no."""
    print("the run's estimate is over --confirm-over:", file=sys.stderr)
    print("\n".join(estimate.lines()), file=sys.stderr)
    if not sys.stdin.isatty():
        return False
    print("go on? [y/N] ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _closing(summary: Any, head: str, checked: Any = None, mode: str = "refs",
             allow_invalid: bool = False) -> int:
    print(f"{head}: {summary.describe()}")
    print("\n".join(_criterion_lines(summary.runs_path)))
    if mode != "none":
        from evalkit.judge import refs_downgrades

        downgraded, decided = refs_downgrades(summary.verdicts_path)
        print(f"refs check: {downgraded} of {decided} pass/fail verdict(s) downgraded to uncertain (a ref that "
              "does not resolve in its trace)")
    if checked is not None:
        print(checked.describe())
        print(f"judge and verifier together: ${summary.cost_usd + checked.cost_usd:.4f}"
              + (" + unknown" if summary.unknown_cost_calls or checked.unknown_cost_calls else ""))
    else:
        print(f"verifier: {mode} ({'every ref re-resolved against its trace' if mode == 'refs' else 'nothing'})")
    print(f"verdicts: {summary.verdicts_path}  runs: {summary.runs_path}"
          + (f"  verifications: {checked.records_path}" if checked is not None else ""))
    if summary.tally.counts:
        print(f"errors by cause ({summary.errors}):", file=sys.stderr)
        print("\n".join(summary.tally.lines()), file=sys.stderr)
    if summary.stopped:
        print(f"stopped early: {summary.stopped}; rerun the same command to finish", file=sys.stderr)
    errors = summary.errors
    if allow_invalid:  # a small model's invalid replies are its verdict on itself, not the run's failure
        errors -= summary.tally.counts.get(INVALID_REPLY, 0)
    return 1 if errors or summary.not_run else 0


def _cmd_run(args: argparse.Namespace) -> int:
    from evalkit.distributed import refuse_cluster_journals, refuse_on_cluster
    from evalkit.io.outputs import guard_outputs
    from evalkit.judge import (
        JudgeCache,
        PriceTable,
        estimate_traces,
        judge_traces,
        refuse_session_scope,
        run_files,
        session_traces_by_id,
        verify_run,
    )

    guard_outputs(run_files(args.out, journal=args.journal, record=args.record, cache=args.cache),
                  {"--spec": args.spec, "--traces": args.traces, "--labels": args.labels,
                   "--cassette": args.cassette, "--prices": args.prices})
    specs = _read_specs(args.spec)
    if args.criterion:
        specs = [s for s in specs if s.id in set(args.criterion)]
        missing = sorted(set(args.criterion) - {s.id for s in specs})
        if missing:
            raise InputError(f"no spec for criterion {', '.join(map(repr, missing))}", path="--criterion")
    prices = PriceTable.load(args.prices)
    if on_cluster(args):
        refuse_on_cluster(partition_size=args.partition_size, repeats=args.repeats, concurrency=args.concurrency,
                          journal=args.journal, max_cost=args.max_cost, record=args.record,
                          estimate=args.estimate or None, confirm_over=args.confirm_over,
                          labelled_only=args.labelled_only or None)
    pin = _pin(args, specs)
    provider = _provider(args, pin)  # credentials are checked here, before any work (and any cluster)
    _warn_examples(specs)
    mode = _verify_mode(args, provider)
    if on_cluster(args):
        refuse_session_scope(specs, "a cluster's partitions of traces")
        if mode == "llm":
            raise InputError("the LLM verifier runs in one process: give --verify refs with --workers or "
                             "--scheduler", path="--verify")
        return _run_on_cluster(args, specs, prices, pin, provider)
    refuse_cluster_journals(Path(args.out))
    labels = _labels(args.labels)
    traces = _judged_traces(args, labels)
    by_id = {t.id: t for t in traces}
    if args.labels or any(s.examples for s in specs):
        by_id = {t.id: t for t in _traces(args.traces)}  # few-shot example traces may lie past --limit
    work = [(spec, traces) for spec in specs]
    common = {"labels": labels, "traces_by_id": by_id, "cache": args.cache, "repeats": args.repeats,
              "journal": args.journal, "prices": prices, "context_window": args.context_window,
              "strict_model": args.strict_model, "retry_errors": args.retry_errors, "warn": _warn}
    if args.estimate:
        estimate = estimate_traces(work, provider, Path(args.out), **common)
        print(f"{len(specs)} criteria x {len(traces)} traces via {provider.name} {provider.model}, estimated "
              "(no call made):")
        print("\n".join(estimate.lines()))
        return 0
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    summary = judge_traces(work, provider, Path(args.out), concurrency=args.concurrency, max_cost=args.max_cost,
                           progress=progress, confirm_over=args.confirm_over, confirm=_confirm,
                           verify=mode != "none", **common)
    checked = None
    if mode == "llm" and summary.verdicts:
        verifier_pin = pin.model_copy(update={"model": args.verifier_model}) if args.verifier_model else pin
        budget = None if args.max_cost is None else max(0.0, args.max_cost - summary.cost_usd)
        cache = JudgeCache(args.cache) if args.cache else None
        by_id = {**by_id, **session_traces_by_id(specs, traces)}  # a session judge's refs: against its session
        try:
            checked = verify_run(Path(args.out), by_id, {s.id: s for s in specs}, _provider(args, verifier_pin),
                                 cache=cache, concurrency=args.concurrency, prices=prices,
                                 budget=budget)
        finally:
            if cache is not None:
                cache.close()
    return _closing(summary, f"{len(specs)} criteria x {len(traces)} traces via {provider.name} {provider.model}",
                    checked, mode, args.allow_invalid_replies)


def _judged_traces(args: argparse.Namespace, labels: list[Any] | None) -> list[Any]:
    """The traces to judge: the file's first ``--limit``, or with ``--labelled-only`` its first labelled ones."""
    if not args.labelled_only:
        return _traces(args.traces, args.limit)
    if labels is None:
        raise InputError("--labelled-only judges the traces that have a human label: pass --labels",
                         path="--labelled-only")
    labelled = {label.trace_id for label in labels}
    traces = [t for t in _traces(args.traces) if t.id in labelled][:args.limit]
    if not traces:
        raise InputError("no trace of the file has a label in --labels", file=args.traces, path="--labelled-only")
    return traces


def _run_on_cluster(args: argparse.Namespace, specs: list[Any], prices: Any, pin: Any, provider: Any) -> int:
    """``judge run --workers N | --scheduler ADDRESS``: partitions of traces judged on Dask, merged into the
    files a one-process run writes (see :mod:`evalkit.distributed.judge_run`)."""
    from evalkit.cli.cluster import announce
    from evalkit.distributed import judge_file_on_cluster

    name, model = provider.name, provider.model
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    summary, traces = judge_file_on_cluster(
        specs, pin, provider, args.traces, Path(args.out), workers=args.workers, scheduler=args.scheduler,
        partition_size=args.partition_size, labels=_labels(args.labels), limit=args.limit, base_url=args.base_url,
        cassette=args.cassette, timeout=args.timeout, cache=args.cache, prices=prices, repeats=args.repeats,
        concurrency=args.concurrency, progress=progress, announce=announce, context_window=args.context_window,
        strict_model=args.strict_model, retry_errors=args.retry_errors, warn=_warn)
    return _closing(summary, f"{len(specs)} criteria x {traces} traces via {name} {model} on Dask",
                    allow_invalid=args.allow_invalid_replies)


def _cmd_lint(args: argparse.Namespace) -> int:
    from evalkit.judge import lint_verdict_file

    by_id = {t.id: t for t in _traces(args.traces)}
    lint = lint_verdict_file(args.verdicts, by_id)
    for line, p in lint.problems:
        print(f"{args.verdicts}:{line}: {p.criterion_id} on {p.trace_id}: {p.field}: {p.message}")
    problems = [p for _, p in lint.problems]
    print(f"{lint.records} verdicts, {len(problems)} grounding problems"
          + (f" in {len({p.index for p in problems})} verdicts" if problems else ""),
          file=sys.stderr if problems else sys.stdout)
    return 1 if problems else 0


def _cmd_prompt(args: argparse.Namespace) -> int:
    from evalkit.io import canonical_dumps
    from evalkit.judge import judge_prompts, prompt_sizes, session_traces_by_id

    specs = _read_specs(args.spec)
    if args.criterion:
        specs = [s for s in specs if s.id == args.criterion]
        if not specs:
            raise InputError(f"no spec for criterion {args.criterion!r}", path="--criterion")
    by_id = {t.id: t for t in _traces(args.traces)}
    by_id.update(session_traces_by_id(specs, list(by_id.values())))  # a session judge's --trace is a session id
    if args.trace not in by_id:
        raise InputError(f"trace {args.trace!r} is not in the traces (nor a session of them)", file=args.traces,
                         path="--trace")
    prompts = judge_prompts([(spec, [by_id[args.trace]]) for spec in specs], labels=_labels(args.labels),
                            traces_by_id=by_id)
    _warn_examples(specs)
    pin = _pin(args, specs) if args.provider or args.model or any(s.judge for s in specs) else None
    sizes = prompt_sizes(prompts, pin, base_url=args.base_url, context_window=args.context_window)
    for p, size in zip(prompts, sizes, strict=True):
        if size.refused is not None and p.pre_verdict is None:
            print(f"warning: the {p.criterion_id} prompt for trace {p.trace_id} is about {size.count.tokens} "
                  f"tokens ({size.count.method}): with the reply's cap of {size.cap} it does not fit the context "
                  f"window of {size.context}, and judge run refuses it before calling", file=sys.stderr)
    if args.json:
        sys.stdout.write(canonical_dumps([{"criterionId": p.criterion_id, "traceId": p.trace_id,
                                           "digest": p.digest, "messages": list(p.messages), "schema": p.schema,
                                           "preVerdict": p.pre_verdict.to_json_obj() if p.pre_verdict else None,
                                           "inputTokens": size.count.tokens, "tokenizer": size.count.method,
                                           "fits": size.refused is None}
                                          for p, size in zip(prompts, sizes, strict=True)]))
        return 0
    for p, size in zip(prompts, sizes, strict=True):
        print(f"=== {p.criterion_id} on {p.trace_id}  {p.digest}")
        if p.pre_verdict is not None:
            print("no call: a term is unbound, so this verdict is stored without asking the judge:")
            print(canonical_dumps(p.pre_verdict.to_json_obj()), end="")
            continue
        print(f"tokens: {size.describe()}")
        for m in p.messages:
            print(f"--- {m['role']}")
            print(m["content"])
    return 0


def _catching_provider_errors(func: Any) -> Any:
    """A missing key or a refusing provider: one line naming what to fix, exit 2 (nothing ran) or 1."""
    def run(args: argparse.Namespace) -> int:
        from evalkit.judge import MissingCredential, ProviderError

        try:
            return func(args)
        except MissingCredential as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except ProviderError as exc:
            print(f"error: the judge refused the run: {exc}", file=sys.stderr)
            return 1
    return run


_RUN_EPILOG = """\
examples:
  evalkit judge run --spec judges.yaml --traces traces.jsonl --out verdicts.jsonl \\
      --provider openai --model gpt-4.1-mini --cache judge-cache.sqlite --max-cost 2
  evalkit judge run --spec judges.yaml --traces traces.jsonl --out verdicts.jsonl \\
      --provider openai --model smollm2 --base-url http://127.0.0.1:8080/v1   # any OpenAI-compatible server
  evalkit judge run --spec judges.yaml --traces traces.jsonl --out verdicts.jsonl \\
      --provider replay --cassette judge-cassette.jsonl                      # offline, recorded replies
  evalkit calibrate --labels human-labels.jsonl --verdicts verdicts.jsonl

Keys come from OPENAI_API_KEY or ANTHROPIC_API_KEY (a local server accepts any value). A rerun resumes
from OUT.journal.jsonl; with --cache, replies already paid for are never asked again. Exit code 1 when
an item ended in an error or was not run (budget), 2 when nothing ran.

On a cluster (--workers N or --scheduler ADDRESS): partitions of --partition-size consecutive traces
are judged by the workers, --concurrency calls in flight in each (N x that in all), and merged into the
same OUT, OUT.runs.jsonl and OUT.repeats.jsonl bytes as one process (sorted by criterion, then trace).
Credentials are checked here, before the cluster starts; remote workers need the key in their own
environment. --cache may be shared by the workers of one machine (a path they all see). On a local
cluster each partition keeps a journal in .OUT.judge/: a partition rerun after its worker died, or a
rerun of the killed command (same --partition-size), resumes from it, and the folder goes when the run
completes (a one-process run refuses to start while it holds journals); on a
remote scheduler a rerun saves paid calls through --cache only. --journal,
--max-cost and --record are one-process features and are refused with --workers/--scheduler.
"""


def add_judge_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``judge run``, ``judge lint`` and ``judge prompt`` to the ``evalkit`` command."""
    judge = sub.add_parser("judge", help="run LLM judges over traces; lint verdicts; show a judge prompt",
                           description="LLM judges from judge specs (YAML, one per criterion; see docs/judge.md).")
    jsub = judge.add_subparsers(dest="judge_command", metavar="SUBCOMMAND", required=True)
    formatter = argparse.RawDescriptionHelpFormatter

    p = jsub.add_parser("run", help="judge every trace on every spec's criterion; write verdicts and run records",
                        formatter_class=formatter, epilog=_RUN_EPILOG,
                        description="Judge each trace on each spec's criterion and write OUT (criterion-verdict "
                                    "JSONL, sorted, ready for `evalkit calibrate` and a subject's `verdicts`), "
                                    "OUT.runs.jsonl (tokens, cost, attempts, errors per item) and the journal "
                                    "OUT.journal.jsonl that a rerun resumes from. Each verdict's refs are "
                                    "re-resolved against its trace; a pass or fail they do not support becomes "
                                    "uncertain. Temperature is pinned to 0.")
    p.add_argument("--spec", action="append", required=True, metavar="FILE",
                   help="judge spec file (YAML); repeat for several files")
    p.add_argument("--traces", required=True, metavar="FILE", help="the traces to judge (any format evalkit reads)")
    p.add_argument("--out", required=True, metavar="FILE", help="the verdicts file to write (JSONL)")
    p.add_argument("--labels", metavar="FILE",
                   help="human labels with splits: needed when a spec has few-shot examples (checked to be "
                        "from the train split only); with them, a metadata field whose value gives the labels "
                        "is refused (docs/judge.md, leakage guards)")
    p.add_argument("--criterion", action="append", metavar="ID", help="judge only this criterion (repeatable)")
    p.add_argument("--limit", type=int, metavar="N", help="judge only the first N traces of the file")
    p.add_argument("--labelled-only", action="store_true",
                   help="judge only the traces that have a human label in --labels (what calibrate pairs); "
                        "--limit then takes the first N of those")
    p.add_argument("--provider", choices=("openai", "anthropic", "replay"),
                   help="overrides the specs' pin: openai (also any OpenAI-compatible server with --base-url), "
                        "anthropic, or replay (a cassette, offline)")
    p.add_argument("--model", help="the model id, as the provider names it (overrides the specs' pin)")
    p.add_argument("--base-url", metavar="URL", help="an OpenAI- or Anthropic-compatible server, e.g. "
                                                     "http://127.0.0.1:8080/v1 for llama.cpp, vLLM or Ollama")
    p.add_argument("--max-tokens", type=int, metavar="N",
                   help="the reply's token cap, sent with every call (overrides the spec pin's maxTokens; "
                        "default 1024). Part of the pin: the cache, the journal and a replay cassette keep "
                        "replies per cap, and a run is resumed only with the cap it started with")
    p.add_argument("--transport", choices=("sdk", "http"),
                   help="openai only: sdk (the official openai client; the default) or http (the same "
                        "requests, byte for byte, over evalkit's lean HTTP/1.1 pool: http:// servers only, "
                        "for local servers such as vLLM, llama.cpp or Ollama at high --concurrency, where "
                        "the SDK's CPU per call sets the pace). Overrides the spec pin's transport")
    p.add_argument("--cassette", metavar="FILE", help="with --provider replay: the recorded replies (JSONL)")
    p.add_argument("--record", metavar="FILE", help="append every live reply to this cassette, to replay later")
    p.add_argument("--concurrency", type=int, default=16, metavar="N", help="calls in flight at most (default 16)")
    p.add_argument("--repeats", type=int, default=1, metavar="N",
                   help="judge each item N times; the verdicts file gets the majority verdict and "
                        "OUT.repeats.jsonl the spread (default 1)")
    p.add_argument("--cache", metavar="FILE", help="SQLite reply cache: a rerun of an unchanged prompt makes no call")
    p.add_argument("--journal", metavar="FILE", help="the journal to resume from (default OUT.journal.jsonl)")
    p.add_argument("--max-cost", type=float, metavar="USD",
                   help="the budget: each call reserves its estimated cost (its prompt's tokens and a reply at "
                        "the cap) before it is sent, and no call starts that could pass USD with what was spent "
                        "and reserved; the spend ends within one call of it (needs the model's price)")
    p.add_argument("--estimate", action="store_true",
                   help="print the calls, tokens and cost per criterion the run would make, and stop (no call "
                        "to the judge; the tokens are counted with the model's tokenizer where there is one)")
    p.add_argument("--confirm-over", type=float, metavar="USD",
                   help="when the estimated cost may pass USD, show the estimate and ask before any call (no "
                        "terminal: refused)")
    p.add_argument("--retry-errors", action="store_true",
                   help="ask again the items an earlier run ended in a deterministic error (a prompt over the "
                        "context, a reply invalid after the correction), which are otherwise kept, not re-paid")
    p.add_argument("--allow-invalid-replies", action="store_true",
                   help="items whose reply is still invalid after the correction (a small model's) stay error "
                        "rows but do not make the exit code 1; any other error still does")
    p.add_argument("--strict-model", action="store_true",
                   help="a model the server does not list at /v1/models is an error (default: a warning, and "
                        "its replies are not priced)")
    p.add_argument("--context-window", type=int, metavar="TOKENS",
                   help="the model's context window: a prompt that cannot fit with the reply's cap is refused "
                        "before any call (default: the price table's for the model, else what the server's "
                        "first context error names)")
    p.add_argument("--prices", metavar="FILE",
                   help="price table to add to the built-in one (YAML: models: {MODEL: {input: USD, output: USD}} "
                        "per million tokens); a model without a price has an unknown cost, never 0")
    p.add_argument("--verify", choices=("none", "refs", "llm"),
                   help="after the judge: none; refs (every ref re-resolved, a dead one downgrades to "
                        "uncertain); llm (refs, then an independent verifier call per pass/fail verdict: an "
                        "inferential leap downgrades to uncertain, never a flip). Default: llm with openai or "
                        "anthropic, refs otherwise (docs/judge.md)")
    p.add_argument("--verifier-model", metavar="MODEL",
                   help="the LLM verifier's model, on the judge's provider (default: the judge's model)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"per call (default {DEFAULT_TIMEOUT:g}: a small local model takes over a minute on a "
                        "long trace; a timed-out call may keep running on a local server)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when stderr is a terminal)")
    add_cluster_arguments(p)
    p.set_defaults(func=_catching_provider_errors(_cmd_run))

    p = jsub.add_parser("lint", help="grounding problems in a verdicts file: unrouted abstains, missing or dead refs",
                        description="Check each verdict against its trace: an uncertain verdict without blockedBy, "
                                    "a pass or fail with no ref, a ref that does not resolve (and why), a verdict "
                                    "whose trace is missing. One line per problem, FILE:LINE first; exit 1 when "
                                    "there are any.")
    p.add_argument("verdicts", metavar="VERDICTS", help="criterion-verdict JSONL (from any tool)")
    p.add_argument("--traces", required=True, metavar="FILE", help="the traces the verdicts are about")
    p.set_defaults(func=_cmd_lint)

    p = jsub.add_parser("prompt", help="show exactly what the judge would be sent for one trace",
                        description="Print the messages (system, then user) each spec would send for the trace, "
                                    "with the prompt digest the run records; or, when a term of the spec is "
                                    "unbound in the trace, the verdict stored without a call. No call is made.")
    p.add_argument("--spec", action="append", required=True, metavar="FILE", help="judge spec file (repeatable)")
    p.add_argument("--trace", required=True, metavar="ID", help="the trace id")
    p.add_argument("--traces", required=True, metavar="FILE", help="the traces file holding it")
    p.add_argument("--criterion", metavar="ID", help="only this spec (default: every spec in the files)")
    p.add_argument("--labels", metavar="FILE",
                   help="human labels: needed when a spec has few-shot examples; with them, a metadata field "
                        "whose value gives the labels is refused")
    p.add_argument("--json", action="store_true",
                   help="print the request bodies as JSON (messages, schema, digest, token count) instead of text")
    p.add_argument("--provider", choices=("openai", "anthropic", "replay"),
                   help="the judge whose tokenizer counts the prompt (default: the specs' pin; none: estimated)")
    p.add_argument("--model", help="the model whose tokenizer and context window apply")
    p.add_argument("--base-url", metavar="URL", help="the judge's server: its tokenize endpoint counts exactly")
    p.add_argument("--context-window", type=int, metavar="TOKENS",
                   help="the model's context window (default: the price table's for the model)")
    p.set_defaults(max_tokens=None, transport=None)
    p.set_defaults(func=_cmd_prompt)

    add_audit_parser(jsub)  # `judge audit`: evalkit/cli/judge_audit.py
