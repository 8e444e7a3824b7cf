"""``python -m benchmarks``: run every benchmark at its default scale."""

from benchmarks import (
    bench_calibration,
    bench_checks,
    bench_digest,
    bench_flow,
    bench_ingest,
    bench_judge,
    bench_run,
    bench_trajectory,
)

if __name__ == "__main__":
    print("== ingest ==")
    bench_ingest.main([])
    print("== calibration ==")
    bench_calibration.main([])
    print("== flow ==")
    bench_flow.main([])
    print("== judge ==")
    bench_judge.main([])
    print("== checks ==")
    bench_checks.main([])
    print("== trajectory checks (the sample's traces) ==")
    bench_trajectory.main([])
    print("== digest ==")
    bench_digest.main([])
    print("== a small evalkit run (three notebooks on one trace) ==")
    bench_run.main([])
    print("== scale (10M observations in Parquet; flow on 2 Dask workers) ==")
    from benchmarks import bench_scale
    bench_scale.main([])
