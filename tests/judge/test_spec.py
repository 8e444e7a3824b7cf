"""Reading judge specs from YAML files: strict, located errors, one spec per criterion."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.io import InputError
from evalkit.judge import read_judge_specs

TWO_SPECS = """\
id: all_responses_substantiated
criterion: Every factual statement the assistant makes is backed by a tool output.
pass: Every claim is backed.
fail: One claim is not backed.
terms: [the pet fee, {text: a tool result, anyOf: [getCommunitiesInformation], obs: m2}]
judge: {provider: openai, model: gpt-4.1-2025-04-14, temperature: 0, base_url: http://localhost:8000/v1}
---
id: tour_booked_only_when_confirmed
criterion: The assistant says a tour is booked only after the booking tool confirms it.
pass: Every booking claim follows a confirmation.
fail: A booking is claimed with no confirmation.
input:
  trace: [input, output]
  observations: {types: [GENERATION, TOOL]}
  fields: [output]
"""


def test_reads_every_document_with_its_line(tmp_path: Path) -> None:
    f = tmp_path / "judges.yaml"
    f.write_text(TWO_SPECS, encoding="utf-8")
    first, second = read_judge_specs(f)
    assert (first.id, second.id) == ("all_responses_substantiated", "tour_booked_only_when_confirmed")
    assert first.pass_definition == "Every claim is backed." and first.fail_definition == "One claim is not backed."
    assert [t.text for t in first.terms] == ["the pet fee", "a tool result"]
    assert first.terms[0].spellings() == ["the pet fee"]
    assert first.terms[1].spellings() == ["getCommunitiesInformation"] and first.terms[1].obs == "m2"
    assert first.judge is not None and first.judge.base_url == "http://localhost:8000/v1"
    assert first.judge.temperature == 0
    assert second.judge is None and second.input.fields == ["output"]
    assert first.input.trace == ["name", "input", "output", "metadata"]  # the whole trace by default
    assert first.source == (str(f), 1)
    assert second.source[1] == TWO_SPECS.splitlines().index("id: tour_booked_only_when_confirmed") + 1


def test_duplicate_criterion_names_both_lines(tmp_path: Path) -> None:
    f = tmp_path / "judges.yaml"
    f.write_text(TWO_SPECS.replace("tour_booked_only_when_confirmed", "all_responses_substantiated"))
    with pytest.raises(InputError) as info:
        read_judge_specs(f)
    message = str(info.value)
    assert message.startswith(f"{f}:") and "id: criterion 'all_responses_substantiated' already has a spec" in message
    assert "(line 1)" in message


@pytest.mark.parametrize(("change", "field", "words"), [
    (("temperature: 0", "temperature: 0.7"), "judge.temperature", "less than or equal to 0"),
    (("pass: Every claim is backed.\n", ""), "pass", "required field is missing"),
    (("terms:", "term:"), "term", "unknown field"),
    (("fields: [output]", "fields: [output, output]"), "input.fields", "listed once"),
    (("types: [GENERATION, TOOL]", "types: [LLM]"), "input.observations.types[0]", "'LLM'"),
])
def test_bad_spec_is_one_located_error(tmp_path: Path, change: tuple[str, str], field: str, words: str) -> None:
    f = tmp_path / "judges.yaml"
    f.write_text(TWO_SPECS.replace(*change, 1))
    with pytest.raises(InputError) as info:
        read_judge_specs(f)
    assert info.value.file == str(f) and info.value.path == field
    assert words in info.value.message
    assert info.value.line is not None


def test_example_listed_twice_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "judge-spec.yaml"
    example = "  - {trace: t-1, label: pass, critique: fine}\n"
    f.write_text(TWO_SPECS.split("---")[0] + "examples:\n" + example + example)
    with pytest.raises(InputError) as info:
        read_judge_specs(f)
    assert info.value.path == "examples[1].trace" and "'t-1' is already an example" in info.value.message


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    f = tmp_path / "judges.yaml"
    f.write_text("# nothing yet\n")
    with pytest.raises(InputError, match="no judge spec found"):
        read_judge_specs(f)


def test_subject_lists_its_judge_specs(tmp_path: Path) -> None:
    from evalkit.pipeline import load_subject

    (tmp_path / "traces.jsonl").write_text("")
    subject = tmp_path / "subject.yaml"
    subject.write_text("name: leasing\ntraces: traces.jsonl\njudges: [judges/substantiated.yaml]\n"
                       "notebooks: [00_overview]\n")
    with pytest.raises(InputError) as info:
        load_subject(subject)
    assert info.value.path == "judges[0]" and "input file not found: judges/substantiated.yaml" in info.value.message
    (tmp_path / "judges").mkdir()
    (tmp_path / "judges" / "substantiated.yaml").write_text(TWO_SPECS)
    resolved = load_subject(subject)
    specs = read_judge_specs(resolved.resolve(resolved.subject.judges[0]))
    assert [s.id for s in specs] == ["all_responses_substantiated", "tour_booked_only_when_confirmed"]


def test_a_spec_without_a_clear_pass_a_clear_fail_and_a_borderline_example_is_warned_about() -> None:
    from evalkit.judge import example_gaps, example_warning
    from tests.judge.traces import spec

    assert example_gaps(spec()) == ["no clear pass example", "no clear fail example",
                                    "no borderline example (borderline: true)"]
    ex = [{"trace": "a", "label": "pass", "critique": "c"}, {"trace": "b", "label": "fail", "critique": "c"}]
    assert example_gaps(spec(examples=ex)) == ["no borderline example (borderline: true)"]
    full = spec(examples=[*ex, {"trace": "c", "label": "fail", "critique": "c", "borderline": True}])
    assert example_gaps(full) == [] and example_warning(full) is None
    only_borderline = spec(examples=[{"trace": "c", "label": "pass", "critique": "c", "borderline": True}])
    assert example_gaps(only_borderline) == ["no clear pass example", "no clear fail example"]
    assert "one clear pass, one clear fail and one borderline example" in example_warning(spec())
