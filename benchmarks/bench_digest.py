"""Tree digests against ``sha256sum`` over the same bytes: the skill-eval digest must keep up.

A temporary tree of ``--files`` files totalling ``--mb`` megabytes (sizes vary, a few larger than the
1 MiB read chunk many times over) is written once and read once to warm the page cache; then
``sha256sum`` (run as a subprocess on every file) and :func:`evalkit.skilleval.tree_digest` are timed
alternately, ``--rounds`` times each, in the same process. The best round of each is compared (the
least disturbed by other work on a shared machine): the digest's speed as a share of sha256sum's,
target >= 70%. The digest hashes a little more than the files (names, lengths, separators), and both
read through the page cache, so the ratio measures the hashing and the reading loop.

Run: ``python -m benchmarks.bench_digest [--files 200] [--mb 500] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from evalkit.skilleval import DOMAINS, tree_digest, tree_files

TARGET = 0.70


def write_tree(root: Path, files: int, total: int, seed: int) -> list[Path]:
    """``files`` files of random bytes, sizes drawn at random, summing to exactly ``total`` bytes."""
    rng = random.Random(seed)
    weights = [rng.random() ** 3 + 0.01 for _ in range(files)]  # a few big files, many small ones
    sizes = [int(total * w / sum(weights)) for w in weights]
    sizes[0] += total - sum(sizes)
    block = rng.randbytes(1 << 20)
    paths = []
    for i, size in enumerate(sizes):
        path = root / f"skill-{i % 7}" / f"part-{i:04d}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            left = size
            while left:
                step = min(left, len(block))
                fh.write(block[:step])
                left -= step
        paths.append(path)
    return paths


def time_sha256sum(paths: list[Path]) -> float:
    start = time.perf_counter()
    subprocess.run(["sha256sum", "--", *map(str, paths)], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def time_tree_digest(root: Path) -> float:
    start = time.perf_counter()
    tree_digest(root, DOMAINS["raw"])
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--mb", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if shutil.which("sha256sum") is None:
        print("sha256sum not found: the reference run is missing, nothing to compare (install coreutils)")
        return
    total = args.mb * 1_000_000
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-digest-") as tmp:
        root = Path(tmp)
        paths = write_tree(root, args.files, total, args.seed)
        assert len(tree_files(root)) == args.files
        time_sha256sum(paths)  # warm the page cache, so both read memory, not disk
        reference, ours = [], []
        for _ in range(args.rounds):
            reference.append(time_sha256sum(paths))
            ours.append(time_tree_digest(root))
        best_ref, best_ours = min(reference), min(ours)
    ratio = best_ref / best_ours
    mb = total / 1e6
    print(f"tree: {args.files} files, {mb:,.0f} MB; best of {args.rounds} rounds each")
    print(f"sha256sum (subprocess): {best_ref:.2f} s = {mb / best_ref:,.0f} MB/s")
    print(f"tree_digest:            {best_ours:.2f} s = {mb / best_ours:,.0f} MB/s")
    print(f"tree_digest speed / sha256sum speed: {ratio:.0%} (target >= {TARGET:.0%}: "
          f"{'met' if ratio >= TARGET else 'NOT met'})")
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"memory: peak RSS {rss_mb:,.0f} MB for the whole run (files are streamed in 1 MiB chunks); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
