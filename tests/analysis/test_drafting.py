"""Drafting failure modes from notes: the prompt, the reply checked, unplaced notes kept, the draft recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.analysis import draft_modes, draft_prompt, draft_yaml, open_notes, read_draft, read_store
from evalkit.cli.main import main
from evalkit.errors import InputError
from evalkit.judge import ScriptedProvider
from evalkit.traces import load
from tests.analysis.analysis_builders import make_trace, note

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


def _notes():
    return [note("t1", "fail", text="Answer ignores the kb_search result.", first="respond"),
            note("t2", "fail", text="Refund policy in the answer is made up.", minute=1),
            note("t3", "pass", text="Fine.", minute=2),
            note("t4", "fail", text="Levi testing", minute=3)]


def _reply(modes, unplaced=()):
    return json.dumps({"modes": modes, "unplaced": list(unplaced)})


def _mode(name, notes):
    return {"name": name, "definition": f"{name} in the trace.", "include": [f"{name}"], "exclude": [],
            "notes": notes}


def test_the_sample_drafts_recover_the_injected_failure_kinds_from_its_notes(tmp_path, capsys):
    out = tmp_path / "draft.yaml"
    code = main(["analysis", "draft-modes", str(SAMPLE / "annotations.jsonl"), "--traces", str(SAMPLE / "traces.jsonl"),
                 "--subject", "support-agent", "--provider", "replay", "--cassette", str(SAMPLE / "draft-cassette.jsonl"),
                 "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    assert out.read_bytes() == (SAMPLE / "draft-modes.yaml").read_bytes()  # the sample's draft is the command's
    draft = read_draft(out)
    assert draft.drafted_by.model == "sim-drafter-2026-01" and draft.drafted_by.prompt_digest.startswith("sha256:")
    traces = {t.id: t for t in load(SAMPLE / "traces.jsonl")}
    noted = {n.trace_id for n in open_notes(read_store(SAMPLE / "annotations.jsonl").annotations)}
    kinds: dict[str, set[str]] = {}
    for trace_id in noted:
        for kind in traces[trace_id].metadata["injected_failures"]:
            kinds.setdefault(kind, set()).add(trace_id)
    assert len(kinds) == 4
    matched = {}
    for kind, truth in kinds.items():
        best = max(draft.modes, key=lambda m: len(truth & set(m.examples)) / len(truth | set(m.examples)))
        jaccard = len(truth & set(best.examples)) / len(truth | set(best.examples))
        assert jaccard >= 0.9, (kind, best.id, sorted(truth ^ set(best.examples)))
        matched[kind] = best.id
    assert len(set(matched.values())) == 4  # four kinds, four different drafted modes
    assert draft.unplaced == []


def test_the_prompt_numbers_each_note_with_its_trace_and_excerpt_and_leaves_pass_notes_out():
    trace = make_trace("t1", answer="Per our policy, refunds within 90 days.")
    messages = draft_prompt(open_notes(_notes(), {"t1": trace}))
    user = messages[1]["content"]
    assert "[1] trace t1 (ana, fail): Answer ignores the kb_search result." in user
    assert "excerpt (respond output): " in user and "90 days" in user
    assert "Fine." not in user  # a pass note says nothing failed
    assert "[3] trace t4 (ana, fail): Levi testing" in user
    assert "Never force a note into a mode" in messages[0]["content"]


def test_a_reply_naming_an_unknown_note_is_sent_back_once_and_unplaced_notes_are_listed_not_forced(tmp_path):
    provider = ScriptedProvider([_reply([_mode("Dropped tool result", [1, 9])]),
                                 _reply([_mode("Dropped tool result", [1]), _mode("Made-up policy", [2])])],
                                model="m-1")
    draft = draft_modes(_notes(), provider, subject="shop", journal=tmp_path / "j.jsonl")
    assert len(provider.calls) == 2
    assert "not note numbers 1 to 3" in provider.calls[1][0][-1]["content"]
    assert [(m.id, m.examples) for m in draft.modes] == [("dropped-tool-result", ["t1"]), ("made-up-policy", ["t2"])]
    [left] = draft.unplaced
    assert (left.trace_id, left.note) == ("t4", "Levi testing")
    assert left.reason == "the model neither placed this note nor listed it as unplaced"
    assert draft.drafted_by.model == "m-1" and draft.drafted_by.temperature == 0 and draft.drafted_by.notes == 3


def test_a_rerun_takes_the_reply_from_the_journal_and_writes_the_same_bytes(tmp_path):
    reply = _reply([_mode("Dropped tool result", [1])], [{"note": 3, "reason": "a test call, not a failure"}])
    first = draft_modes(_notes(), ScriptedProvider([reply]), subject="shop", journal=tmp_path / "j.jsonl")
    again = draft_modes(_notes(), ScriptedProvider([]), subject="shop", journal=tmp_path / "j.jsonl")  # no call
    assert draft_yaml(first) == draft_yaml(again)
    assert [u.reason for u in again.unplaced] == ["the model neither placed this note nor listed it as unplaced",
                                                 "a test call, not a failure"]


def test_no_valid_draft_after_the_correction_is_an_error_naming_the_model():
    provider = ScriptedProvider(["not json", "{\"modes\": 3}"], model="tiny")
    with pytest.raises(InputError, match="fake/tiny gave no valid draft: invalid reply after one correction"):
        draft_modes(_notes(), provider, subject="shop")


def test_no_notes_is_an_error_saying_what_to_write():
    with pytest.raises(InputError, match="no notes to draft failure modes from"):
        draft_modes([note("t1", "pass", text="ok")], ScriptedProvider([]), subject="shop")


def test_a_draft_is_not_a_taxonomy(tmp_path, capsys):
    out = tmp_path / "draft.yaml"
    draft = draft_modes(_notes(), ScriptedProvider([_reply([_mode("Dropped tool result", [1])])]), subject="s")
    out.write_text(draft_yaml(draft), encoding="utf-8")
    assert main(["review", "build", str(SAMPLE / "traces.jsonl"), "--taxonomy", str(out),
                 "--out", str(tmp_path / "r.html")]) != 0


def test_notes_in_batches_one_call_each_same_named_modes_joined_and_a_failed_batch_left_unplaced(tmp_path):
    notes = [*_notes(), note("t5", "fail", text="Answer ignores the order_lookup result.", minute=5)]
    replies = [_reply([_mode("Dropped tool result", [1]), _mode("Made-up policy", [2])]),
               "garbage", "still garbage"]  # the second batch (t4, t5): no valid reply after the correction
    provider = ScriptedProvider(replies, model="small")
    draft = draft_modes(notes, provider, subject="shop", notes_per_call=2, journal=tmp_path / "j.jsonl")
    assert len(provider.calls) == 3 and "[1] trace t4" in provider.calls[1][0][1]["content"]
    assert [(m.id, m.examples) for m in draft.modes] == [("dropped-tool-result", ["t1"]), ("made-up-policy", ["t2"])]
    assert [(u.trace_id, u.reason.split(":")[0]) for u in draft.unplaced] == [
        ("t4", "the model gave no valid draft for the batch of notes holding it"),
        ("t5", "the model gave no valid draft for the batch of notes holding it")]
    assert draft.drafted_by.calls == 2 and draft.drafted_by.notes == 4

    joined = draft_modes(notes, ScriptedProvider([_reply([_mode("Dropped tool result", [1])]),
                                                  _reply([_mode("dropped  tool result", [2])])]),
                         subject="shop", notes_per_call=2)
    assert [(m.id, m.examples) for m in joined.modes] == [("dropped-tool-result", ["t1", "t5"])]  # batch 2, note 2


def test_a_batch_that_cannot_fit_the_models_context_is_refused_without_a_call_and_its_notes_left_unplaced():
    notes = [*_notes(), note("t5", "fail", text="Answer ignores the order_lookup result. " * 60, minute=5)]
    provider = ScriptedProvider([_reply([_mode("Dropped tool result", [1]), _mode("Made-up policy", [2])])],
                                model="small")
    # about 800 tokens for t1, t2, t4 and 1,370 for t5 alone, each with a reply cap of 1,024
    draft = draft_modes(notes, provider, subject="shop", notes_per_call=3, context_window=2000)
    assert len(provider.calls) == 1  # the second batch (t5's long note) was counted and never sent
    assert [m.examples for m in draft.modes] == [["t1"], ["t2"]]
    assert draft.unplaced[-1].trace_id == "t5"
    assert "the prompt does not fit the model's context" in draft.unplaced[-1].reason
    with pytest.raises(InputError, match="gave no valid draft: the prompt does not fit.*--notes-per-call"):
        draft_modes(notes, ScriptedProvider([]), subject="shop", context_window=2000)
