"""The judge prompt for one criterion on one trace: exactly four components, critique before verdict.

1. the task and the one criterion; 2. the pass and fail definitions; 3. few-shot examples, drawn only
from the train split (an example from dev or test is data leakage and is refused); 4. the structured
output, critique first. The trace to judge is the user message. The same inputs always give the same
bytes, and the digest of the messages and schema is recorded with every verdict.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from evalkit.contracts.judge import JudgePin, JudgeSpec
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.errors import InputError
from evalkit.io.canonical import compact_sorted_json
from evalkit.judge.grounding import bind_terms, resolve_ref, unbound_verdict
from evalkit.judge.leaks import label_proxies
from evalkit.judge.output import JUDGE_OUTPUT_SCHEMA
from evalkit.judge.render import fields_named, metadata_labels, metadata_rationales, render_view, trace_view
from evalkit.judge.sessions import judged_traces

COMPONENTS: tuple[str, ...] = (
    "## 1. Task and criterion",
    "## 2. Pass and fail definitions",
    "## 3. Examples",
    "## 4. Output: critique first, then the verdict",
)
"""The headings of the four components of every judge prompt, in the order they appear."""

SESSION_TASK = ("on one whole conversation: a session of several turns, each turn a SPAN observation named by its "
                "trace id, holding what the user sent and what the agent answered, with that turn's steps beneath "
                "it; judge the conversation as a whole")
"""How a session judge's task names what it is shown."""


class JudgePrompt(NamedTuple):
    """Everything needed to ask a judge about one trace, or the verdict to store without asking.

    A named tuple (immutable, and built in a fraction of a frozen dataclass's time: a rerun streams
    tens of thousands of prompts a second through the cache)."""

    criterion_id: str
    trace_id: str
    messages: tuple[dict[str, str], ...]
    schema: dict[str, Any]
    digest: str
    pre_verdict: CriterionVerdict | None
    pin: JudgePin | None
    judge_digest: str | None = None
    """The judge's own digest (:func:`judge_digest`): the same for every trace; a calibration is bound to it."""


