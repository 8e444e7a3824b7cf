"""The judge prompt: four components in order, critique before verdict, train-only examples, same bytes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.io import InputError
from evalkit.judge import COMPONENTS, build_prompt, build_prompts, prompt_digest, read_judge_specs
from tests.judge.traces import labels, leasing_trace, spec

TRACE = leasing_trace("t-1")
PASS_EXAMPLE = leasing_trace("t-ex-pass", reply="Up to 2 pets per home.",
                             tool_output='{"pet_policy":{"max_pets":2,"breed_rules":"no aggressive breeds"}}')
FAIL_EXAMPLE = leasing_trace("t-ex-fail", reply="We waive the pet fee for cats.")
TRACES = {t.id: t for t in (TRACE, PASS_EXAMPLE, FAIL_EXAMPLE)}
EXAMPLES = [
    {"trace": "t-ex-pass", "label": "pass", "critique": "The two-pet limit is in the tool output."},
    {"trace": "t-ex-fail", "label": "fail", "critique": "No tool output mentions waiving the fee for cats.",
     "refs": [{"obs": "m3", "path": "output.content", "value": "We waive the pet fee for cats."}]},
]
TRAIN = labels(**{"t-ex-pass": ("pass", "train"), "t-ex-fail": ("fail", "train"), "t-1": ("pass", "test")})


def system_and_user(prompt) -> tuple[str, str]:
    (system, user) = prompt.messages
    assert (system["role"], user["role"]) == ("system", "user")
    return system["content"], user["content"]


def test_four_components_in_order() -> None:
    prompt = build_prompt(spec(examples=EXAMPLES), TRACE, labels=TRAIN, traces_by_id=TRACES)
    system, user = system_and_user(prompt)
    headings = [line for line in system.splitlines() if line.startswith("## ")]
    assert headings == list(COMPONENTS)
    at = [system.index(h) for h in COMPONENTS]
    assert at == sorted(at)
    task, definitions, examples, output = (system[a:b] for a, b in zip(at, [*at[1:], len(system)], strict=True))
    assert "Every factual statement the assistant makes is backed" in task
    assert "PASS: Every factual claim can be traced" in definitions
    assert "FAIL: At least one reply states a fee" in definitions
    assert "We waive the pet fee for cats." in examples and "no aggressive breeds" in examples  # rendered traces
    assert examples.index("No tool output mentions") < examples.index("Result: fail")  # critique, then label
    assert "Schema: " in output
    assert user.startswith("Judge this trace.\n\nTrace t-1\n")
    assert "Observation m2 (TOOL, name: getCommunitiesInformation)" in user
    assert "t-ex-fail" not in user and "Trace t-1" not in system  # the judged trace only in the user turn


def test_critique_is_asked_for_before_the_verdict() -> None:
    prompt = build_prompt(spec(), TRACE)
    system, _ = system_and_user(prompt)
    assert system.index("1. critique:") < system.index("4. result:") < system.index("6. blockedBy:")
    assert "Write it before you decide" in system
    assert list(prompt.schema["properties"])[:4] == ["critique", "refs", "assumptions", "result"]
    schema_text = system.split("Schema: ", 1)[1]
    assert schema_text.index('"critique"') < schema_text.index('"result"')  # inline schema keeps the order
    assert json.loads(schema_text) == prompt.schema


def test_no_examples_still_has_the_component() -> None:
    system, _ = system_and_user(build_prompt(spec(), TRACE))
    assert "## 3. Examples\nNo labelled examples are given" in system


@pytest.mark.parametrize("split", ["dev", "test"])
def test_example_from_dev_or_test_is_data_leakage(split: str) -> None:
    leaky = labels(**{"t-ex-pass": ("pass", "train"), "t-ex-fail": ("fail", split)})
    with pytest.raises(InputError) as info:
        build_prompt(spec(examples=EXAMPLES), TRACE, labels=leaky, traces_by_id=TRACES)
    assert info.value.path == "examples[1].trace"
    assert f"data leakage: few-shot example trace 't-ex-fail' is in the {split} split" in info.value.message


def test_leakage_error_names_the_spec_file(tmp_path: Path) -> None:
    f = tmp_path / "judge-spec.yaml"
    f.write_text(json.dumps(spec(examples=EXAMPLES).to_json_obj()))  # JSON is YAML
    (loaded,) = read_judge_specs(f)
    leaky = labels(**{"t-ex-pass": ("pass", "dev"), "t-ex-fail": ("fail", "train")})
    with pytest.raises(InputError) as info:
        build_prompt(loaded, TRACE, labels=leaky, traces_by_id=TRACES)
    assert str(info.value).startswith(f"{f}:1: examples[0].trace: data leakage: few-shot example trace 't-ex-pass' "
                                      "is in the dev split")


@pytest.mark.parametrize(("given", "words"), [
    (None, "need the human labels"),
    (labels(**{"t-ex-pass": ("pass", "train")}), "'t-ex-fail' has no human label"),
    ([*labels(**{"t-ex-pass": ("pass", "train")}), *labels(**{"t-ex-fail": ("fail", None)})], "has a label with no split"),
    (labels(**{"t-ex-pass": ("fail", "train"), "t-ex-fail": ("fail", "train")}), "labelled fail by a reviewer, not pass"),
])
def test_example_whose_split_is_unknown_is_refused(given, words: str) -> None:
    with pytest.raises(InputError, match=words):
        build_prompt(spec(examples=EXAMPLES), TRACE, labels=given, traces_by_id=TRACES)


def test_labels_of_other_criteria_do_not_count() -> None:
    other = [lab.model_copy(update={"criterion_id": "tone"}) for lab in TRAIN]
    with pytest.raises(InputError, match="has no human label for 'all_responses_substantiated'"):
        build_prompt(spec(examples=EXAMPLES), TRACE, labels=other, traces_by_id=TRACES)


def test_example_trace_must_be_given_and_its_refs_resolve() -> None:
    with pytest.raises(InputError, match="'t-ex-fail' is not among the traces given"):
        build_prompt(spec(examples=EXAMPLES), TRACE, labels=TRAIN, traces_by_id={"t-ex-pass": PASS_EXAMPLE})
    dead = [EXAMPLES[0], {**EXAMPLES[1], "refs": [{"obs": "m3", "path": "output.content", "value": "dogs"}]}]
    with pytest.raises(InputError) as info:
        build_prompt(spec(examples=dead), TRACE, labels=TRAIN, traces_by_id=TRACES)
    assert info.value.path == "examples[1].refs[0]" and "does not resolve" in info.value.message


def test_same_inputs_same_bytes_and_digest() -> None:
    build = lambda: build_prompt(spec(examples=EXAMPLES), TRACE, labels=TRAIN, traces_by_id=TRACES)  # noqa: E731
    first, second = build(), build()
    assert first.messages == second.messages and first.digest == second.digest
    assert first.digest == prompt_digest(first.messages, first.schema)
    assert first.digest.startswith("sha256:") and len(first.digest) == 71
    assert build_prompts(spec(examples=EXAMPLES), [TRACE], labels=TRAIN, traces_by_id=TRACES) == [first]
    other = build_prompt(spec(examples=EXAMPLES), leasing_trace("t-1", reply="Pets are free."), labels=TRAIN,
                         traces_by_id=TRACES)
    assert other.digest != first.digest
    reworded = build_prompt(spec(examples=EXAMPLES, fail="Any unsupported fee."), TRACE, labels=TRAIN,
                            traces_by_id=TRACES)
    assert reworded.digest != first.digest


@pytest.mark.slow
def test_digest_is_the_same_in_another_process(tmp_path: Path) -> None:
    here = build_prompt(spec(examples=EXAMPLES), TRACE, labels=TRAIN, traces_by_id=TRACES)
    script = ("from tests.judge.test_prompt import *\n"
              "p = build_prompt(spec(examples=EXAMPLES), TRACE, labels=TRAIN, traces_by_id=TRACES)\n"
              "print(p.digest)\n")
    root = Path(__file__).resolve().parents[2]
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=root, timeout=120,
                             env={**os.environ, "PYTHONHASHSEED": seed}, check=True)
        assert out.stdout.strip() == here.digest


def test_repeated_conversation_is_shown_once() -> None:
    _, user = system_and_user(build_prompt(spec(), TRACE))
    assert user.count("never invent fees, dates or policies") == 1
    assert "«same as m1 input[0]»" in user  # m3 re-sends the system message m1 already showed


def test_label_in_the_trace_is_never_shown() -> None:
    labelled = leasing_trace("t-1", metadata={"all_responses_substantiated": True, "source": "chat"})
    with pytest.raises(InputError) as info:
        build_prompt(spec(), labelled)
    assert "t-1 metadata.all_responses_substantiated" in info.value.message and info.value.path == "input"
    _, user = system_and_user(build_prompt(spec(input={"trace": ["input", "output"]}), labelled))
    assert "all_responses_substantiated" not in user


def test_a_label_kept_in_metadata_under_a_usual_name_is_never_shown() -> None:
    """Evaluation sets keep their ground truth beside the traces (hw3's `label`, `ground_truth`, ...)."""
    labelled = leasing_trace("t-1", metadata={"Label": "FAIL", "community": "Oak Park"})
    with pytest.raises(InputError) as info:
        build_prompt(spec(), labelled)  # the default selection shows the whole metadata
    assert info.value.path == "input" and "t-1 metadata.Label" in info.value.message
    assert "a label kept in metadata" in info.value.message and "metadata.KEY" in info.value.message
    with pytest.raises(InputError, match="t-1 metadata.label"):
        build_prompt(spec(input={"trace": ["input", "metadata.label"]}), leasing_trace("t-1", metadata={"label": 1}))


def test_a_label_in_an_observation_s_metadata_points_to_input_fields() -> None:
    labelled = leasing_trace("t-1")
    labelled.observations[1].metadata = {"ground_truth": "pass"}
    with pytest.raises(InputError) as info:
        build_prompt(spec(), labelled)
    assert "t-1 metadata" not in info.value.message and "m2 metadata.ground_truth" in info.value.message
    assert "leave observation metadata out of input.fields" in info.value.message
    chosen = {"fields": ["input", "output"]}
    assert "ground_truth" not in system_and_user(build_prompt(spec(input=chosen), labelled))[1]


def test_one_metadata_field_can_be_shown_alone_and_cited() -> None:
    from evalkit.contracts import CriterionVerdict
    from evalkit.judge import verify_verdict

    trace = leasing_trace("t-1", metadata={"label": "FAIL", "community": "Oak Park"})
    _, user = system_and_user(build_prompt(spec(input={"trace": ["input", "metadata.community"]}), trace))
    assert '  metadata.community: "Oak Park"' in user and "FAIL" not in user and "label" not in user
    verdict = CriterionVerdict(criterion_id="all_responses_substantiated", trace_id="t-1", result="pass",
                               confidence=0.9, critique="The community is named.",
                               refs=[{"obs": "t-1", "path": "metadata.community", "value": "Oak Park"}])
    assert verify_verdict(trace, verdict).result == "pass"  # the path the judge was shown resolves


@pytest.mark.parametrize(("fields", "message"), [
    (["metadata.a.b"], "must be one of name, input, output, metadata or metadata.KEY"),
    (["metadata."], "must be one of name, input, output, metadata or metadata.KEY"),
    (["inputs"], "got 'inputs'"),
    (["metadata", "metadata.a"], "metadata shows every metadata field already"),
])
def test_a_trace_field_the_judge_cannot_be_shown_is_refused_by_name(fields, message) -> None:
    with pytest.raises(ValueError, match=message):
        spec(input={"trace": fields})


def test_input_selection_limits_what_is_shown() -> None:
    chosen = {"trace": [], "observations": {"types": ["TOOL"]}, "fields": ["output"]}
    _, user = system_and_user(build_prompt(spec(input=chosen), TRACE))
    assert user.splitlines()[2:] == [
        "Observation m2 (TOOL, name: getCommunitiesInformation)",
        '  output: "{\\"pet_policy\\":{\\"fee\\":\\"300 dollars per pet\\",\\"max_pets\\":2}}"']


def test_unbound_term_gives_a_pre_verdict_and_no_call() -> None:
    prompt = build_prompt(spec(terms=["the pet fee", "the parking fee"]), TRACE)
    verdict = prompt.pre_verdict
    assert verdict is not None and verdict.result == "uncertain" and verdict.confidence == 0
    assert verdict.blocked_by is not None and verdict.blocked_by.kind == "factual-intent"
    assert verdict.blocked_by.text == "unbound term: 'the parking fee'"
    assert (verdict.criterion_id, verdict.trace_id) == ("all_responses_substantiated", "t-1")
    assert prompt.messages and prompt.digest  # the prompt is still recorded, only not sent
    assert build_prompt(spec(terms=["the pet fee"]), TRACE).pre_verdict is None


def test_pin_comes_from_the_spec() -> None:
    pinned = spec(judge={"provider": "anthropic", "model": "claude-sonnet-4-5-20250929"})
    prompt = build_prompt(pinned, TRACE)
    assert prompt.pin is not None and (prompt.pin.model, prompt.pin.temperature) == ("claude-sonnet-4-5-20250929", 0)
    assert build_prompt(spec(), TRACE).pin is None


def test_the_judge_digest_is_one_per_judge_while_the_prompt_digest_follows_the_trace():
    """A calibration is bound to the judge digest: the same on every trace, changed by any change to the judge."""
    other = TRACE.model_copy(update={"id": "tr-other", "output": "something else entirely"})
    a, b = build_prompts(spec(), [TRACE, other])
    assert a.digest != b.digest and a.judge_digest == b.judge_digest and a.judge_digest.startswith("sha256:")
    reworded = build_prompts(spec(fail="It answers without grounding in the policy at all."), [TRACE])[0]
    assert reworded.judge_digest != a.judge_digest


@pytest.mark.parametrize("key", ["true_label", "predicted_label", "llm_judge_label", "human_label_pass", "trueLabel",
                                 "Gold", "groundTruth", "ground-truth-answer", "annotations", "judge.verdict"])
def test_a_label_is_known_by_its_words_as_real_evaluation_sets_name_it(key) -> None:
    """hw3's predictions keep ``true_label`` and ``predicted_label``, its judge runs ``llm_judge_label``."""
    with pytest.raises(InputError, match=f"t-1 metadata.{key} "):
        build_prompt(spec(), leasing_trace("t-1", metadata={key: "PASS", "community": "Oak Park"}))


@pytest.mark.parametrize("key", ["reward", "scores", "success", "outcome", "passed", "is_correct", "last_success_state"])
def test_an_outcome_the_run_recorded_is_a_label_too(key) -> None:
    """tau-bench keeps ``reward``, Inspect ``scores``, hw5 ``last_success_state``: the answer, for a judge."""
    with pytest.raises(InputError, match=f"t-1 metadata.{key} "):
        build_prompt(spec(), leasing_trace("t-1", metadata={key: 1, "community": "Oak Park"}))


@pytest.mark.parametrize(("metadata", "path"), [
    ({"info": {"reward_info": {"reward": 0.0}}}, "metadata.info.reward_info"),
    ({"inspect": [{"scores": {"value": "C"}}]}, "metadata.inspect[0].scores"),
])
def test_an_outcome_nested_in_the_metadata_is_found_where_it_sits(metadata, path) -> None:
    with pytest.raises(InputError, match=re.escape(f"t-1 {path} ")):
        build_prompt(spec(), leasing_trace("t-1", metadata=metadata))


@pytest.mark.parametrize("key", ["labeled", "dietary_restriction", "successor", "labyrinth", "golden_hour"])
def test_keys_that_only_look_like_labels_are_shown(key) -> None:
    _, user = system_and_user(build_prompt(spec(), leasing_trace("t-1", metadata={key: "x"})))
    assert key in user


def test_reasons_and_notes_in_the_whole_metadata_are_shown_only_when_named() -> None:
    """The leasing set keeps the reviewer's Notes (with the axial code) and rationale beside each trace."""
    notes = {"Notes": "Did not invoke tool. Axial code: Did not invoke tool", "substantiation_rationale": "...",
             "community": "Oak Park"}
    with pytest.raises(InputError) as info:
        build_prompt(spec(), leasing_trace("t-1", metadata=notes))  # the default selection shows the whole metadata
    message = info.value.message
    assert "t-1 metadata.Notes, t-1 metadata.substantiation_rationale" in message and "reasons or notes" in message
    assert "metadata.KEY" in message and info.value.path == "input"
    # Named in the spec, a field is shown as chosen.
    _, user = system_and_user(build_prompt(spec(input={"trace": ["input", "metadata.Notes"]}),
                                           leasing_trace("t-1", metadata=notes)))
    assert "Axial code" in user and "substantiation_rationale" not in user


@pytest.mark.parametrize(("key", "held"), [("reasoning", True), ("reason", True), ("llm_feedback", True),
                                           ("critique", True), ("reasoning_effort", False), ("notebook", False),
                                           ("reasonable_default", False)])
def test_which_keys_count_as_reasons(key, held) -> None:
    trace = leasing_trace("t-1", metadata={key: "x"})
    if held:
        with pytest.raises(InputError, match=f"t-1 metadata.{key} "):
            build_prompt(spec(), trace)
    else:
        assert key in system_and_user(build_prompt(spec(), trace))[1]
