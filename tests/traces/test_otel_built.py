"""The OTel importer's speed paths give what the general ones give: observations and traces built
without validation equal the validated models, and the short path for collector times agrees with
``time_from_nanos`` and ``tree.start_key``."""

import random
from pathlib import Path

import pytest
from test_otel_streaming import TRACES, _line, _respelled

from evalkit.contracts.trace import Observation, Trace
from evalkit.traces import iter_traces
from evalkit.traces.otel_ids import BadField, plain_start, plain_time, time_from_nanos
from evalkit.traces.tree import start_key

FIXTURES = Path(__file__).parent / "fixtures"
OTEL_FIXTURES = ["anyagent_style.json", "jaeger.json", "openinference_spans.json", "otlp_genai.json",
                 "otlp_legacy.json", "otlp_two_traces.json", "tempo_batches.json"]


def _validated(model, built):
    return model.model_validate({name: getattr(built, name) for name in built.model_fields_set})


def _assert_same_as_validated(trace):
    for obs in trace.observations:
        valid = _validated(Observation, obs)
        assert obs == valid and repr(obs) == repr(valid)
        assert obs.model_fields_set == valid.model_fields_set
        assert [type(v) for v in obs.__dict__.values()] == [type(v) for v in valid.__dict__.values()]
        assert obs.to_json_obj() == valid.to_json_obj()
    valid = _validated(Trace, trace)
    assert trace == valid and trace.model_fields_set == valid.model_fields_set
    assert trace.to_json_obj() == valid.to_json_obj()


@pytest.mark.parametrize("name", OTEL_FIXTURES)
def test_built_observations_equal_validated_ones(name):
    traces = list(iter_traces(FIXTURES / name, "otel"))
    assert traces and all(t.observations for t in traces)
    for trace in traces:
        _assert_same_as_validated(trace)


def test_built_observations_of_every_instrumentation_equal_validated_ones(tmp_path):
    # GenAI, tools, OpenInference, legacy prompts, plain spans, Vercel, events, error status, both paths.
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(_line(TRACES[t]) + _line([_respelled(s) for s in TRACES[t + 1]])
                            for t in range(0, 24, 2)))
    traces = list(iter_traces(path, "otel"))
    assert len(traces) == 24
    levels = {o.level for t in traces for o in t.observations}
    assert levels == {None, "ERROR"}
    for trace in traces:
        _assert_same_as_validated(trace)


def _general(text):
    try:
        time = time_from_nanos(text, "t")
    except BadField:
        return None
    return None if time is None else (time, start_key(time))


def test_plain_times_agree_with_the_general_helpers():
    rng = random.Random(7)
    samples = ["0", "00", "1", "999", "1000", "999999999", "1000000000", "0001767225600123456789",
               "1767225600123456789", "253402300799999999999", "253402300800000000000", "9" * 40,
               "١٧٦٧٢٢٥٦٠٠١٢٣٤٥٦٧٨٩", "²", "12x", "", " 1767225600123456789"]
    samples += [str(rng.randrange(10 ** rng.randrange(1, 22))) for _ in range(3000)]
    for text in samples:
        expected = _general(text)
        if not text.isdigit():
            assert plain_start(text) is None and plain_time(text) is None, text
            continue
        assert plain_start(text) == expected, text
        assert plain_time(text) == (None if expected is None else expected[0]), text
