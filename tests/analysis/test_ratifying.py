"""Ratifying a draft: every drafted mode decided by a person, the taxonomy made of those decisions alone."""

from __future__ import annotations

import json

import pytest

from evalkit.analysis import draft_digest, draft_yaml, ratify, read_taxonomy
from evalkit.cli.main import main
from evalkit.contracts import DraftTaxonomy, Ratification
from evalkit.errors import InputError

AT = "2026-03-09T10:00:00+00:00"


def _draft():
    mode = lambda i, ex: {"id": i, "name": i.replace("-", " "), "definition": f"{i}.", "include": [f"{i} rule"],  # noqa: E731
                          "exclude": [], "examples": ex}
    return DraftTaxonomy.model_validate({
        "format": "evalkit-draft-modes", "version": 1, "subject": "shop",
        "draftedBy": {"provider": "fake", "model": "m", "temperature": 0, "promptDigest": "sha256:1", "notes": 6,
                      "notesDigest": "sha256:2"},
        "modes": [mode("ignores-tool-result", ["t1", "t2"]), mode("ignores-kb-result", ["t3"]),
                  mode("policy-mismatch", ["t4"]), mode("handoff-problems", ["t5", "t6"]), mode("levi-testing", ["t7"])],
        "unplaced": []})


def _part(i, examples=(), name=None):
    return {"id": i, "name": name or i.replace("-", " "), "definition": f"{i}.", "examples": list(examples)}


def _decisions(draft, *, drop=None):
    decisions = [
        {"draftMode": "ignores-tool-result", "action": "rename",
         "parts": [_part("dropped-tool-result", ["t1", "t2"], "Dropped tool result")]},
        {"draftMode": "ignores-kb-result", "action": "merge", "into": "ignores-tool-result"},
        {"draftMode": "policy-mismatch", "action": "accept", "parts": [_part("policy-mismatch", ["t4"])]},
        {"draftMode": "handoff-problems", "action": "split",
         "parts": [_part("no-handoff", ["t5"]), _part("handoff-without-asking", ["t6"])]},
        {"draftMode": "levi-testing", "action": "reject", "note": "a test call"},
    ]
    decisions = [d | {"reviewer": "ana", "at": AT} for d in decisions if d["draftMode"] != drop]
    return Ratification.model_validate({"format": "evalkit-ratification", "version": 1, "reviewer": "ana", "at": AT,
                                        "draftDigest": draft_digest(draft), "decisions": decisions})


def test_the_taxonomy_is_what_the_decisions_make():
    draft = _draft()
    taxonomy = ratify(draft, _decisions(draft))
    assert [(m.id, m.examples) for m in taxonomy.modes] == [
        ("dropped-tool-result", ["t1", "t2", "t3"]),  # the merged mode's notes come along
        ("policy-mismatch", ["t4"]), ("no-handoff", ["t5"]), ("handoff-without-asking", ["t6"])]
    assert taxonomy.subject == "shop"


def test_a_drafted_mode_nobody_decided_on_stops_the_taxonomy():
    draft = _draft()
    with pytest.raises(InputError, match="no decision on drafted mode.s. levi-testing"):
        ratify(draft, _decisions(draft, drop="levi-testing"))


def test_decisions_on_another_draft_are_refused():
    draft = _draft()
    record = _decisions(draft)
    changed = draft.model_copy(update={"subject": "other"})
    with pytest.raises(InputError, match="made on another draft"):
        ratify(changed, record)


def test_a_merge_into_a_rejected_mode_is_refused():
    draft = _draft()
    record = _decisions(draft)
    record.decisions[1] = record.decisions[1].model_copy(update={"into": "levi-testing"})
    with pytest.raises(InputError, match="not a mode kept whole"):
        ratify(draft, record)


def test_ratify_writes_a_taxonomy_the_other_commands_read_and_appends_the_coded_labels(tmp_path, capsys):
    draft = _draft()
    (tmp_path / "draft.yaml").write_text(draft_yaml(draft), encoding="utf-8")
    record = _decisions(draft).to_json_obj()
    record["annotations"] = [{"traceId": "t1", "annotator": "ana", "at": AT, "label": "fail",
                              "modes": ["dropped-tool-result"], "note": "ignores the tool"}]
    (tmp_path / "export.json").write_text(json.dumps(record), encoding="utf-8")
    code = main(["analysis", "ratify", str(tmp_path / "draft.yaml"), str(tmp_path / "export.json"),
                 "--out", str(tmp_path / "failure-modes.yaml"), "--into", str(tmp_path / "store.jsonl")])
    out = capsys.readouterr().out
    assert code == 0
    assert "4 failure modes ratified by ana from 5 drafted modes (1 accept, 1 rename, 1 merge, 1 split, 1 reject)" in out
    assert read_taxonomy(tmp_path / "failure-modes.yaml").mode_ids()[0] == "dropped-tool-result"
    assert "dropped-tool-result" in (tmp_path / "store.jsonl").read_text()