def prompt_digest(messages: Iterable[dict[str, str]], schema: dict[str, Any]) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``{"messages": ..., "schema": ...}``."""
    text = compact_sorted_json({"messages": list(messages), "schema": schema}, allow_nan=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def judge_digest(spec: JudgeSpec, system: dict[str, str]) -> str:
    """``sha256:<hex>`` of what makes the judge this judge, whatever trace it reads: the spec (its pin left
    out: model and temperature are bound separately), the system message rendered from it (examples
    included) and the output schema. Every trace's prompt digest changes with the trace; this one does not."""
    # A trace judge's digest stays what it was before judges could judge sessions: the scope fields are left out
    # at their defaults.
    left_out = {"judge"} | ({"scope", "session_key"} if spec.scope == "trace" else set())
    spec_json = spec.model_dump(mode="json", by_alias=True, exclude=left_out)
    text = compact_sorted_json({"spec": spec_json, "system": system["content"], "schema": JUDGE_OUTPUT_SCHEMA},
                               allow_nan=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _spec_error(spec: JudgeSpec, message: str, path: str) -> InputError:
    file, line = spec.source
    return InputError(message, file=file, line=line, path=path)


def check_examples(spec: JudgeSpec, labels: Iterable[HumanLabel] | None) -> None:
    """Refuse few-shot examples that are not labelled, for this criterion, in the train split only.

    Raises:
        InputError: naming the example and the trace, and the split it is in (data leakage), or why its
            split cannot be known (no labels given, no label, no split, a different label).
    """
    if not spec.examples:
        return
    if labels is None:
        raise _spec_error(spec, "few-shot examples need the human labels to check they come from the train "
                          "split; pass the labels", "examples")
    mine = [lab for lab in labels if lab.criterion_id in (None, spec.id)]
    for i, example in enumerate(spec.examples):
        path = f"examples[{i}].trace"
        found = [lab for lab in mine if lab.trace_id == example.trace]
        if not found:
            raise _spec_error(spec, f"few-shot example trace {example.trace!r} has no human label for "
                              f"{spec.id!r}; examples must come from the labelled train split", path)
        leaked = sorted({lab.split for lab in found if lab.split in ("dev", "test")})
        if leaked:
            raise _spec_error(spec, f"data leakage: few-shot example trace {example.trace!r} is in the "
                              f"{' and '.join(leaked)} split; take examples only from train", path)
        if any(lab.split is None for lab in found):
            raise _spec_error(spec, f"few-shot example trace {example.trace!r} has a label with no split; "
                              "split the labels first (examples come only from train)", path)
        others = sorted({lab.label for lab in found} - {example.label})
        if others:
            raise _spec_error(spec, f"few-shot example trace {example.trace!r} is labelled "
                              f"{' and '.join(others)} by a reviewer, not {example.label}",
                              f"examples[{i}].label")


def _component_examples(spec: JudgeSpec, traces_by_id: Mapping[str, Trace] | None) -> str:
    lines = [COMPONENTS[2]]
    if not spec.examples:
        lines.append("No labelled examples are given for this criterion.")
        return "\n".join(lines)
    lines.append("Labelled traces from the train split, each with the critique a careful reviewer wrote. "
                 "Write critiques at least this detailed.")
    for i, example in enumerate(spec.examples, start=1):
        trace = (traces_by_id or {}).get(example.trace)
        if trace is None:
            raise _spec_error(spec, f"few-shot example trace {example.trace!r} is not among the traces given",
                              f"examples[{i - 1}].trace")
        for j, ref in enumerate(example.refs or []):
            resolution = resolve_ref(trace, ref)
            if not resolution:
                raise _spec_error(spec, f"few-shot example ref does not resolve: {resolution.reason}",
                                  f"examples[{i - 1}].refs[{j}]")
        lines += ["", f"### Example {i}: trace {example.trace}", render_view(trace_view(trace, spec.input)),
                  f"Critique: {example.critique}"]
        if example.refs:
            lines.append(f"Refs: {compact_sorted_json([r.to_json_obj() for r in example.refs])}")
        lines.append(f"Result: {example.label}" + (" (a borderline case)" if example.borderline else ""))
    return "\n".join(lines)


def _component_output() -> str:
    schema_text = json.dumps(JUDGE_OUTPUT_SCHEMA, ensure_ascii=False, separators=(",", ":"))
    return "\n".join([
        COMPONENTS[3],
        "Reply with one JSON object following the schema below, writing its fields in this order:",
        "1. critique: your detailed assessment of the trace against the criterion, citing concrete evidence. "
        "Write it before you decide; the result must follow from it.",
        "2. refs: one {obs, path, value} for every claim the critique makes, including any claim that "
        "something is absent (cite the field you checked). obs is an id from the trace (the trace id "
        "for trace-level fields, or an observation id); path is the field inside it, dot segments and "
        "[n] for list items (output.content, input[2].content); value is text copied exactly from that "
        "field. A value shown as «same as OBS PATH» repeats the one at that place: cite that place.",
        "3. assumptions: each premise the verdict needs that the trace does not establish, typed "
        "factual-intent, normative or scope.",
        "4. result: pass or fail when the trace settles the criterion, even if you hesitate. uncertain only "
        "when the trace itself cannot settle it: a term the criterion presupposes is never established, "
        "or the verdict would rest on a premise the trace does not ground.",
        "5. confidence: from 0 to 1.",
        "6. blockedBy: for uncertain, the kind and the unbound term or ungroundable premise; null for "
        "pass or fail.",
        "Your refs are re-resolved against the trace afterwards: a pass or fail with no ref, or with a ref "
        "that does not resolve, is turned to uncertain.",
        f"Schema: {schema_text}",
    ])


def _system_message(spec: JudgeSpec, traces_by_id: Mapping[str, Trace] | None) -> str:
    what = SESSION_TASK if spec.scope == "session" else "on one agent trace"
    task = "\n".join([
        COMPONENTS[0],
        f"You are an evaluator. You judge one criterion ({spec.id}) {what}, and nothing else.",
        spec.criterion.strip(),
    ])
    definitions = "\n".join([
        COMPONENTS[1],
        "The verdict is binary: no scores, no partial credit.",
        f"PASS: {spec.pass_definition.strip()}",
        f"FAIL: {spec.fail_definition.strip()}",
    ])
    return "\n\n".join([task, definitions, _component_examples(spec, traces_by_id), _component_output()])


def build_prompt(spec: JudgeSpec, trace: Trace, *, labels: Iterable[HumanLabel] | None = None,
                 traces_by_id: Mapping[str, Trace] | None = None) -> JudgePrompt:
    """The judge prompt for ``spec`` on ``trace``.

    Args:
        spec: the judge spec.
        trace: the trace to judge.
        labels: human labels with splits; required when the spec has examples (their split is checked).
        traces_by_id: traces by id; must hold every example trace (its content is rendered from it).

    Returns:
        The prompt; its ``pre_verdict`` is set (and no judge should be called) when a term of the spec is
        not bound in the trace.

    Raises:
        InputError: an example is not from the train split (data leakage), is unknown, or the judged
            trace shows a field named like the criterion (its label, most likely).
    """
    return build_prompts(spec, [trace], labels=labels, traces_by_id=traces_by_id)[0]


def build_prompts(spec: JudgeSpec, traces: Iterable[Trace], *, labels: Iterable[HumanLabel] | None = None,
                  traces_by_id: Mapping[str, Trace] | None = None) -> list[JudgePrompt]:
    """:func:`build_prompt` for each trace, in order, checking and rendering the examples once. A session
    judge (``scope: session``) gets one prompt per session of ``traces`` instead (:mod:`evalkit.judge.sessions`;
    its few-shot examples are session ids, looked up among the sessions of ``traces_by_id``)."""
    check_examples(spec, None if labels is None else list(labels))
    if spec.scope == "session":
        traces = judged_traces(spec, traces)
        if spec.examples and traces_by_id is not None:
            traces_by_id = {**traces_by_id, **{t.id: t for t in judged_traces(spec, traces_by_id.values())}}
    system = {"role": "system", "content": _system_message(spec, traces_by_id)}
    judge = judge_digest(spec, system)
    # One copy of the reply schema for the spec's prompts, not one per trace: a provider renders its
    # response format once per schema object (a copy per prompt cost 3 to 4 ms a prompt, measured with
    # the render it forced, a fixed cost of several seconds at 2,000 traces).
    schema = copy.deepcopy(JUDGE_OUTPUT_SCHEMA)
    return [_prompt(spec, trace, system, judge, schema) for trace in traces]


def check_label_proxies(spec: JudgeSpec, traces: Iterable[Trace], labels: Iterable[HumanLabel]) -> None:
    """Refuse a spec that shows the judge the whole trace metadata when a field of it gives the human
    label of the criterion on almost every labelled trace (:func:`~evalkit.judge.leaks.label_proxies`).

    Raises:
        InputError: naming the spec, each such field and how often it gives the label, and the fix.
    """
    proxies = label_proxies(spec, traces, labels)
    if proxies:
        raise _spec_error(spec, f"the judge would be shown {', '.join(p.describe() for p in proxies)} with the "
                          f"whole metadata: a label kept under another name, most likely (a judge shown it "
                          f"agrees with the labels for the wrong reason); show only the metadata the judge "
                          f"needs, e.g. input.trace: [input, output, metadata.KEY] (a field the spec names is "
                          f"shown as chosen)", "input")


def _metadata_fix(trace: Trace, hits: list[str]) -> str:
    """How to keep metadata ``hits`` (``OBS PATH``) from the judge: on the trace, or on observations."""
    if any(hit.startswith(f"{trace.id} ") for hit in hits):
        return ("show only the trace metadata the judge needs, e.g. input.trace: [input, output, metadata.KEY], "
                "or leave it out")
    return "leave observation metadata out of input.fields"


def _prompt(spec: JudgeSpec, trace: Trace, system: dict[str, str], judge: str, schema: dict[str, Any]) -> JudgePrompt:
    parts = trace_view(trace, spec.input)
    leaks = fields_named(parts, spec.id)
    if leaks:
        raise _spec_error(spec, f"the judge would be shown {', '.join(leaks)} (in trace {trace.id}), a "
                          f"field named like the criterion (its label, most likely); leave it out with input.trace or "
                          f"input.fields", "input")
    labels = metadata_labels(parts)
    if labels:
        raise _spec_error(spec, f"the judge would be shown {', '.join(labels)} (in trace {trace.id}), a label "
                          f"kept in metadata (a judge shown the answer agrees with it for the wrong reason); "
                          f"{_metadata_fix(trace, labels)}", "input")
    reasons = metadata_rationales(parts)
    if reasons:
        raise _spec_error(spec, f"the judge would be shown {', '.join(reasons)} (in trace {trace.id}) with "
                          f"the whole metadata: reasons or notes kept there are most often a person's or "
                          f"another judge's reasons for a label; {_metadata_fix(trace, reasons)} (a field the "
                          f"spec names, metadata.KEY, is shown as chosen)", "input")
    ask = "Judge this conversation." if spec.scope == "session" else "Judge this trace."
    messages = (system, {"role": "user", "content": f"{ask}\n\n" + render_view(parts)})
    pre_verdict = unbound_verdict(spec, trace, bind_terms(spec, trace))
    return JudgePrompt(criterion_id=spec.id, trace_id=trace.id, messages=messages,
                       schema=schema,
                       digest=prompt_digest(messages, JUDGE_OUTPUT_SCHEMA), pre_verdict=pre_verdict,
                       pin=spec.judge, judge_digest=judge)
