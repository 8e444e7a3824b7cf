"""Session-level judges: a spec with scope: session judges every turn of a conversation (grouped by a session id
in trace metadata) as one trace, its refs checked against the session, its verdicts calibrated like any other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli.main import main
from evalkit.contracts.judge import JudgeSpec
from evalkit.contracts.trace import Trace
from evalkit.errors import InputError
from evalkit.judge import build_prompts, session_traces
from tests.judge.servers import JudgeServer

SPEC = """\
id: remembers-the-order
criterion: Across the whole conversation, the agent keeps using the order number the customer gave first.
pass: Every later turn that names an order uses the customer's first order number.
fail: A later turn names another order number, or asks for the number again.
scope: session
sessionKey: conversation.id
input: {trace: [input, output], fields: [input, output]}
"""


def _turn(session: str, turn: int, second: int, text: str, answer: str, order: str) -> dict:
    tid = f"{session}-t{turn}"
    return {"id": tid, "name": "chat-turn", "input": text, "output": answer,
            "metadata": {"conversation": {"id": session}, "turn": turn},
            "observations": [                                   # every turn reuses the ids o1, o2
                {"id": "o1", "type": "TOOL", "name": "order_lookup", "input": {"order_id": order},
                 "startTime": f"2026-03-02T09:00:{second:02d}Z"},
                {"id": "o2", "type": "GENERATION", "name": "respond", "parentId": "o1", "output": answer,
                 "startTime": f"2026-03-02T09:00:{second + 1:02d}Z"}]}


def _conversations() -> list[dict]:
    """Three sessions of two turns, written out of order; s2's agent switches to another order in turn 2."""
    rows = []
    for n, session in enumerate(("s1", "s2", "s3")):
        second_order = "ORD-2" if session == "s2" else "ORD-1"
        rows.append(_turn(session, 2, 20 + n * 2, "And when will it arrive?", f"Order {second_order} arrives "
                          "Friday.", second_order))
        rows.append(_turn(session, 1, 2 + n * 2, "Where is ORD-1?", "Order ORD-1 has shipped.", "ORD-1"))
    return rows


def _traces() -> list[Trace]:
    return [Trace.model_validate(r) for r in _conversations()]


def test_turns_of_a_session_become_one_trace_in_order_with_ids_kept_apart():
    (s1, s2, s3) = session_traces(_traces(), "conversation.id")
    assert [s.id for s in (s1, s2, s3)] == ["s1", "s2", "s3"]
    assert s1.input == "Where is ORD-1?" and s1.output == "Order ORD-1 arrives Friday."   # first in, last out
    assert s1.metadata["session"]["turns"] == ["s1-t1", "s1-t2"]                        # by start time
    spans = [o for o in s1.observations if o.type == "SPAN"]
    assert [(o.id, o.input) for o in spans] == [("s1-t1", "Where is ORD-1?"), ("s1-t2", "And when will it arrive?")]
    ids = [o.id for o in s1.observations]
    assert ids == ["s1-t1", "s1-t1:o1", "s1-t1:o2", "s1-t2", "s1-t2:o1", "s1-t2:o2"]    # o1, o2 twice: prefixed
    assert {o.id: o.parent_id for o in s1.observations}["s1-t2:o2"] == "s1-t2:o1"
    alone = [Trace.model_validate({**_conversations()[0], "observations": []})]
    assert [o.id for o in session_traces(alone, "conversation.id")[0].observations] == ["s1-t2"]


def test_a_trace_without_a_session_id_is_refused_by_name():
    rows = _conversations()
    rows[3]["metadata"] = {}
    with pytest.raises(InputError, match=r"1 trace\(s\) carry no session id at metadata.conversation.id "
                                         r"\(the first: s2-t1\)"):
        session_traces([Trace.model_validate(r) for r in rows], "conversation.id")


def test_a_session_spec_builds_one_prompt_per_conversation(tmp_path):
    spec = JudgeSpec.model_validate(__import__("yaml").safe_load(SPEC))
    prompts = build_prompts(spec, _traces())
    assert [p.trace_id for p in prompts] == ["s1", "s2", "s3"]
    system, user = prompts[1].messages
    assert "on one whole conversation: a session of several turns" in system["content"]
    assert user["content"].startswith("Judge this conversation.\n\nTrace s2")
    text = user["content"]
    assert text.index("Observation s2-t1 (SPAN") < text.index("Observation s2-t2 (SPAN")
    assert "Order ORD-2 arrives Friday." in text and "Where is ORD-1?" in text


