"""`evalkit eval run` and `evalkit scorecard`: files written, the gate, skipped judges said, byte-identical reruns."""

from __future__ import annotations

import json

import yaml

from evalkit.checks.eval_run import FILES, eval_subject, read_eval_run
from evalkit.cli.main import main
from evalkit.judge.providers import ScriptedProvider
from tests.cli.conftest import with_judge_spec


def _bytes(folder):
    return {name: (folder / name).read_bytes() for name in FILES}


def test_eval_run_writes_the_folder_gates_and_reruns_byte_identically(shop, tmp_path, capsys):
    out = tmp_path / "eval"
    assert main(["eval", "run", str(shop), "--out", str(out), "--concurrency", "3"]) == 0
    printed = capsys.readouterr()
    assert "SCORECARD shop-bot" in printed.out and "FAIL" in printed.out
    assert "3 ok (0 reused" in printed.err
    for name in FILES:
        assert (out / name).is_file(), name
    card = json.loads((out / "scorecard.json").read_text())
    by_id = {c["componentId"]: c for c in card["components"]}
    assert by_id["C1"]["verdict"] == "fail"                      # the "typo" case looked up the wrong order
    crit = by_id["C1"]["criteria"][0]
    assert crit["counts"]["passed"] == 2 and crit["counts"]["failed"] == 1
    assert [t.endswith("-r1") for t in crit["failingTraces"]] == [True]
    polite = by_id["C2"]["criteria"][0]
    assert polite["counts"]["skipped"] == 3 and by_id["C2"]["verdict"] == "incomplete"   # nobody judged it
    assert by_id["C2"]["reasons"] == [f"{polite['severity']} polite 3 skipped"]
    assert "1 judge criteria skipped: no judge spec in subject" in card["warnings"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["runs"] == {"ok": 3, "error": 0, "timeout": 0} and manifest["judge"] is None
    assert {i["field"] for i in manifest["inputs"]} >= {"dataset", "eval_matrix"}
    verdicts = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    assert len(verdicts) == 3 and {v["criterionId"] for v in verdicts} == {"order-id-matches"}

    first = _bytes(out)
    assert main(["eval", "run", str(shop), "--out", str(out), "--gate"]) == 3   # the card fails the gate
    assert "3 reused" in capsys.readouterr().err
    assert _bytes(out) == first


def test_eval_run_on_a_subject_without_agent_is_a_located_error(shop, tmp_path, capsys):
    shop.write_text(shop.read_text().replace("agent:", "old_agent:"))
    assert main(["eval", "run", str(shop), "--out", str(tmp_path / "x")]) == 1
    assert "subject.yaml" in capsys.readouterr().err


def test_judge_criteria_are_judged_in_one_batch_with_the_subjects_specs(shop, tmp_path):
    subject = with_judge_spec(shop)

    def script(messages, schema, index):
        rude = "typo" in messages[1]["content"]
        ref = {"obs": "respond", "path": "name", "value": "respond"}     # grounded: the verifier keeps it
        return json.dumps({"critique": "Read the reply.", "refs": [ref], "assumptions": [],
                           "result": "fail" if rude else "pass", "confidence": 0.9, "blockedBy": None})

    provider = ScriptedProvider(script)
    run = eval_subject(subject, tmp_path / "eval", concurrency=3, provider=provider)
    assert len(provider.calls) == 3 and run.judged_pairs == 3
    c2 = next(c for c in run.scorecard.components if c.component_id == "C2")
    assert c2.verdict == "fail" and c2.criteria[0].counts.failed == 1 and c2.criteria[0].counts.skipped == 0
    assert (tmp_path / "eval" / "judge" / "verdicts.jsonl").is_file()
    [judge] = c2.criteria[0].judges                        # the seed's pin rule: which judge, on the scorecard
    assert (judge.provider, judge.model, judge.temperature) == ("fake", "scripted", 0.0)
    assert judge.prompt_digest.startswith("sha256:") and len(judge.prompt_digest) == 71
    saved = json.loads((tmp_path / "eval" / "scorecard.json").read_text())
    polite = next(c for comp in saved["components"] for c in comp["criteria"] if c["criterionId"] == "polite")
    assert polite["judges"] == [{"provider": "fake", "model": "scripted", "temperature": 0.0,
                                 "promptDigest": judge.prompt_digest}]
    assert f"judge fake scripted t=0 {judge.prompt_digest[7:15]}" in (tmp_path / "eval" / "card.txt").read_text()
    from evalkit.checks import criterion_frame
    row = criterion_frame(run.scorecard).filter(criterion="polite").row(0, named=True)
    assert row["judge"] == f"fake scripted t=0 {judge.prompt_digest}"       # the report's criteria table
    card, traces, verdicts, manifest = read_eval_run(tmp_path / "eval")
    assert len(traces) == 3 and len(verdicts) == 6 and manifest["judge"]["criteria"] == ["polite"]

    again = ScriptedProvider(script)                      # the journal answers a rerun: no new calls
    eval_subject(subject, tmp_path / "eval", concurrency=3, provider=again)
    assert again.calls == []


def test_an_uncertain_repeat_is_named_on_the_card_as_unsteady(shop, tmp_path):
    subject = with_judge_spec(shop)

    def script(messages, schema, index):
        ref = {"obs": "respond", "path": "name", "value": "respond"}
        if "typo" in messages[1]["content"] and "-r2\n" in messages[1]["content"]:   # the typo case's 2nd repeat
            return json.dumps({"critique": "Cannot tell.", "refs": [ref], "assumptions": [], "result": "uncertain",
                               "confidence": 0.2, "blockedBy": {"kind": "scope", "text": "tone unclear"}})
        return json.dumps({"critique": "Read the reply.", "refs": [ref], "assumptions": [], "result": "pass",
                           "confidence": 0.9, "blockedBy": None})

    run = eval_subject(subject, tmp_path / "eval", repeats=2, concurrency=3, provider=ScriptedProvider(script))
    [warning] = [w for w in run.scorecard.warnings if w.startswith("repeats not stable")]
    assert "1 (case, criterion) pair(s)" in warning and "polite: 1 pass, 1 uncertain of 2 repeats" in warning
    assert "| warn: repeats not stable: 1 (case, criterion) pair(s)" in (tmp_path / "eval" / "card.txt").read_text()


def test_scorecard_command_writes_and_shows_the_card(shop, tmp_path, capsys):
    out = tmp_path / "eval"
    main(["eval", "run", str(shop), "--out", str(out)])
    capsys.readouterr()
    matrix, traces, card_file = shop.parent / "matrix.yaml", out / "traces.jsonl", tmp_path / "card.json"
    assert main(["scorecard", str(matrix), str(traces), "--only", "deterministic", "--out", str(card_file)]) == 0
    shown = capsys.readouterr().out
    assert "C1 order_lookup" in shown and "C2 respond" not in shown       # other tracks left off the card
    assert max(len(line) for line in shown.splitlines() if line.startswith("|")) == 60
    assert main(["scorecard", "show", str(card_file)]) == 0
    assert capsys.readouterr().out.splitlines() == shown.splitlines()[:-1]   # less the "scorecard: F" line
    assert main(["scorecard", "show", str(card_file), "--gate"]) == 3

    polite = tmp_path / "polite.jsonl"
    ids = [json.loads(line)["id"] for line in traces.read_text().splitlines()]
    polite.write_text("".join(json.dumps({"criterionId": "polite", "traceId": t, "result": "pass",
                                          "confidence": 0.9, "critique": "fine"}) + "\n" for t in ids))
    assert main(["scorecard", str(matrix), str(traces), "--verdicts", str(polite)]) == 0
    assert "C2 respond" in (shown := capsys.readouterr().out) and "PASS" in shown.split("C2 respond")[1][:60]
    assert "warn: which judge decided polite is not recorded" in shown     # no polite.runs.jsonl beside it
    (tmp_path / "polite.runs.jsonl").write_text("".join(json.dumps({
        "criterionId": "polite", "traceId": t, "repeat": 0, "provider": "openai", "model": "gpt-x", "temperature": 0,
        "promptDigest": "sha256:" + "1" * 64, "judgeDigest": "sha256:" + "ab" * 32, "result": "pass",
        "inputTokens": 1, "outputTokens": 1, "attempts": 1, "cached": False, "costUsd": None,
        "structuredOutput": "json_schema"}) + "\n" for t in ids))
    assert main(["scorecard", str(matrix), str(traces), "--verdicts", str(polite), "--out", str(card_file)]) == 0
    shown = capsys.readouterr().out
    assert "judge openai gpt-x t=0 abababab" in shown and "which judge decided" not in shown
    saved = json.loads(card_file.read_text())
    assert saved["components"][1]["criteria"][0]["judges"][0]["model"] == "gpt-x"
    assert main(["scorecard", "show"]) == 1
    assert "scorecard show needs" in capsys.readouterr().err


def test_scorecard_warns_of_skipped_judges_only_when_the_matrix_has_judge_criteria(shop, tmp_path, capsys):
    out = tmp_path / "eval"
    main(["eval", "run", str(shop), "--out", str(out)])
    capsys.readouterr()
    matrix, traces = shop.parent / "matrix.yaml", out / "traces.jsonl"
    main(["scorecard", str(matrix), str(traces)])
    assert "judge criteria skipped: no --verdicts given" in capsys.readouterr().out   # polite is judged
    checks_only = yaml.safe_load(matrix.read_text())
    checks_only["components"] = [c for c in checks_only["components"]
                                 if all("check" in crit for crit in c["criteria"])]
    (code := tmp_path / "code-only.yaml").write_text(yaml.safe_dump(checks_only))
    main(["scorecard", str(code), str(traces)])
    shown = capsys.readouterr().out
    assert "C1 order_lookup" in shown and "judge criteria skipped" not in shown   # nothing there to judge
