"""`evalkit dataset interview`: dimensions proposed from trace metadata, seed tuples confirmed, seeds written as
cases; the same interview from a terminal (a pty) and from an answers file."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from evalkit.cli.main import main
from evalkit.errors import InputError
from evalkit.suite import read_dataset, run_interview

ROWS = [("refund", "gold", True, "Refund my blender from ORD-1, it broke"),
        ("refund", "gold", False, "I want my money back for the kettle ORD-2"),
        ("refund", "basic", False, "Please refund order ORD-3, wrong colour"),
        ("status", "basic", False, "Where is ORD-4?"),
        ("status", "basic", False, "Has ORD-5 shipped yet"),
        ("status", "gold", True, "ORD-6 is late again, where is it")]


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A subject with traces whose metadata carries intent, tier, a flag and a per-trace id; no suite yet."""
    rows = [{"id": f"t{i}", "input": text, "observations": [],
             "metadata": {"intent": intent, "tier": tier, "urgent": urgent, "order": f"ORD-{i}"}}
            for i, (intent, tier, urgent, text) in enumerate(ROWS, 1)]
    (tmp_path / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    subject = tmp_path / "subject.yaml"
    subject.write_text("name: shop-bot\ntraces: traces.jsonl\nnotebooks: [00_overview]\n")
    return subject


def _answers(folder: Path, obj: dict) -> Path:
    path = folder / "answers.yaml"
    path.write_text(yaml.safe_dump(obj))
    return path


def test_an_answers_file_runs_the_interview_and_writes_seed_cases(shop, capsys):
    answers = _answers(shop.parent, {
        "dimensions": [{"name": "intent", "description": "What the customer wants."},   # values as proposed
                       {"name": "tier", "values": ["basic", "gold"]}],
        "seeds": [{"tuple": {"intent": "refund", "tier": "gold"}},                      # the trace's message
                  {"tuple": {"intent": "status", "tier": "basic"}, "query": "Where is my parcel ORD-99?"}]})
    out = shop.parent / "dataset.json"
    assert main(["dataset", "interview", str(shop), "--answers", str(answers), "--out", str(out)]) == 0
    assert "2 seed case(s) added" in capsys.readouterr().out
    suite = read_dataset(out)
    assert [(d.name, d.values) for d in suite.dimensions] == [("intent", ["refund", "status"]),
                                                              ("tier", ["basic", "gold"])]
    assert suite.dimensions[0].description == "What the customer wants." and suite.version == 1
    assert [(c.tuple, c.query, c.source, c.selected_by) for c in suite.cases] == [
        ({"intent": "refund", "tier": "gold"}, "Refund my blender from ORD-1, it broke", "seed", "interview"),
        ({"intent": "status", "tier": "basic"}, "Where is my parcel ORD-99?", "seed", "interview")]
    assert main(["dataset", "check", str(out)]) == 0


def test_what_is_proposed_comes_from_the_metadata_ids_and_free_text_are_not(shop):
    from evalkit.suite import propose_dimensions, propose_seeds, summarise_traces
    from evalkit.traces import iter_traces

    summary = summarise_traces(iter_traces(shop.parent / "traces.jsonl"))
    proposed = {p.name: p for p in propose_dimensions(None, summary)}
    assert set(proposed) == {"intent", "tier", "urgent"}            # order: 6 values on 6 traces: an id
    assert proposed["intent"].values == ["refund", "status"] and proposed["intent"].counts == {"refund": 3, "status": 3}
    assert not proposed["urgent"].keep_by_default                   # a true/false flag is asked, default no
    seeds = propose_seeds([("intent", ["refund", "status"]), ("tier", ["basic", "gold"])], summary,
                          [{"intent": "status", "tier": "basic"}], limit=5)
    assert [(s.tuple, s.traces, s.example_trace) for s in seeds] == [
        ({"intent": "refund", "tier": "gold"}, 2, "t1"), ({"intent": "refund", "tier": "basic"}, 1, "t3"),
        ({"intent": "status", "tier": "gold"}, 1, "t6")]             # status/basic is in the suite already


@pytest.mark.parametrize(("answers", "where", "says"), [
    ({"dimensions": [{"name": "channel"}]}, "dimensions[0].values", "was not proposed"),
    ({"dimensions": [{"name": "intent"}], "seeds": [{"tuple": {"intent": "cancel"}}]}, "seeds[0].tuple",
     "'cancel' is not a value of intent"),
    ({"dimensions": [{"name": "intent"}, {"name": "tier"}], "seeds": [{"tuple": {"intent": "refund"}}]},
     "seeds[0].tuple", "missing: tier"),
    ({"dimensions": [{"name": "intent", "values": ["refund"]}], "seeds": [{"tuple": {"intent": "refund"}}],
      "extra": 1}, "extra", "unknown field"),
])
def test_a_bad_answer_is_located(shop, answers, where, says):
    with pytest.raises(InputError) as caught:
        run_interview(shop, answers=_answers(shop.parent, answers), out=shop.parent / "dataset.json")
    assert caught.value.path == where and says in str(caught.value), caught.value.render()
    assert not (shop.parent / "dataset.json").exists()


def test_a_suite_only_grows_a_used_value_cannot_go(shop):
    out = shop.parent / "dataset.json"
    run_interview(shop, answers=_answers(shop.parent, {"dimensions": [{"name": "intent"}],
                                                   "seeds": [{"tuple": {"intent": "status"}}]}), out=out)
    before = out.read_bytes()
    with pytest.raises(InputError, match="value 'status' of 'intent' is used by case"):
        run_interview(shop, answers=_answers(shop.parent, {"dimensions": [{"name": "intent", "values": ["refund"]}]}),
                  out=out)
    assert out.read_bytes() == before


def _typed(lines: list[str]):
    said: list[str] = []

    def ask(question: str) -> str:
        said.append(question)
        if not lines:
            raise EOFError
        return lines.pop(0)

    return ask, said


def test_the_terminal_walk_proposes_asks_and_saves_replayable_answers(shop, tmp_path):
    ask, said = _typed(["", "", "",                                # intent: kept, values as listed, no description
                        "", "", "tier of the customer",            # tier
                        "",                                        # urgent: a flag, default no
                        "",                                        # no other dimension
                        "", "", "y", "", "n", "n",                 # 4 proposed seeds: keep, keep, no, no
                        "intent=status, tier=basic", "Status of ORD-77 please", "",   # one of my own
                        ""])                                       # write
    out, saved = shop.parent / "dataset.json", tmp_path / "saved.json"
    done = run_interview(shop, ask=ask, say=lambda text: said.append(text), out=out, save_answers=saved)
    assert done.written and [(c.tuple, c.query) for c in done.dataset.cases] == [
        ({"intent": "refund", "tier": "gold"}, "Refund my blender from ORD-1, it broke"),
        ({"intent": "status", "tier": "basic"}, "Where is ORD-4?"),
        ({"intent": "status", "tier": "basic"}, "Status of ORD-77 please")]
    assert any("values: refund, status  (traces: refund 3, status 3)" in line for line in said)
    again = tmp_path / "again"
    again.mkdir()
    shutil.copy(shop, again / "subject.yaml")
    shutil.copy(shop.parent / "traces.jsonl", again / "traces.jsonl")
    run_interview(again / "subject.yaml", answers=saved, out=again / "dataset.json")
    assert (again / "dataset.json").read_bytes() == out.read_bytes()   # the saved answers replay the session


def test_input_that_ends_early_writes_nothing(shop):
    ask, _ = _typed(["", ""])
    with pytest.raises(InputError, match="the input ended before the interview did"):
        run_interview(shop, ask=ask, say=lambda text: None, out=shop.parent / "dataset.json")
    assert not (shop.parent / "dataset.json").exists()


def test_without_a_terminal_the_command_asks_for_an_answers_file(shop, capsys):
    assert main(["dataset", "interview", str(shop), "--out", str(shop.parent / "dataset.json")]) == 1
    assert "needs a terminal to ask in, or --answers FILE" in capsys.readouterr().err


@pytest.mark.slow
def test_a_terminal_session_in_a_pty_and_its_answers_file_write_the_same_suite(shop, tmp_path):
    pexpect = pytest.importorskip("pexpect")
    folder = shop.parent
    child = pexpect.spawn(sys.executable, ["-m", "evalkit.cli", "dataset", "interview", "subject.yaml", "--out",
                                           "dataset.json", "--save-answers", "answers.yaml"],
                          cwd=str(folder), encoding="utf-8", timeout=60)
    for expect, answer in [("Keep intent", ""), ("Values", ""), ("describe", "What the customer wants."),
                           ("Keep tier", ""), ("Values", "basic, gold"), ("describe", ""),
                           ("Keep urgent", ""), ("Another dimension", ""),
                           ("Keep it as a seed", ""), ("Query", ""), ("Keep it as a seed", "n"),
                           ("Keep it as a seed", "y"), ("Query", "Refund the red kettle from ORD-3, please."),
                           ("Keep it as a seed", "n"),
                           ("Another seed tuple", "intent=refund, tier=silver"), ("not a value of tier", None),
                           ("Another seed tuple", "intent=status, tier=basic"), ("query", "Status of ORD-77?"),
                           ("Another seed tuple", ""), ("Write 2 dimension", "")]:
        child.expect(expect)
        if answer is not None:
            child.sendline(answer)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    suite = read_dataset(folder / "dataset.json")
    assert [(c.tuple["intent"], c.tuple["tier"], c.query) for c in suite.cases] == [
        ("refund", "gold", "Refund my blender from ORD-1, it broke"),
        ("refund", "basic", "Refund the red kettle from ORD-3, please."), ("status", "basic", "Status of ORD-77?")]
    assert [d.values for d in suite.dimensions] == [["refund", "status"], ["basic", "gold"]]
    again = tmp_path / "ci"
    again.mkdir()
    for name in ("subject.yaml", "traces.jsonl", "answers.yaml"):
        shutil.copy(folder / name, again / name)
    assert main(["dataset", "interview", str(again / "subject.yaml"), "--answers", str(again / "answers.yaml"),
                 "--out", str(again / "dataset.json")]) == 0
    assert (again / "dataset.json").read_bytes() == (folder / "dataset.json").read_bytes()


def test_the_sample_interview_runs_from_an_answers_file(tmp_path, capsys):
    sample = Path(__file__).resolve().parents[2] / "data" / "sample"
    for name in ("subject.yaml", "dataset.json", "traces.jsonl", "human-labels.jsonl", "criterion-verdicts.jsonl",
                 "eval-matrix.yaml", "expected-flow.json", "behavior-tree.json", "annotations.jsonl",
                 "failure-modes.yaml", "agent-spec.yaml", "criterion-verdicts.prompt-v1.jsonl",
                 "criterion-verdicts.prompt-v2.jsonl", "draft-modes.yaml"):
        shutil.copy(sample / name, tmp_path / name)
    answers = _answers(tmp_path, {"dimensions": [{"name": "intent"}, {"name": "customer_tier"}, {"name": "channel"}],
                                  "seeds": [{"tuple": {"intent": "complaint", "customer_tier": "premium",
                                                       "channel": "email"}}]})
    assert main(["dataset", "interview", str(tmp_path / "subject.yaml"), "--answers", str(answers)]) == 0
    assert "1 seed case(s) added, 0 near-duplicate(s) dropped; version 2" in capsys.readouterr().out
    suite = read_dataset(tmp_path / "dataset.json")
    added = suite.cases[-1]
    assert added.source == "seed" and added.query.startswith("Subject: Complaint")   # a real trace's message
    assert [d.values for d in suite.dimensions] == [d.values for d in read_dataset(sample / "dataset.json").dimensions]
