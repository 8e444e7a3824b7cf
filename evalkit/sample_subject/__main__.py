"""``python -m evalkit.sample_subject [--out DIR] [--seed N] [--traces N]``: write the sample subject."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from evalkit.sample_subject.catalog import DEFAULT_SEED, DEFAULT_TRACE_COUNT
from evalkit.sample_subject.generate import build_sample, write_files

DEFAULT_OUT = "data/sample"


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the arguments, generate the sample, write it, and print one line per file."""
    parser = argparse.ArgumentParser(
        prog="python -m evalkit.sample_subject",
        description="Write the sample subject: a simulated support agent with failures injected at known rates.",
    )
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=f"output folder (default {DEFAULT_OUT})")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default {DEFAULT_SEED})")
    parser.add_argument("--traces", type=int, default=DEFAULT_TRACE_COUNT, metavar="N",
                        help=f"number of traces (default {DEFAULT_TRACE_COUNT})")
    args = parser.parse_args(argv)
    if args.traces < 1:
        parser.error("--traces must be at least 1")
    files = build_sample(args.seed, args.traces)
    paths = write_files(args.out, files)
    total = 0
    for f, path in zip(files, paths, strict=True):
        size = len(f.text.encode("utf-8"))
        total += size
        count = "" if f.records is None else f"{f.records} record{'s' if f.records != 1 else ''}, "
        print(f"wrote {path} ({count}{size:,} bytes)")
    plural = "s" if args.traces != 1 else ""
    print(f"{len(files)} files, {total:,} bytes (seed {args.seed}, {args.traces} trace{plural})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