def test_a_trace_judges_digest_is_what_it_was_before_sessions():
    plain = JudgeSpec.model_validate({"id": "c", "criterion": "x", "pass": "p", "fail": "f"})
    spelled = JudgeSpec.model_validate({"id": "c", "criterion": "x", "pass": "p", "fail": "f", "scope": "trace"})
    session = JudgeSpec.model_validate({"id": "c", "criterion": "x", "pass": "p", "fail": "f", "scope": "session",
                                        "sessionKey": "k"})
    trace = [Trace.model_validate({"id": "t", "metadata": {"k": "s"}, "observations": []})]

    def digest(spec: JudgeSpec) -> str | None:
        return build_prompts(spec, trace)[0].judge_digest

    assert digest(plain) == digest(spelled) != digest(session)


@pytest.mark.parametrize(("fields", "says"), [({"scope": "session"}, "sessionKey: a session judge names"),
                                               ({"sessionKey": "k"}, "read only with scope: session")])
def test_the_session_key_goes_with_the_session_scope(fields, says):
    with pytest.raises(ValueError, match=says):
        JudgeSpec.model_validate({"id": "c", "criterion": "x", "pass": "p", "fail": "f", **fields})


def _write(folder: Path) -> tuple[Path, Path, Path]:
    traces = folder / "turns.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in _conversations()))
    spec = folder / "session-judge.yaml"
    spec.write_text(SPEC)
    labels = folder / "labels.jsonl"
    labels.write_text("".join(json.dumps({"traceId": s, "criterionId": "remembers-the-order", "label": v,
                                          "annotator": "ana", "labeledAt": "2026-03-09T09:00:00Z", "split": "test"})
                              + "\n" for s, v in (("s1", "pass"), ("s2", "fail"), ("s3", "pass"))))
    return traces, spec, labels


@pytest.mark.slow
def test_judge_run_judges_sessions_checks_refs_against_them_and_calibrate_reads_the_verdicts(tmp_path, capsys,
                                                                                            monkeypatch):
    traces, spec, labels = _write(tmp_path)

    def judge(messages):
        text = messages[-1]["content"]
        session = text.split("Trace ", 1)[1].split()[0]
        switched = "ORD-2" in text
        ref = ({"obs": f"{session}-t2:o1", "path": "input.order_id", "value": "ORD-2"} if switched else
               {"obs": f"{session}-t2:o1", "path": "input.order_id", "value": "ORD-1"})
        return json.dumps({"critique": "Turn 2 looked up " + ref["value"] + ".", "refs": [ref], "assumptions": [],
                           "result": "fail" if switched else "pass", "confidence": 0.9, "blockedBy": None})

    monkeypatch.setenv("OPENAI_API_KEY", "local")
    server = JudgeServer(script=judge).start()
    out = tmp_path / "verdicts.jsonl"
    try:
        code = main(["judge", "run", "--spec", str(spec), "--traces", str(traces), "--out", str(out),
                     "--provider", "openai", "--model", "judge-test", "--base-url", server.url, "--verify", "refs",
                     "--no-progress"])
    finally:
        server.stop()
    assert code == 0, capsys.readouterr()
    assert len(server.requests) == 3                                    # one call per conversation, not per turn
    verdicts = {v["traceId"]: v for v in map(json.loads, out.read_text().splitlines())}
    assert {t: v["result"] for t, v in verdicts.items()} == {"s1": "pass", "s2": "fail", "s3": "pass"}
    assert all(v["verifiedBy"] == "refs" for v in verdicts.values())   # the refs resolved in the session traces
    capsys.readouterr()
    assert main(["calibrate", "--labels", str(labels), "--verdicts", str(out), "--criterion",
                 "remembers-the-order"]) in (0, 3)
    printed = capsys.readouterr().out
    assert "paired      3 (tp 2, fn 0, fp 0, tn 1)" in printed, printed      # keyed by session id


def test_judge_prompt_shows_a_sessions_prompt_and_a_cluster_run_is_refused(tmp_path, capsys):
    traces, spec, _ = _write(tmp_path)
    assert main(["judge", "prompt", "--spec", str(spec), "--traces", str(traces), "--trace", "s2"]) == 0
    assert "=== remembers-the-order on s2" in capsys.readouterr().out
    cassette = tmp_path / "cassette.jsonl"
    cassette.write_text(json.dumps({"key": "0" * 64, "model": "m", "reply": {"text": "{}"}}) + "\n")
    code = main(["judge", "run", "--spec", str(spec), "--traces", str(traces), "--out", str(tmp_path / "v.jsonl"),
                 "--provider", "replay", "--cassette", str(cassette), "--workers", "2", "--verify", "refs"])
    assert code != 0
    assert "judges whole sessions (scope: session)" in capsys.readouterr().err
