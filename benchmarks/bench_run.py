"""Where the time of a small ``evalkit run`` goes: three notebooks on one trace, target under 10 seconds.

A subject of one trace (the bundled sample's first) runs ``00_overview``, ``01_error_analysis`` and
``03_flow_graph``. The run's wall time is split into what every notebook pays before its analysis
starts, each measured alone here, best of ``--rounds``: starting and stopping a kernel, the imports the
notebooks make (altair, polars and evalkit's facades) in a fresh interpreter, and the first chart
rendered to SVG (vl-convert loads its engine then). What is left of each notebook's time is its own
analysis, the rendering of its page and the report.

Run: ``python -m benchmarks.bench_run [--rounds 3] [--notebooks 00_overview ...]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ("00_overview", "01_error_analysis", "03_flow_graph")
TARGET_S = 10.0

_IMPORTS = ("import altair, polars; import evalkit.analysis, evalkit.flow, evalkit.report, evalkit.traces; "
            "from evalkit.analysis import sample_traces; from evalkit.traces import load, to_frame; "
            "from evalkit.report import SummaryBuilder; from evalkit.flow import build_flow_graph")
_SVG_SETUP = ("import altair as alt, vl_convert; chart = alt.Chart(alt.Data(values=[{'a': 1}])).mark_bar()"
              ".encode(x='a:Q')")
_FIRST_SVG = _SVG_SETUP + "; vl_convert.vegalite_to_svg(chart.to_dict())"


def _best(rounds: int, run) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def _python(code: str) -> None:
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def _kernel() -> None:
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        client.execute_interactive("1", timeout=60)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)


def _subject(folder: Path, notebooks: list[str]) -> Path:
    first = (ROOT / "data" / "sample" / "traces.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (folder / "traces.jsonl").write_text(first + "\n", encoding="utf-8")
    subject = folder / "subject.yaml"
    subject.write_text(f"name: one-trace\ntraces: traces.jsonl\nnotebooks: [{', '.join(notebooks)}]\n",
                       encoding="utf-8")
    return subject


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each fixed cost, best kept (default 3)")
    parser.add_argument("--notebooks", nargs="+", default=list(NOTEBOOKS), help="the notebooks to run")
    args = parser.parse_args(argv)
    from evalkit.pipeline import run_subject

    kernel = _best(args.rounds, _kernel)
    imports = _best(args.rounds, lambda: _python(_IMPORTS))
    first_svg = _best(args.rounds, lambda: _python(_FIRST_SVG)) - _best(args.rounds, lambda: _python(_SVG_SETUP))
    bare = _best(args.rounds, lambda: _python("pass"))
    with tempfile.TemporaryDirectory() as tmp:
        subject = _subject(Path(tmp), args.notebooks)
        start = time.perf_counter()
        manifest = run_subject(subject, Path(tmp) / "run", at="2026-12-01T00:00:00Z")
        total = time.perf_counter() - start
    failed = [n.notebook for n in manifest.notebooks if n.status != "ok"]
    fixed = kernel + (imports - bare) + first_svg
    n = len(args.notebooks)
    print(f"evalkit run, {n} notebooks on one trace: {total:.1f} s (target {TARGET_S:.0f} s for three)"
          + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    print(f"  per notebook before its analysis starts: {fixed:.1f} s = kernel start and stop {kernel:.1f} s"
          f" + imports {imports - bare:.1f} s + first chart to SVG {first_svg:.1f} s")
    print(f"  so {n * fixed:.1f} s of the run is that, paid {n} times over; the analyses, their pages and the "
          f"report take the other {max(total - n * fixed, 0):.1f} s")
    print("  under the target" if total <= TARGET_S else
          f"  over the target by {total - TARGET_S:.1f} s: one kernel for all notebooks (imports paid once) is "
          "where most of it would come from")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
