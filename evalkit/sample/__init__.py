"""The bundled sample subject: a simulated support agent with failures injected at known rates.

``python -m evalkit.sample`` writes it to ``data/sample/``; the same seed always gives the same bytes.
"""

from evalkit.sample.catalog import DEFAULT_SEED, DEFAULT_TRACE_COUNT
from evalkit.sample.generate import SampleContractError, SampleFile, build_sample, write_sample

__all__ = [
    "DEFAULT_SEED",
    "DEFAULT_TRACE_COUNT",
    "SampleContractError",
    "SampleFile",
    "build_sample",
    "write_sample",
]
