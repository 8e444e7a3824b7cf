"""Speed and scale measurements, run by ``make bench`` (``python -m benchmarks``)."""
