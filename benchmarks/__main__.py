"""``python -m benchmarks``: run every benchmark at its default scale."""

from benchmarks import bench_calibration, bench_flow, bench_ingest

if __name__ == "__main__":
    print("== ingest ==")
    bench_ingest.main([])
    print("== calibration ==")
    bench_calibration.main([])
    print("== flow ==")
    bench_flow.main([])
