"""Single-turn records: one prompt and one response per record (``{query, response, ...}``), each a trace.

Evaluation sets are often kept this way: a CSV or JSONL of the queries, the agent's responses and
whatever was noted beside them (a label, a reasoning, a dietary restriction). A record is of this
format when it has a prompt field and a response field holding text, the first present of:

* prompt: ``query``, ``question``, ``prompt``, ``input``, ``instruction``;
* response: ``response``, ``answer``, ``completion``, ``output``.

Each record becomes a trace whose input is the prompt and whose output is the response, with one
GENERATION ``m1`` (input ``[{"role": "user", "content": PROMPT}]``, output ``{"role": "assistant",
"content": RESPONSE}``): what the ``openai-chat`` importer makes of a two-message conversation, so
judges, review pages and flow graphs read both alike. The other fields go to the trace's metadata
(``--keep`` chooses which); the trace id comes from ``trace_id``, ``id`` and the other fields chat
records are read by, or ``--id-key`` (``record-LINE`` when there is none). The import report counts
which fields were read as prompt and response.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from evalkit.contracts.trace import Observation, Trace
from evalkit.traces.chat_mapping import ChatMapping
from evalkit.traces.chat_records import numbered_trace_id, record_metadata, record_trace_id
from evalkit.traces.report import ImportContext, ImportReport
from evalkit.traces.source import SourceValue

__all__ = ["PROMPT_KEYS", "RESPONSE_KEYS", "looks_like_single_turn", "read_single_turn"]

PROMPT_KEYS = ("query", "question", "prompt", "input", "instruction")
RESPONSE_KEYS = ("response", "answer", "completion", "output")
SOURCE = "single-turn"


def _fields(value: Any) -> tuple[str, str] | None:
    """The (prompt, response) field names of a record of this format, or None."""
    if not isinstance(value, dict):
        return None
    prompt = next((k for k in PROMPT_KEYS if k in value), None)
    response = next((k for k in RESPONSE_KEYS if k in value), None)
    if prompt is None or response is None:
        return None
    if not (isinstance(value[prompt], str) and isinstance(value[response], str)):
        return None
    return prompt, response


def looks_like_single_turn(value: Any) -> bool:
    """A record with a prompt field and a response field holding text (see the module docstring)."""
    return _fields(value) is not None


def _trace(sv: SourceValue, seen: Counter[str], mapping: ChatMapping, report: ImportReport) -> Trace:
    record = sv.value
    fields = _fields(record)
    if fields is None:
        raise sv.error("expected a record with a prompt field (" + ", ".join(PROMPT_KEYS) + ") and a response "
                       "field (" + ", ".join(RESPONSE_KEYS) + "), both text")
    prompt_key, response_key = fields
    prompt, response = record[prompt_key], record[response_key]
    report.mapped(f"field {prompt_key!r}", "the prompt (trace input, user message)")
    report.mapped(f"field {response_key!r}", "the response (trace output, assistant message)")
    generation = Observation(id="m1", type="GENERATION", name="assistant",
                             input=[{"role": "user", "content": prompt}],
                             output={"role": "assistant", "content": response})
    metadata = record_metadata(sv, record, mapping, report, read=(prompt_key, response_key), source=SOURCE)
    return Trace(id=numbered_trace_id(record_trace_id(sv, record, mapping), seen), input=prompt, output=response,
                 observations=[generation], metadata=metadata)


def read_single_turn(values: Iterable[SourceValue], context: ImportContext | None = None) -> Iterator[Trace]:
    """Traces from single-turn records (see the module docstring).

    Args:
        values: the records.
        context: the import report to count the fields read into, and the chat mapping (its id keys and
            kept fields apply; default: every field kept).

    Raises:
        evalkit.errors.InputError: a record without a prompt and a response field of text (located).
    """
    mapping = context.mapping if context is not None else ChatMapping()
    report = context.report if context is not None else ImportReport()
    seen = context.ids_seen if context is not None else Counter()
    for sv in values:
        yield _trace(sv, seen, mapping, report)
