"""A label kept in metadata under a name that does not say so is found from the labels, and refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.cli.main import main
from evalkit.contracts.labels import HumanLabel
from evalkit.io import InputError
from evalkit.judge import check_label_proxies, label_proxies
from tests.judge.traces import leasing_trace, spec, write_jsonl

CRITERION = "grounded-claims"
VERDICTS = ["pass"] * 12 + ["fail"] * 8


def _traces(field_values: dict[str, list]) -> list:
    """Twenty traces t0..t19, each with the metadata ``{field: values[i]}``."""
    return [leasing_trace(f"t{i}", metadata={k: v[i] for k, v in field_values.items()}) for i in range(20)]


def _labels(verdicts=VERDICTS, criterion=CRITERION) -> list[HumanLabel]:
    return [HumanLabel(trace_id=f"t{i}", label=v, criterion_id=criterion) for i, v in enumerate(verdicts)]


def _spec(**changes):
    return spec(id=CRITERION, **changes)


def test_a_renamed_label_is_found_by_its_agreement_with_the_labels() -> None:
    checked = [v == "pass" for v in VERDICTS]
    checked[0] = False  # one trace where the field and the reviewer disagree: 19 of 20
    inverse = [v == "fail" for v in VERDICTS]  # a field true on the failures gives the label as well
    traces = _traces({"all_ok": checked, "needs_followup": inverse, "community": ["Oak Park", "Elm"] * 10,
                      "session": [f"s-{i}" for i in range(20)], "note": ["call back"] * 20})
    proxies = label_proxies(_spec(), traces, _labels())
    assert [(p.field, p.agreeing, p.labelled) for p in proxies] == [("all_ok", 19, 20), ("needs_followup", 20, 20)]
    assert proxies[0].describe() == "metadata.all_ok (gives the label on 19 of 20 labelled traces)"


def test_a_field_that_gives_the_label_less_often_is_shown() -> None:
    checked = [v == "pass" for v in VERDICTS]
    checked[0] = checked[1] = False  # 18 of 20: below 95%
    assert label_proxies(_spec(), _traces({"all_ok": checked}), _labels()) == []


def test_unique_values_never_predict_and_a_value_shared_by_two_does() -> None:
    """Leave one out: a value seen once predicts nothing (ids, free text); seen twice, the other trace decides."""
    pairs = [f"v{i // 2}" for i in range(20)]  # t0,t1 share v0, ... and VERDICTS pair up: 12 pass, 8 fail
    assert [p.field for p in label_proxies(_spec(), _traces({"pair": pairs}), _labels())] == ["pair"]
    assert label_proxies(_spec(), _traces({"id": [f"x{i}" for i in range(20)]}), _labels()) == []


@pytest.mark.parametrize("verdicts", [["pass"] * 18 + ["fail"] * 2, ["pass"] * 5 + ["fail"] * 4])
def test_too_few_labelled_traces_or_too_few_of_a_verdict_prove_nothing(verdicts) -> None:
    traces = _traces({"all_ok": [v == "pass" for v in verdicts] + [True] * (20 - len(verdicts))})
    assert label_proxies(_spec(), traces, _labels(verdicts)) == []


def test_only_this_criterion_s_labels_count_and_general_ones_fill_in() -> None:
    traces = _traces({"all_ok": [v == "pass" for v in VERDICTS]})
    assert label_proxies(_spec(), traces, _labels(criterion="another")) == []
    assert [p.field for p in label_proxies(_spec(), traces, _labels(criterion=None))] == ["all_ok"]
    # A label for this criterion wins over a general one on the same trace.
    flipped = [HumanLabel(trace_id=f"t{i}", label="fail" if v == "pass" else "pass") for i, v in enumerate(VERDICTS)]
    assert label_proxies(_spec(), traces, flipped + _labels())[0].agreeing == 20
    deferred = [HumanLabel(trace_id=f"t{i}", label="defer", criterion_id=CRITERION) for i in range(20)]
    assert label_proxies(_spec(), traces, deferred) == []


def test_a_field_the_spec_names_is_shown_as_chosen() -> None:
    traces = _traces({"all_ok": [v == "pass" for v in VERDICTS]})
    named = _spec(input={"trace": ["input", "output", "metadata.all_ok"]})
    assert label_proxies(named, traces, _labels()) == []
    with pytest.raises(InputError) as info:
        check_label_proxies(_spec(), traces, _labels())
    assert info.value.path == "input"
    assert "metadata.all_ok (gives the label on 20 of 20 labelled traces) with the whole metadata" in info.value.message
    assert "input.trace: [input, output, metadata.KEY]" in info.value.message


SPEC = f"""\
id: {CRITERION}
criterion: Every fee the assistant states is backed by a tool output.
pass: Every fee stated appears in a tool output of the trace.
fail: A fee is stated that no tool output contains.
"""


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    traces = _traces({"all_ok": [v == "pass" for v in VERDICTS], "community": ["Oak Park"] * 20})
    spec_path = tmp_path / "judges.yaml"
    spec_path.write_text(SPEC, encoding="utf-8")
    return {"traces": write_jsonl(tmp_path / "traces.jsonl", [t.to_json_obj() for t in traces]), "spec": spec_path,
            "labels": write_jsonl(tmp_path / "labels.jsonl", [lb.to_json_obj() for lb in _labels()])}


def test_judge_prompt_and_run_refuse_with_the_labels_and_say_which_field(files, tmp_path, capsys,
                                                                         monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    common = ["--spec", str(files["spec"]), "--traces", str(files["traces"]), "--labels", str(files["labels"])]
    assert main(["judge", "prompt", "--trace", "t3", *common]) == 1
    err = capsys.readouterr().err
    assert f"{files['spec']}:1: input: the judge would be shown metadata.all_ok (gives the label on 20 of 20" in err
    # Before any call: no server, no credentials needed to be refused.
    out = tmp_path / "verdicts.jsonl"
    assert main(["judge", "run", *common, "--out", str(out), "--provider", "openai", "--model", "m",
                 "--base-url", "http://127.0.0.1:9/v1", "--limit", "2"]) == 1
    assert "metadata.all_ok (gives the label on 20 of 20" in capsys.readouterr().err and not out.exists()
    # On a cluster too, before it starts: the labelled traces are read for the check.
    assert main(["judge", "run", *common, "--out", str(out), "--provider", "openai", "--model", "m",
                 "--base-url", "http://127.0.0.1:9/v1", "--workers", "2"]) == 1
    assert "metadata.all_ok (gives the label on 20 of 20" in capsys.readouterr().err and not out.exists()
    # Without the labels, the name says nothing: the prompt is shown (the check needs the labels).
    assert main(["judge", "prompt", "--trace", "t3", "--spec", str(files["spec"]), "--traces",
                 str(files["traces"])]) == 0
    assert '"all_ok":true' in capsys.readouterr().out.replace(" ", "")  # t3 passes


def test_a_scorecard_s_judge_run_refuses_before_any_call(tmp_path) -> None:
    from evalkit.checks import batch_judge, route
    from tests.checks.test_router import criterion, matrix

    class NoCalls:
        name, model = "scripted", "m"

        def __getattr__(self, attr):
            raise AssertionError(f"the provider was used ({attr}) before the input was checked")

    routed = route(matrix(criterion(CRITERION, "llm-judge")))
    traces = _traces({"all_ok": [v == "pass" for v in VERDICTS]})
    with pytest.raises(InputError, match=r"metadata\.all_ok \(gives the label on 20 of 20"):
        batch_judge(routed, traces, {CRITERION: _spec()}, NoCalls(), tmp_path / "v.jsonl", labels=_labels())
    assert not (tmp_path / "v.jsonl").exists()


def test_a_proxy_nested_in_the_metadata_is_found_where_it_sits() -> None:
    """tau-bench keeps its outcome twice, the second time as info.reward_info.reward."""
    checked = [{"task": {"id": i}, "reward_info": {"value": v == "pass"}} for i, v in enumerate(VERDICTS)]
    proxies = label_proxies(_spec(), _traces({"info": checked}), _labels())
    assert [p.describe() for p in proxies] == [
        "metadata.info.reward_info (gives the label on 20 of 20 labelled traces)",
        "metadata.info.reward_info.value (gives the label on 20 of 20 labelled traces)"]


def test_a_proxy_in_the_observations_metadata_is_found_when_the_judge_is_shown_it() -> None:
    traces = _traces({})
    for trace, verdict in zip(traces, VERDICTS, strict=True):
        trace.observations[1].metadata = {"checked": verdict == "pass", "call": trace.id}
    (proxy,) = label_proxies(_spec(), traces, _labels())
    assert proxy.describe() == "observation metadata.checked (gives the label on 20 of 20 labelled traces)"
    assert label_proxies(_spec(input={"fields": ["input", "output"]}), traces, _labels()) == []
