"""The bundled sample subject: a simulated support agent with failures injected at known rates.

``python -m evalkit.sample_subject`` writes it to ``data/sample/``; the same seed always gives the same bytes.
The names below load on first use, so the runnable agent (``python -m evalkit.sample_subject.agent_command``,
run once per case) does not import the whole generator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.facade import load_on_first_use

if TYPE_CHECKING:
    from evalkit.errors import SampleContractError
    from evalkit.sample_subject.catalog import DEFAULT_SEED, DEFAULT_TRACE_COUNT
    from evalkit.sample_subject.generate import SampleFile, build_sample, write_sample

__all__ = [
    "DEFAULT_SEED",
    "DEFAULT_TRACE_COUNT",
    "SampleContractError",
    "SampleFile",
    "build_sample",
    "write_sample",
]


__getattr__, __dir__ = load_on_first_use(__name__, __all__)
