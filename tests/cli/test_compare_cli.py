"""``evalkit compare``, ``evalkit gate`` and ``evalkit judge audit`` on small files written in a tmp dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli import build_parser, main
from evalkit.compare import DEFAULT_ALPHA, DEFAULT_MAX_DROP
from tests.compare.conftest import run_of, verdict


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    """Eleven items: four pass in both, one pass -> fail (t004), six fail -> pass (t005..t010)."""
    old = run_of("ppppp" + "ffffff")
    new = run_of("ppppf" + "pppppp")
    old[4] = verdict("cites-order-id", "t004", "pass", "cites ORD-2026-000004 from the lookup")
    new[4] = verdict("cites-order-id", "t004", "fail", "the reply names no order id")
    return write_jsonl(tmp_path / "old.jsonl", old), write_jsonl(tmp_path / "new.jsonl", new)


def test_compare_prints_the_table_mcnemar_and_each_flip_with_both_critiques(capsys, two_runs):
    code, out, err = run(capsys, "compare", *two_runs)
    assert code == 0 and err == ""
    assert out.startswith("old: old.jsonl   new: new.jsonl   paired on (criterion, trace)\n")
    row = next(line for line in out.splitlines() if line.startswith("cites-order-id "))
    # b = 1, c = 6: two-sided exact p = 2 * P(X <= 1 | 7, 1/2) = 2 * 8 / 128
    cells = row.split()
    assert cells[:5] + cells[7:10] == ["cites-order-id", "11", "45.5%", "90.9%", "+45.5%", "1", "6", "0.125"]
    lower, upper = (float(x.strip("[],%")) for x in cells[5:7])
    assert 0 < lower < 45.5 < upper < 100  # the interval brackets the change and excludes no change
    assert "flips in cites-order-id (7):" in out
    assert ("  t004: pass -> fail | old: cites ORD-2026-000004 from the lookup "
            "| new: the reply names no order id") in out
    assert "  t010: fail -> pass | old: fail on t010 | new: pass on t010" in out


def test_compare_json_lists_every_flip_and_both_p_values(capsys, two_runs):
    code, out, _ = run(capsys, "compare", *two_runs, "--json", "--seed", "3", "--iterations", "500")
    assert code == 0
    (c,) = json.loads(out)["criteria"]
    assert c["table"] == {"bothPass": 4, "passToFail": 1, "failToPass": 6, "bothFail": 0}
    assert c["mcnemar"] == {"pTwoSided": 0.125, "pDrop": 1 - 1 / 128}
    assert [f["key"] for f in c["flips"]] == ["t004", "t005", "t006", "t007", "t008", "t009", "t010"]
    assert (c["interval"]["seed"], c["interval"]["iterations"]) == (3, 500)
    ci = c["interval"]["ci"]
    assert set(ci) == {"lo", "hi", "level"} and ci["lo"] < c["difference"] < ci["hi"]


def test_compare_refuses_unpaired_runs_naming_the_items_unless_asked(capsys, tmp_path, two_runs):
    old, _ = two_runs
    short = write_jsonl(tmp_path / "short.jsonl", run_of("ppppf" + "ppppp"))  # t010 missing
    code, out, err = run(capsys, "compare", old, short)
    assert code == 1 and out == ""
    assert err.startswith("error: join_on: the runs are not paired on (criterion, trace): "
                          "1 only in old.jsonl (cites-order-id/t010);")
    assert "--unpaired" in err
    code, out, _ = run(capsys, "compare", old, short, "--unpaired")
    assert code == 0
    assert "cites-order-id: 1 only in old.jsonl, 0 only in short.jsonl (not compared)" in out
    assert "  only in old.jsonl: t010" in out


def test_compare_criterion_keeps_one_criterion_and_names_an_unknown_one(capsys, tmp_path, two_runs):
    old, new = two_runs
    other = run_of("pf", crit="polite")
    both_old = write_jsonl(tmp_path / "both-old.jsonl", [json.loads(x) for x in old.read_text().splitlines()] + other)
    both_new = write_jsonl(tmp_path / "both-new.jsonl", [json.loads(x) for x in new.read_text().splitlines()] + other)
    code, out, _ = run(capsys, "compare", both_old, both_new)
    assert code == 0 and "\npolite " in out
    code, out, _ = run(capsys, "compare", both_old, both_new, "--criterion", "polite")
    assert code == 0 and "\npolite " in out and "cites-order-id" not in out
    code, out, err = run(capsys, "compare", both_old, both_new, "--criterion", "tone")
    assert code == 1 and "error: --criterion: no verdict on criterion 'tone' in either run" in err


def _gate_runs(tmp_path: Path, both_pass: int, p2f: int, f2p: int, both_fail: int) -> tuple[Path, Path]:
    old = "p" * both_pass + "p" * p2f + "f" * f2p + "f" * both_fail
    new = "p" * both_pass + "f" * p2f + "p" * f2p + "f" * both_fail
    return write_jsonl(tmp_path / "run.jsonl", run_of(new)), write_jsonl(tmp_path / "base.jsonl", run_of(old))


def test_gate_exits_1_on_a_significant_drop_and_writes_the_markdown(capsys, tmp_path):
    new, base = _gate_runs(tmp_path, 70, 10, 0, 20)
    md = tmp_path / "ci" / "gate.md"
    code, out, err = run(capsys, "gate", new, "--baseline", base, "--markdown-out", md)
    assert code == 1 and err == ""
    assert out.startswith("## evalkit gate: FAILED\n")
    assert "**1 of 1 criteria failed:** `cites-order-id`" in out
    assert "| `cites-order-id` | 100 | 80.0% | 70.0% | -10.0% |" in out
    assert md.read_text(encoding="utf-8") == out


def test_gate_exits_0_on_noise_even_with_a_large_point_drop(capsys, tmp_path):
    new, base = _gate_runs(tmp_path, 15, 3, 0, 2)  # 15 points down, but 3 flips: one-sided p = 1/8
    code, out, _ = run(capsys, "gate", new, "--baseline", base)
    assert code == 0
    assert out.startswith("## evalkit gate: PASSED\n") and "not significant (McNemar p=0.125)" in out
    # A margin wider than the drop passes even a real drop; a margin of zero does not.
    new, base = _gate_runs(tmp_path, 1500, 20, 0, 480)  # 1 point down on 2000 items, p ~ 1e-6
    assert run(capsys, "gate", new, "--baseline", base)[0] == 0
    assert run(capsys, "gate", new, "--baseline", base, "--max-drop", "0")[0] == 1


def test_gate_exits_2_on_a_broken_call_so_ci_can_tell_it_from_a_failed_gate(capsys, tmp_path):
    new, base = _gate_runs(tmp_path, 70, 10, 0, 20)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(verdict("cites-order-id", "t000", "pass")) + "\n"
                   + json.dumps({"criterionId": "cites-order-id", "traceId": "t001", "result": "maybe"}) + "\n",
                   encoding="utf-8")
    code, out, err = run(capsys, "gate", bad, "--baseline", base)
    assert code == 2 and out == "" and err.startswith(f"error: {bad}:2: ")
    short = write_jsonl(tmp_path / "short.jsonl", run_of("p" * 99))
    code, out, err = run(capsys, "gate", short, "--baseline", base)
    assert code == 2 and out == "" and "1 only in base.jsonl (cites-order-id/t099)" in err
    code, _, err = run(capsys, "gate", new, "--baseline", base, "--alpha", "0.7")
    assert code == 2 and "error: alpha: must be in (0, 0.5)" in err
    md = tmp_path / "a-folder"
    md.mkdir()
    code, out, err = run(capsys, "gate", new, "--baseline", base, "--markdown-out", md)
    assert code == 2 and out == "" and "it is a folder" in err
    with pytest.raises(SystemExit) as usage:
        main(["gate", str(new)])  # no --baseline
    assert usage.value.code == 2


def test_gate_exits_3_when_the_run_decided_nothing_and_on_an_empty_unpaired_run(capsys, tmp_path):
    base = write_jsonl(tmp_path / "base.jsonl", run_of("p" * 20 + "f" * 5))
    broken = write_jsonl(tmp_path / "run.jsonl", run_of("u" * 25))
    code, out, _ = run(capsys, "gate", broken, "--baseline", base)
    assert code == 3 and out.startswith("## evalkit gate: INCOMPLETE\n") and "0 item(s) decided" in out
    empty = write_jsonl(tmp_path / "empty.jsonl", [])
    assert run(capsys, "gate", empty, "--baseline", base, "--unpaired")[0] == 3
    same = write_jsonl(tmp_path / "same.jsonl", run_of("p" * 20 + "f" * 5))
    assert run(capsys, "gate", same, "--baseline", base)[0] == 0
    assert run(capsys, "gate", same, "--baseline", base, "--min-decided", "30")[0] == 3


def test_gate_help_documents_the_exit_codes_and_its_defaults_are_the_librarys(capsys):
    with pytest.raises(SystemExit) as done:
        main(["gate", "--help"])
    text = capsys.readouterr().out
    assert done.value.code == 0
    assert "0  passed" in text and "1  failed" in text and "2  broken call" in text and "3  incomplete" in text
    args = build_parser().parse_args(["gate", "run.jsonl", "--baseline", "base.jsonl"])
    assert (args.max_drop, args.alpha) == (DEFAULT_MAX_DROP, DEFAULT_ALPHA)


def _llmbar(label: int | None, first: str | None, swapped: str | None, out1: str, out2: str) -> dict:
    """One LLMBar result.json record; ``swapped`` is already mapped back to the original order."""
    return {"input": "Which answer follows the instruction?", "output_1": out1, "output_2": out2, "label": label,
            "results": [{"swap = False": {"completion": ["Output (a)", "stop"], "winner": first},
                         "swap = True": {"completion": ["Output (b)", "stop"], "winner": swapped}}]}


@pytest.fixture
def llmbar_file(tmp_path: Path) -> Path:
    long, short = "a long, detailed answer", "short"
    records = [
        _llmbar(1, "1", "1", long, short),   # consistent, right, picks the longer
        _llmbar(2, "2", "2", long, short),   # consistent, right, picks the shorter (as the human did)
        _llmbar(1, "1", "2", long, short),   # first-shown wins in both orders: inconsistent
        _llmbar(2, "1", "2", short, long),   # first-shown wins again
        _llmbar(1, "2", "1", long, short),   # second-shown wins in both orders
        _llmbar(1, None, "1", long, short),  # undecided in the original order
    ]
    path = tmp_path / "result.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_judge_audit_reports_position_flips_agreement_and_verbosity(capsys, llmbar_file):
    code, out, err = run(capsys, "judge", "audit", "--pairwise", llmbar_file, "--format", "llmbar")
    assert code == 0 and err == ""
    assert "judge audit of result.json (llmbar): 6 pairs, each judged in both orders" in out
    assert "undecided in at least one order, left out of the position and agreement figures: 1 pair: 6" in out
    assert "same answer in both orders: 2 of 5 pairs; position-inconsistent: 3 (flip rate 60.0%)" in out
    # first-shown wins: pair 1 once, pair 2 once (swapped 2 is a first-position win), 3 and 4 twice, 5 never
    assert "the first-shown answer won 6 of 10 judgments (60.0%" in out
    assert "the first-shown answer won both times in 2, the second-shown in 1" in out
    assert "position-inconsistent pairs: 3, 4, 5" in out
    assert "in the original order: 3 (60.0%)" in out and "swapped: 4 (80.0%)" in out
    assert "in both orders: 2 (40.0%)" in out
    assert "original order: the judge picks the longer answer in 2 of 5 (40.0%), the humans in 4 (80.0%)" in out
    # the swapped order has a verdict on pair 6 too: it picked output_1, the longer answer, as the human did
    assert "swapped order: the judge picks the longer answer in 4 of 6 (66.7%), the humans in 5 (83.3%)" in out
    assert "self-preference" not in out


def test_judge_audit_json_and_the_same_family_warning(capsys, llmbar_file):
    code, out, _ = run(capsys, "judge", "audit", "--pairwise", llmbar_file, "--json",
                       "--judge-model", "gpt-4o", "--agent-model", "openai/gpt-4o-mini")
    assert code == 0
    audit = json.loads(out)
    assert audit["position"]["inconsistentPairs"] == ["3", "4", "5"] and audit["position"]["undecidedPairs"] == ["6"]
    assert audit["agreement"] == {"labelled": 5, "inOrder": 3, "swapped": 4, "both": 2}
    assert "both openai models" in audit["selfPreference"]["warning"]
    code, out, _ = run(capsys, "judge", "audit", "--pairwise", llmbar_file,
                       "--judge-model", "claude-sonnet-4", "--agent-model", "gpt-4o-mini")
    assert code == 0 and "are not known to share a model family" in out


def test_judge_audit_names_the_bad_record_and_a_lone_model_flag(capsys, tmp_path, llmbar_file):
    records = json.loads(llmbar_file.read_text())
    records[1]["results"][0]["swap = True"]["winner"] = 7
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(records), encoding="utf-8")
    code, out, err = run(capsys, "judge", "audit", "--pairwise", bad)
    assert code == 1 and out == ""
    assert err.startswith(f"error: {bad}: [1].results[0].swap = True.winner: expected '1', '2' or null")
    code, _, err = run(capsys, "judge", "audit", "--pairwise", llmbar_file, "--judge-model", "gpt-4o")
    assert code == 1 and "error: --agent-model: --judge-model needs --agent-model too" in err


def test_gate_warns_about_a_line_cut_off_by_an_interrupted_write(capsys, tmp_path):
    new, base = _gate_runs(tmp_path, 15, 3, 0, 2)
    for path in (new, base):
        with path.open("a", encoding="utf-8") as fh:
            fh.write('{"criterionId": "cites-order-id", "traceId": "t0')  # killed mid-write, no newline
    code, out, err = run(capsys, "gate", new, "--baseline", base)
    assert code == 0 and "| `cites-order-id` | 20 |" in out
    warnings = err.splitlines()
    assert len(warnings) == 2 and all(w.startswith("warning: ") and ":21: line cut off" in w for w in warnings)
    assert f"warning: {base}:21:" in err and f"warning: {new}:21:" in err
