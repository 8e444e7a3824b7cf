"""``evalkit calibrate``: table and JSON output, the default unlabeled set, and located errors."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from evalkit.cli.calibrate import add_calibrate_parser
from evalkit.errors import InputError
from evalkit.io.canonical import canonical_line


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="evalkit")
    add_calibrate_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["calibrate", *argv])
    return args.func(args)


def _write(path, records) -> str:
    path.write_text("".join(canonical_line(r) for r in records))
    return str(path)


def _verdict(trace: str, result: str, criterion: str = "c1") -> dict:
    v = {"criterionId": criterion, "traceId": trace, "result": result, "confidence": 1.0, "critique": "..."}
    if result == "uncertain":
        v["blockedBy"] = {"kind": "scope", "text": "no order"}
    return v


@pytest.fixture
def files(tmp_path):
    labels = [{"traceId": f"p{i}", "label": "pass"} for i in range(20)]
    labels += [{"traceId": f"f{i}", "label": "fail"} for i in range(10)]
    labels += [{"traceId": "d0", "label": "defer"}]
    verdicts = [_verdict(f"p{i}", "fail" if i < 2 else "pass") for i in range(20)]
    verdicts += [_verdict(f"f{i}", "pass" if i < 1 else "fail") for i in range(10)]
    verdicts += [_verdict("d0", "pass"), _verdict("u0", "uncertain")]  # d0 counts as unlabeled
    verdicts += [_verdict(f"u{i}", "pass" if i <= 6 else "fail") for i in range(1, 10)]
    return _write(tmp_path / "labels.jsonl", labels), _write(tmp_path / "verdicts.jsonl", verdicts)


def test_json_output_is_canonical_and_uses_verdicts_on_unlabeled_traces(files, capsys):
    assert _run(["--labels", files[0], "--verdicts", files[1], "--json"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out)
    assert out == json.dumps(report, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    rate = report["correctedPassRate"]
    assert report["unlabeled"] == {"verdicts": 11, "uncertain": 1, "used": 10, "observedFrom": "verdicts"}
    assert rate["pObs"] == 0.7 and rate["tpr"] == 0.9 and rate["tnr"] == 0.9
    assert rate["theta"] == pytest.approx(0.75) and rate["method"] == "adjusted-wald"
    # the one interval spelling, as ValidationResult holds it on disk
    assert set(rate["ci"]) == {"lo", "hi", "level"} and rate["ci"]["lo"] < 0.75 < rate["ci"]["hi"]
    assert "lower" not in rate and "upper" not in rate
    assert set(report["confusion"]["tprCi"]) == {"lo", "hi", "level"}
    assert report["confusion"]["deferred"] == 1 and report["labelScope"] == "all"


def test_table_output_names_rates_and_exclusions(files, capsys):
    _run(["--labels", files[0], "--verdicts", files[1], "--method", "bootstrap", "--iterations", "2000"])
    out = capsys.readouterr().out
    assert "TPR         0.900  [" in out and "TNR         0.900  [" in out
    assert "1 defer labels" in out and "1 uncertain left out" in out
    assert "corrected   0.750  95% CI [" in out
    assert "bootstrap (2000 resamples" in out


def test_explicit_unlabeled_file_and_test_split(files, tmp_path, capsys):
    labels = [{"traceId": "p0", "label": "pass", "split": "dev"}]
    labels += [{"traceId": f"p{i}", "label": "pass", "split": "test"} for i in range(1, 20)]
    labels += [{"traceId": f"f{i}", "label": "fail", "split": "test"} for i in range(10)]
    unlabeled = [_verdict(f"x{i}", "pass" if i < 3 else "fail") for i in range(4)]
    _run(["--labels", _write(tmp_path / "split.jsonl", labels), "--verdicts", files[1],
          "--unlabeled", _write(tmp_path / "unl.jsonl", unlabeled), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["labelScope"] == "test" and report["labelsMeasured"] == 29
    assert report["confusion"]["positives"] == 19
    assert report["correctedPassRate"]["pObs"] == 0.75


def test_bad_label_is_located_by_file_line_and_field(files, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"traceId": "a", "label": "pass"}\n{"traceId": "b", "label": "maybe"}\n')
    with pytest.raises(InputError) as err:
        _run(["--labels", str(bad), "--verdicts", files[1]])
    assert err.value.render().startswith(f"{bad}:2: label: Input should be 'pass', 'fail' or 'defer'")


def test_without_unlabeled_verdicts_tpr_tnr_and_status_are_still_printed(tmp_path, capsys):
    labels = _write(tmp_path / "l.jsonl", [{"traceId": "a", "label": "pass"}, {"traceId": "b", "label": "fail"}])
    verdicts = _write(tmp_path / "v.jsonl", [_verdict("a", "pass"), _verdict("b", "fail")])
    assert _run(["--labels", labels, "--verdicts", verdicts]) == 0
    out = capsys.readouterr().out
    assert "TPR         1.000  [" in out and "TNR         1.000  [" in out
    assert ("status      unvalidated (only 2 usable test labels (need at least 60); only 1 human passes on test "
            "(need at least 20 of each class: 19 more test label(s) of pass, judged pass or fail); only 1 human "
            "fails") in out
    assert "corrected   not valid: nothing to correct" in out and "--observed" in out


def _runs(path, verdicts, *, judge="sha256:judge-a", model="m-1", repeat=0):
    """A judge run sidecar for these verdicts (what evalkit judge run writes beside them)."""
    rows = [{"criterionId": v["criterionId"], "traceId": v["traceId"], "repeat": repeat, "provider": "fake",
             "model": model, "temperature": 0.0, "promptDigest": f"sha256:rendered-{v['traceId']}",
             "judgeDigest": judge, "result": v["result"], "inputTokens": None, "outputTokens": None,
             "attempts": 1, "cached": False, "costUsd": None, "structuredOutput": None} for v in verdicts]
    return _write(path, rows)


def _records(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def _unlabeled(tmp_path, name="unlabeled.jsonl"):
    records = [_verdict(f"u{i}", "pass" if i % 3 else "fail") for i in range(30)]
    return _write(tmp_path / name, records), records


def test_verdicts_from_another_judge_are_reported_uncalibrated_not_corrected(files, tmp_path, capsys):
    labels, verdicts = files
    _runs(tmp_path / "verdicts.runs.jsonl", _records(verdicts))
    unlabeled, records = _unlabeled(tmp_path)
    _runs(tmp_path / "unlabeled.runs.jsonl", records, judge="sha256:judge-b")
    assert _run(["--labels", labels, "--verdicts", verdicts, "--unlabeled", unlabeled, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["calibration"]["status"] == "uncalibrated" and out["calibration"]["changed"] == ["promptDigest"]
    assert out["correctedPassRate"]["theta"] is None and out["correctedPassRate"]["valid"] is False
    assert out["correctedPassRate"]["reason"].startswith("uncalibrated: the verdicts to correct come from another")
    _runs(tmp_path / "unlabeled.runs.jsonl", records)  # the same judge: corrected
    assert _run(["--labels", labels, "--verdicts", verdicts, "--unlabeled", unlabeled, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["calibration"]["status"] == "calibrated" and out["correctedPassRate"]["theta"] is not None


def test_a_saved_validation_expires_when_the_labels_or_the_model_change(files, tmp_path, capsys):
    labels, verdicts = files
    _runs(tmp_path / "verdicts.runs.jsonl", _records(verdicts))
    saved = str(tmp_path / "validation.json")
    assert _run(["--labels", labels, "--verdicts", verdicts, "--save-validation", saved, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert json.loads(Path(saved).read_text())["binding"]["judgeModel"] == "m-1"
    assert _run(["--labels", labels, "--verdicts", verdicts, "--validation", saved, "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["calibration"]["status"] == "calibrated"
    assert again["correctedPassRate"] == first["correctedPassRate"]
    assert _run(["--labels", labels, "--verdicts", verdicts, "--validation", saved, "--policy-version", "2"]) == 0
    assert "applies     uncalibrated: calibration expired: policyVersion '1' -> '2'" in capsys.readouterr().out
    _runs(tmp_path / "verdicts.runs.jsonl", _records(verdicts), model="m-2")
    assert _run(["--labels", labels, "--verdicts", verdicts, "--validation", saved, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "judgeModel" in out["calibration"]["changed"] and out["correctedPassRate"]["theta"] is None


def test_without_a_run_record_the_judge_is_unknown_and_the_rate_still_corrected(files, capsys):
    labels, verdicts = files
    assert _run(["--labels", labels, "--verdicts", verdicts, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["calibration"]["status"] == "unknown" and out["correctedPassRate"]["valid"] is True


def test_lower_bound_gate_refuses_a_judge_whose_interval_reaches_below_the_threshold(files, capsys):
    labels, verdicts = files
    assert _run(["--labels", labels, "--verdicts", verdicts, "--json", "--gate", "lower-bound"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["validation"]["gate"] == "lower-bound" and out["validation"]["status"] == "unvalidated"
    assert any("lower bound" in s for s in out["validation"]["shortfalls"])


def test_repeated_verdicts_give_judge_noise_and_a_wider_interval(files, tmp_path, capsys):
    labels, verdicts = files
    base = _records(verdicts)
    unlabeled, records = _unlabeled(tmp_path)
    flipped = [dict(r, result="pass" if r["result"] == "fail" and i % 2 else r["result"]) for i, r in enumerate(records)]
    runs = tmp_path / "unlabeled.runs.jsonl"
    _runs(tmp_path / "verdicts.runs.jsonl", base)
    _runs(runs, records)
    second = tmp_path / "second.jsonl"
    _runs(second, flipped, repeat=1)
    runs.write_text(runs.read_text() + second.read_text())
    assert _run(["--labels", labels, "--verdicts", verdicts, "--unlabeled", unlabeled, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    noise, ci = out["judgeNoise"], out["correctedPassRate"]["ci"]
    assert noise["repeatedItems"] == 30 and noise["unstableItems"] == 5 and noise["flipRate"] > 0
    assert noise["widenedCi"]["lo"] < ci["lo"] and noise["widenedCi"]["hi"] >= ci["hi"]


def test_a_withheld_correction_is_not_widened_for_noise_either(files, tmp_path, capsys):
    # the command and notebook 02 decide alike: no interval, widened or not, for verdicts of another judge
    labels, verdicts = files
    unlabeled, records = _unlabeled(tmp_path)
    runs = tmp_path / "unlabeled.runs.jsonl"
    _runs(tmp_path / "verdicts.runs.jsonl", _records(verdicts))
    _runs(runs, records, judge="sha256:judge-b")
    second = tmp_path / "second.jsonl"
    _runs(second, [dict(r, result="pass") for r in records], judge="sha256:judge-b", repeat=1)
    runs.write_text(runs.read_text() + second.read_text())
    assert _run(["--labels", labels, "--verdicts", verdicts, "--unlabeled", unlabeled, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["calibration"]["status"] == "uncalibrated" and out["correctedPassRate"]["ci"] is None
    assert out["judgeNoise"]["repeatedItems"] == 30 and out["judgeNoise"]["widenedCi"] is None


def test_one_human_fail_on_test_never_validates_a_judge_and_says_how_many_fails_are_missing(tmp_path, capsys):
    """59 passes + 1 fail on test, every one agreed: TNR 1.0 on one trace is not a validation (>= 20 of each)."""
    labels = [{"traceId": f"p{i}", "label": "pass", "split": "test"} for i in range(59)]
    labels += [{"traceId": "f0", "label": "fail", "split": "test"}]
    verdicts = [_verdict(f"p{i}", "pass") for i in range(59)] + [_verdict("f0", "fail")]
    assert _run(["--labels", _write(tmp_path / "l.jsonl", labels),
                 "--verdicts", _write(tmp_path / "v.jsonl", verdicts), "--json"]) == 0
    validation = json.loads(capsys.readouterr().out)["validation"]
    assert validation["status"] == "unvalidated" and validation["minPerClass"] == 20
    assert validation["shortfalls"] == ["only 1 human fails on test (need at least 20 of each class: 19 more test "
                                        "label(s) of fail, judged pass or fail)"]


def test_the_status_warns_when_the_judge_spec_lacks_the_seeds_examples(files, tmp_path, capsys):
    labels, verdicts = files
    spec = tmp_path / "judge.yaml"
    spec.write_text("id: c1\ncriterion: c\npass: p\nfail: f\nexamples:\n"
                    "- {trace: p0, label: pass, critique: fine}\n- {trace: f0, label: fail, critique: bad}\n")
    assert _run(["--labels", labels, "--verdicts", verdicts, "--spec", str(spec)]) == 0
    assert "examples    warning: the judge spec has no borderline example" in capsys.readouterr().out
    assert _run(["--labels", labels, "--verdicts", verdicts, "--spec", str(spec), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["validation"]["exampleGaps"] == [
        "no borderline example (borderline: true)"]
