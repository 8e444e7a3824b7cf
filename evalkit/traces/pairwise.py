"""Pairwise records: one instruction and two candidate answers per record, each record a trace.

Judge benchmarks and arena exports keep comparisons this way (LLMBar's and MT-Bench's ``{input,
output_1, output_2, label, results}``, ``response_a``/``response_b`` elsewhere). A record is of this
format when it has a prompt field holding text (the single-turn format's: ``query``, ``question``,
``prompt``, ``input``, ``instruction``) and a pair of answers holding text, the first present of
``output_1``/``output_2``, ``output_a``/``output_b`` and ``response_a``/``response_b``.

Each record becomes a trace whose input is the prompt and which holds one GENERATION per answer, ``m1`` and
``m2``, each named by its field (input ``[{"role": "user", "content": PROMPT}]``, output ``{"role":
"assistant", "content": ANSWER}``), so the review page shows both answers and a judge can cite either. The
trace has no output of its own: neither answer is the agent's. The other fields (the gold preference, the
judges' verdicts) go to the trace's metadata, where the judge's leakage guards see them; ids as for
single-turn records. To audit the judge that made the preferences: ``evalkit judge audit --pairwise FILE``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from evalkit.contracts.trace import Observation, Trace
from evalkit.traces.chat_mapping import ChatMapping
from evalkit.traces.chat_records import numbered_trace_id, record_metadata, record_trace_id
from evalkit.traces.report import ImportContext, ImportReport
from evalkit.traces.single_turn import PROMPT_KEYS
from evalkit.traces.source import SourceValue

__all__ = ["ANSWER_PAIRS", "looks_like_pairwise", "read_pairwise"]

ANSWER_PAIRS = (("output_1", "output_2"), ("output_a", "output_b"), ("response_a", "response_b"))
SOURCE = "pairwise"


def _fields(value: Any) -> tuple[str, str, str] | None:
    """The (prompt, first answer, second answer) field names of a record of this format, or None."""
    if not isinstance(value, dict):
        return None
    prompt = next((k for k in PROMPT_KEYS if isinstance(value.get(k), str)), None)
    pair = next(((a, b) for a, b in ANSWER_PAIRS if isinstance(value.get(a), str) and isinstance(value.get(b), str)),
                None)
    return None if prompt is None or pair is None else (prompt, *pair)


def looks_like_pairwise(value: Any) -> bool:
    """A record with a prompt and a pair of answers, all text (see the module docstring)."""
    return _fields(value) is not None


def _trace(sv: SourceValue, seen: Counter[str], mapping: ChatMapping, report: ImportReport) -> Trace:
    record = sv.value
    fields = _fields(record)
    if fields is None:
        raise sv.error("expected a record with a prompt field (" + ", ".join(PROMPT_KEYS) + ") and a pair of "
                       "answers (" + ", ".join("/".join(p) for p in ANSWER_PAIRS) + "), all text")
    prompt_key, *answer_keys = fields
    prompt = record[prompt_key]
    report.mapped(f"field {prompt_key!r}", "the prompt (trace input, user message of each answer)")
    answers = []
    for i, key in enumerate(answer_keys, start=1):
        report.mapped(f"field {key!r}", f"answer m{i} (a GENERATION named {key})")
        answers.append(Observation(id=f"m{i}", type="GENERATION", name=key,
                                   input=[{"role": "user", "content": prompt}],
                                   output={"role": "assistant", "content": record[key]}))
    metadata = record_metadata(sv, record, mapping, report, read=fields, source=SOURCE)
    return Trace(id=numbered_trace_id(record_trace_id(sv, record, mapping), seen), input=prompt,
                 observations=answers, metadata=metadata)


def read_pairwise(values: Iterable[SourceValue], context: ImportContext | None = None) -> Iterator[Trace]:
    """Traces from pairwise records (see the module docstring).

    Args:
        values: the records.
        context: the import report to count the fields read into, and the chat mapping (its id keys and
            kept fields apply; default: every field kept).

    Raises:
        evalkit.errors.InputError: a record without a prompt and a pair of answers of text (located).
    """
    mapping = context.mapping if context is not None else ChatMapping()
    report = context.report if context is not None else ImportReport()
    seen = context.ids_seen if context is not None else Counter()
    for sv in values:
        yield _trace(sv, seen, mapping, report)
