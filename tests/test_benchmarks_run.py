"""Every benchmark runs to its end at a tiny scale, with its output assertions on.

`make bench` is how the README's speed claims are reproduced; nothing else runs the benchmarks, so a change
that breaks one (an output it compares, a name it imports) would go unseen until someone measures again.
The figures themselves are not checked here: speed is measured by `make bench`, not by tests.
"""

from __future__ import annotations

import pytest

from benchmarks import (
    bench_calibration,
    bench_checks,
    bench_digest,
    bench_flow,
    bench_ingest,
    bench_judge,
    bench_run,
    bench_scale,
    bench_trajectory,
)

pytestmark = pytest.mark.slow

TINY = {
    "ingest": (bench_ingest.main, ["--scale", "0.001", "--repeat", "1"]),
    "calibration": (bench_calibration.main, ["--scenarios", "20"]),
    "flow": (bench_flow.main, ["--sizes", "10", "--repeat", "1"]),
    "judge": (bench_judge.main, ["--items", "20", "--replay", "200"]),
    "checks": (bench_checks.main, ["--traces", "300", "--batch", "100"]),
    "digest": (bench_digest.main, ["--files", "4", "--mb", "1", "--rounds", "1"]),
    "scale": (bench_scale.main, ["--scale", "0.001", "--flow-traces", "10"]),
    "run": (bench_run.main, ["--rounds", "1", "--notebooks", "00_overview"]),
    "trajectory": (bench_trajectory.main, ["--rounds", "1"]),
}


@pytest.mark.parametrize("name", list(TINY))
def test_the_benchmark_runs_to_its_end(name, capsys):
    main, argv = TINY[name]
    main(argv)
    assert capsys.readouterr().out.strip(), f"bench_{name} printed nothing"


def test_every_benchmark_module_is_smoked():
    from pathlib import Path

    modules = {p.stem.removeprefix("bench_") for p in (Path(bench_scale.__file__).parent).glob("bench_*.py")}
    assert modules == set(TINY)
