"""``evalkit judge run --workers N | --scheduler ADDRESS`` from start to end: the checks a cluster run makes
before it starts, the partitions of the traces file, the cluster, the merged output.

The partition work and the merge are :mod:`evalkit.distributed.judge`; this module is the run around them,
so the command line only parses its flags and prints what comes back.
"""

from __future__ import annotations

import functools
import itertools
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.distributed.cluster import check_partition_size, dask_client
from evalkit.distributed.judge import JudgeJob, judge_on_cluster, work_folder
from evalkit.distributed.partitions import source_partitions, source_traces, trace_partitions
from evalkit.errors import InputError

if TYPE_CHECKING:
    from evalkit.contracts import HumanLabel, JudgePin, JudgeSpec
    from evalkit.judge import JudgeRunSummary, PriceTable, Provider

NOT_ON_CLUSTER = (
    ("journal", "--journal", "each partition keeps its own journal in .OUT.judge/ while the run lasts"),
    ("max_cost", "--max-cost", "one budget cannot be held across workers calling at once"),
    ("record", "--record", "workers cannot append to one cassette safely"),
    ("estimate", "--estimate", "run it without --workers: the estimate makes no call"),
    ("confirm_over", "--confirm-over", "the estimate it asks with is a one-process run's"),
    ("labelled_only", "--labelled-only", "partitions are cut from the whole file"),
)
"""The one-process options a cluster run does not offer: (option, flag, why)."""


def refuse_on_cluster(*, partition_size: int, repeats: int, concurrency: int, **one_process: Any) -> None:
    """Refuse, before any work, what a cluster run cannot do.

    Args:
        partition_size: traces per partition (at least 1).
        repeats: judgements per item (at least 1).
        concurrency: calls in flight per worker (at least 1).
        **one_process: the one-process options by name (``journal``, ``max_cost``, ``record``); any not None
            is refused.
    """
    for name, flag, why in NOT_ON_CLUSTER:
        if one_process.get(name) is not None:
            raise InputError(f"{flag} is not available with --workers/--scheduler ({why}): drop one of them",
                             path=flag)
    check_partition_size(partition_size)
    if repeats < 1 or concurrency < 1:
        raise InputError(f"repeats ({repeats}) and concurrency ({concurrency}) must be at least 1")


def refuse_cluster_journals(out: Path) -> None:
    """Stop a one-process run over the journals a stopped ``--workers`` run left for the same output: it
    would ask the judge again, and pay again, for every call they hold the answer to."""
    folder = work_folder(out)
    if folder.is_dir() and any(folder.glob("part-*.journal.jsonl")):
        raise InputError(f"a run with --workers stopped before it finished and left its partition journals in "
                         f"{folder}: rerun it with --workers and the same --partition-size to resume from them "
                         f"(answered calls are not made again), or remove {folder} to judge from scratch in "
                         "one process", file=str(out))


def judge_file_on_cluster(specs: Sequence[JudgeSpec], pin: JudgePin, provider: Provider, traces: str, out: Path, *,
                          workers: int | None = None, scheduler: str | None = None, partition_size: int,
                          labels: Sequence[HumanLabel] | None = None, limit: int | None = None,
                          base_url: str | None = None, cassette: str | None = None, timeout: float = 60.0,
                          cache: str | None = None, prices: PriceTable | None = None, repeats: int = 1,
                          concurrency: int = 16, progress: bool = False,
                          announce: Callable[[str], None] | None = None, context_window: int | None = None,
                          strict_model: bool = False, retry_errors: bool = False,
                          warn: Callable[[str], None] | None = None) -> tuple[JudgeRunSummary, int]:
    """Judge a traces file on a Dask cluster: the files a one-process run writes, the same bytes.

    Args:
        specs: the judge specs.
        pin: the judge; each worker builds its own provider from it.
        provider: the provider the credentials were checked with; closed here (SDK clients do not travel).
        traces: the traces file.
        out: the verdicts file.
        workers: start a local cluster of this many processes; or
        scheduler: the address of a running scheduler.
        partition_size: traces per partition.
        labels: human labels, for the few-shot examples' split and the label leakage check.
        limit: judge only the first traces of the file.
        base_url: the judge server's address.
        cassette: the replay cassette.
        timeout: seconds per call.
        cache: the reply cache every worker shares (a path they all see).
        prices: the price table.
        repeats: judgements per item.
        concurrency: calls in flight per worker.
        progress: a progress bar on stderr.
        announce: told how long a local cluster took to start.
        context_window: the model's context in tokens (see :func:`~evalkit.judge.judge_setup`).
        strict_model: a model the server does not list is an error.
        retry_errors: ask again the items an earlier run's deterministic errors kept.
        warn: told what to know before the run (a model the server does not list).

    Returns:
        The run's summary (its ``seconds`` from the call) and the number of traces judged.
    """
    from tqdm import tqdm

    from evalkit.judge import (
        build_prompts,
        check_label_proxies,
        judge_setup,
        make_provider,
        run_coroutine,
        token_counter,
    )

    started = time.monotonic()
    try:  # the model is checked with its server once, here, before any cluster starts
        setup = judge_setup(provider, prices, context_window=context_window, strict_model=strict_model, warn=warn)
    finally:
        run_coroutine(provider.aclose())  # it served the credentials check: each worker builds its own
    labels = tuple(labels) if labels is not None else None
    wanted = {example.trace for spec in specs for example in spec.examples}
    labelled = {label.trace_id for label in labels} if labels else set()
    read = ({t.id: t for t in source_traces([traces]) if t.id in wanted | labelled}
            if wanted | labelled else {})
    examples = {i: t for i, t in read.items() if i in wanted}
    for spec in specs if labels else ():  # the labelled traces only: the check needs no other
        check_label_proxies(spec, [t for i, t in read.items() if i in labelled], labels)
    for spec in specs:  # a leaked or missing few-shot example fails here, before the cluster starts
        build_prompts(spec, [], labels=labels, traces_by_id=examples)
    local = workers is not None  # local workers read the file and write their parts and journals
    if limit is not None:
        work = trace_partitions(itertools.islice(source_traces([traces]), limit), partition_size)
    else:
        work = source_partitions([traces], size=partition_size, workers_read_files=local)
    first = next(work, None)
    if first is None:
        raise InputError("no traces to judge", file=traces)
    def resolve(path: str | None) -> str | None:  # a remote worker's cwd may differ; a local one's does not,
        if not path or local:                   # and the path as given is what error rows name (the runs file
            return path                         # of a one-process run names it so too)
        return str(Path(path).absolute())
    job = JudgeJob(tuple(specs), functools.partial(make_provider, pin, base_url=base_url,
                                                   cassette=resolve(cassette), timeout=timeout),
                   labels=labels, examples=examples, repeats=repeats, concurrency=concurrency,
                   cache=resolve(cache), prices=setup.prices,
                   journals=str(work_folder(Path(out).absolute())) if local else None,
                   counter=functools.partial(token_counter, provider.name, provider.model,
                                             getattr(provider, "base_url", None)),
                   context=setup.context, retry_errors=retry_errors)
    with tqdm(desc="judging", unit=" traces", disable=not progress, file=sys.stderr) as bar, \
            dask_client(workers=workers, scheduler=scheduler, announce=announce) as client:
        summary, count = judge_on_cluster(client, job, itertools.chain([first], work), Path(out),
                                          on_done=bar.update, workers_write=local)
    summary.seconds = time.monotonic() - started
    return summary, count


__all__ = ["NOT_ON_CLUSTER", "judge_file_on_cluster", "refuse_cluster_journals", "refuse_on_cluster"]
