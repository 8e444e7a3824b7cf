"""The set-up every judge run shares (:func:`evalkit.judge.judge_traces`): the label leakage check over
every trace read, the prompts of each spec on its own traces, the cache, verified verdicts."""

from __future__ import annotations

import json

import pytest

from evalkit.contracts.labels import HumanLabel
from evalkit.io import InputError
from evalkit.judge import ScriptedProvider, judge_prompts, judge_traces
from tests.judge.servers import judge_output
from tests.judge.traces import leasing_trace, spec

CRITERION = "all_responses_substantiated"


def _labelled_traces() -> tuple[list, list[HumanLabel]]:
    """Twenty traces whose metadata ``checked`` gives the human label on every one."""
    verdicts = ["pass"] * 12 + ["fail"] * 8
    traces = [leasing_trace(f"t{i}", metadata={"checked": v == "pass"}) for i, v in enumerate(verdicts)]
    return traces, [HumanLabel(trace_id=f"t{i}", label=v, criterion_id=CRITERION) for i, v in enumerate(verdicts)]


def test_a_label_proxy_is_refused_over_every_trace_read_even_when_one_is_judged() -> None:
    traces, labels = _labelled_traces()
    by_id = {t.id: t for t in traces}
    with pytest.raises(InputError, match="metadata.checked"):
        judge_prompts([(spec(), traces[:1])], labels=labels, traces_by_id=by_id)
    assert len(judge_prompts([(spec(), traces[:1])], labels=labels)) == 1  # one trace alone proves nothing


def test_each_spec_is_judged_on_its_own_traces_with_the_cache_closed_after(tmp_path) -> None:
    traces = [leasing_trace(f"t{i}", reply=f"The pet fee is 300 dollars per pet. item=t{i}") for i in range(3)]
    other = spec(id="other")

    def reply(messages, schema, index):
        return json.dumps(judge_output("pass", "x"))

    provider = ScriptedProvider(reply)
    summary = judge_traces([(spec(), traces), (other, traces[1:2])], provider, tmp_path / "v.jsonl",
                           cache=tmp_path / "c.sqlite", progress=False)
    assert summary.items == 4 and len(provider.calls) == 4
    verdicts = [json.loads(line) for line in (tmp_path / "v.jsonl").read_text().splitlines()]
    assert [(v["criterionId"], v["traceId"]) for v in verdicts] == \
        [(CRITERION, "t0"), (CRITERION, "t1"), (CRITERION, "t2"), ("other", "t1")]
    # a pass with no ref is not supported by the trace: verified down to uncertain
    assert {v["result"] for v in verdicts} == {"uncertain"}
    again = ScriptedProvider(reply)
    judge_traces([(spec(), traces)], again, tmp_path / "v2.jsonl", cache=tmp_path / "c.sqlite", progress=False)
    assert again.calls == []  # the replies were cached: a new run (another output) makes no call
