"""The analysis commands end to end on real files: sample, analysis rates/saturation/agreement, labels import."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest
from analysis_builders import make_trace, note

from evalkit.analysis import append_annotations, read_store
from evalkit.cli.analysis import add_analysis_parser
from evalkit.cli.labels import add_labels_parser
from evalkit.cli.review import add_review_parser
from evalkit.cli.sample import add_sample_parser
from evalkit.errors import InputError
from evalkit.io.canonical import canonical_line
from evalkit.io.strict_json import read_json_strict
from evalkit.traces import load, write_jsonl

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """Parse with the sample, analysis, review and labels commands only (as ``evalkit`` wires them) and run; errors as the CLI shows them."""
    parser = argparse.ArgumentParser(prog="evalkit")
    sub = parser.add_subparsers(dest="command")
    for add in (add_sample_parser, add_analysis_parser, add_review_parser, add_labels_parser):
        add(sub)
    args = parser.parse_args([str(a) for a in argv])
    capsys.readouterr()
    try:
        code = args.func(args)
    except InputError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        code = 1
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def traces_file(tmp_path) -> Path:
    traces = [make_trace(f"t{i:02d}", metadata={"intent": "refund" if i % 3 else "status"}) for i in range(30)]
    traces.append(make_trace("broken", failed_tools=1))
    path = tmp_path / "traces.jsonl"
    write_jsonl(traces, path)
    return path


def test_sample_writes_the_chosen_traces_in_review_order(capsys, traces_file, tmp_path):
    out = tmp_path / "picked.jsonl"
    code, printed, _ = run(capsys, "sample", traces_file, "--n", "8", "--strategy", "stratified", "--by", "intent",
                           "--seed", "4", "--out", out)
    assert code == 0 and "sampled 8 of 31 traces (stratified, seed 4)" in printed
    picked = load(out)
    assert [t.metadata.get("intent", "(missing)") for t in picked][:3] == ["(missing)", "refund", "status"]
    again = tmp_path / "again.jsonl"
    run(capsys, "sample", traces_file, "--n", "8", "--strategy", "stratified", "--by", "intent", "--seed", "4",
        "--out", again)
    assert again.read_bytes() == out.read_bytes()


def test_sample_says_when_fewer_traces_qualify(capsys, traces_file, tmp_path):
    code, _, err = run(capsys, "sample", traces_file, "--n", "5", "--strategy", "failure-driven",
                       "--out", tmp_path / "f.jsonl")
    assert code == 0 and "only 1 trace qualifies for failure-driven sampling" in err
    assert [t.id for t in load(tmp_path / "f.jsonl")] == ["broken"]
    code, _, err = run(capsys, "sample", traces_file, "--n", "5", "--strategy", "uncertainty",
                       "--out", tmp_path / "u.jsonl")
    assert code == 1 and "verdicts" in err
    code, _, err = run(capsys, "sample", traces_file, "--n", "5", "--out", tmp_path / "u.json")
    assert code == 1 and "must end in .jsonl" in err


def test_rates_on_the_sample_match_its_ground_truth(capsys):
    code, printed, _ = run(capsys, "analysis", "rates", SAMPLE / "annotations.jsonl", "--taxonomy",
                           SAMPLE / "failure-modes.yaml", "--json")
    assert code == 0
    rates = json.loads(printed)
    truth = read_json_strict(SAMPLE / "ground-truth.json")["annotations"]["reviewers"]["ana"]
    assert rates["annotator"] == "ana" and rates["reviewed"] == truth["reviewedTraces"]
    assert "untaggedFails" in rates and "untagged_fails" not in rates  # camelCase, as every --json
    assert {r["mode"]: r["count"] for r in rates["modes"]} == {
        m: row["annotated"] for m, row in truth["failureModes"].items()}
    assert [r["count"] for r in rates["modes"]] == sorted((r["count"] for r in rates["modes"]), reverse=True)
    assert "untaggedFails" in rates and "untagged_fails" not in rates  # camelCase, as every --json
    code, printed, _ = run(capsys, "analysis", "rates", SAMPLE / "annotations.jsonl")
    lines = printed.splitlines()
    assert lines[0].startswith("annotator ana: 120 reviewed")
    assert "95% CI" in lines[1] and "%, " in lines[2]


def test_saturation_and_agreement_on_the_sample(capsys):
    code, printed, _ = run(capsys, "analysis", "saturation", SAMPLE / "annotations.jsonl", "--json")
    curve = json.loads(printed)
    assert code == 0 and curve["saturated"] and len(curve["points"]) == 120
    assert curve["points"][-1]["distinct"] == 4 and curve["points"][0]["traceId"]
    assert curve["sinceLastNew"] == 120 - curve["lastNewAt"]
    code, _, err = run(capsys, "analysis", "saturation", SAMPLE / "annotations.jsonl", "--window", "0")
    assert code == 1 and "error: --window must be at least 1, got 0" in err
    code, printed, _ = run(capsys, "analysis", "agreement", SAMPLE / "annotations.jsonl", "ana", "ben", "--json")
    agreement = json.loads(printed)
    assert code == 0 and agreement["sharedTraces"] == 40
    assert agreement["label"]["kappa"] > 0.8


def test_rates_warn_about_a_torn_store_but_still_count(capsys, tmp_path):
    store = tmp_path / "a.jsonl"
    append_annotations(store, [note("t1", "fail", ("x",)), note("t2")])
    with store.open("ab") as fh:
        fh.write(b'{"annotator":"ana","at":"2026')
    code, printed, err = run(capsys, "analysis", "rates", store)
    assert code == 0 and "2 reviewed" in printed
    assert "skipped 1 line cut short by an interrupted write (line 3)" in err
    code, _, err = run(capsys, "analysis", "rates", tmp_path / "none.jsonl")
    assert code == 1 and "annotation store not found" in err


def test_rates_refuse_a_store_of_garbage_instead_of_counting_nothing(capsys, tmp_path):
    store = tmp_path / "a.jsonl"
    store.write_bytes(b"\xef\xbb\xbf" + b"not a record at all " * 150 + b"\n")  # 3 KB behind a BOM
    code, printed, err = run(capsys, "analysis", "rates", store)
    assert code == 1 and "reviewed" not in printed and f"{store}:1: byte-order mark" in err


def test_labels_import_drops_a_cut_off_last_line_and_says_so(capsys, tmp_path):
    store = tmp_path / "store.jsonl"
    append_annotations(store, [note("t1")])
    intact = store.read_bytes()
    store.write_bytes(intact + b'{"annotator":"ana","at":"2026')
    export = _export(tmp_path / "export.json", [note("t2").to_json_obj()])
    code, printed, err = run(capsys, "labels", "import", export, "--into", store)
    assert code == 0 and "appended 1 annotation by ana" in printed
    assert f"{store}: line 2, cut off by an interrupted write, was dropped" in err
    assert store.read_bytes() == intact + canonical_line(note("t2").to_json_obj()).encode()


def _export(path: Path, annotations: list[dict], annotator: str = "ana") -> Path:
    path.write_text(json.dumps({"format": "evalkit-review-export", "version": 1, "annotator": annotator,
                                "annotations": annotations}, indent=2), encoding="utf-8")
    return path


def test_labels_import_validates_appends_and_skips_what_is_already_there(capsys, tmp_path):
    store = tmp_path / "store.jsonl"
    append_annotations(store, [note("t1")])
    before = store.read_bytes()
    records = [note("t1").to_json_obj(), note("t2", "fail", ("x",), minute=2).to_json_obj()]
    export = _export(tmp_path / "export.json", records)
    code, printed, _ = run(capsys, "labels", "import", export, "--into", store)
    assert code == 0 and "appended 1 annotation by ana" in printed and "(1 already there)" in printed
    assert store.read_bytes().startswith(before)
    assert [a.trace_id for a in read_store(store).annotations] == ["t1", "t2"]
    code, printed, _ = run(capsys, "labels", "import", export, "--into", store)
    assert code == 0 and "appended 0 annotations" in printed


def test_labels_import_refuses_a_bad_export_with_every_problem_located(capsys, tmp_path):
    store = tmp_path / "store.jsonl"
    bad = [note("t1").to_json_obj() | {"label": "maybe"}, note("t2").to_json_obj() | {"at": "soon"}]
    export = _export(tmp_path / "export.json", bad)
    code, _, err = run(capsys, "labels", "import", export, "--into", store)
    assert code == 1
    assert f"{export}: annotations[0].label: Input should be 'pass', 'fail' or 'defer'" in err
    assert f"{export}: annotations[1].at: not an ISO 8601 timestamp: 'soon'" in err
    assert "not imported (2 problems)" in err
    export = _export(tmp_path / "other.json", [note("t2").to_json_obj() | {"annotator": "ben"}])
    code, _, err = run(capsys, "labels", "import", export, "--into", store)
    assert code == 1 and "annotations[0].annotator: 'ben' is not the export's annotator 'ana'" in err
    assert not store.exists()  # nothing appended
    taxonomy = tmp_path / "modes.yaml"
    taxonomy.write_text("subject: s\nversion: 1\nmodes:\n- {id: x, name: X, definition: d}\n", encoding="utf-8")
    export = _export(tmp_path / "modes.json", [note("t1", "fail", ("y",)).to_json_obj()])
    code, _, err = run(capsys, "labels", "import", export, "--into", store, "--taxonomy", taxonomy)
    assert code == 1 and "annotations[0].modes[0]: unknown failure mode 'y'" in err
    assert not store.exists()
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    code, _, err = run(capsys, "labels", "import", tmp_path / "broken.json", "--into", store)
    assert code == 1 and "broken.json:1" in err


TAXONOMY = "subject: s\nversion: 1\nmodes:\n- {id: x, name: X, definition: d}\n"


def test_rates_name_the_store_line_of_an_unknown_failure_mode(capsys, tmp_path):
    store = tmp_path / "a.jsonl"
    # line 2 is relabelled by line 4: only the latest label counts, so the error is on line 4, not 2
    append_annotations(store, [note("t1", "fail", ("x",)), note("t2", "fail", ("x",)), note("t3"),
                               note("t2", "fail", ("x", "made-up"), minute=5)])
    taxonomy = tmp_path / "modes.yaml"
    taxonomy.write_text(TAXONOMY, encoding="utf-8")
    code, printed, err = run(capsys, "analysis", "rates", store, "--taxonomy", taxonomy)
    assert code == 1 and "reviewed" not in printed
    assert f"error: {store}:4: modes[1]: unknown failure mode 'made-up' (taxonomy has: x)" in err
    # the same store, relabelled once more without the mode: counted again
    append_annotations(store, [note("t2", "fail", ("x",), minute=6)])
    code, printed, _ = run(capsys, "analysis", "rates", store, "--taxonomy", taxonomy)
    assert code == 0 and "3 reviewed (2 fail, 1 pass)" in printed


@pytest.mark.parametrize("command", ["sample", "review"])
def test_sample_and_review_refuse_to_write_over_an_input(capsys, traces_file, tmp_path, command):
    before = traces_file.read_bytes()
    argv = (["sample", traces_file, "--n", "3"] if command == "sample" else ["review", "build", traces_file])
    code, _, err = run(capsys, *argv, "--out", traces_file)
    assert code == 1 and f"--out ({traces_file}) is also the input TRACES ({traces_file})" in err
    # the same file by another name (a symbolic link, a path through ..) is the same input
    link = tmp_path / "link.jsonl"
    link.symlink_to(traces_file)
    code, _, err = run(capsys, *argv, "--out", tmp_path / "sub" / ".." / "link.jsonl")
    assert code == 1 and ") is also the input TRACES" in err
    assert traces_file.read_bytes() == before
    if command == "review":
        store = tmp_path / "store.html"  # a store of any name: the check is on the file, not its suffix
        append_annotations(store, [note("t01")])
        kept = store.read_bytes()
        code, _, err = run(capsys, "review", "build", traces_file, "--labels", store, "--out", store)
        assert code == 1 and f"--out ({store}) is also the input --labels ({store})" in err
        assert store.read_bytes() == kept
    else:
        verdicts = tmp_path / "verdicts.jsonl"
        verdicts.write_text("", encoding="utf-8")
        code, _, err = run(capsys, "sample", traces_file, "--n", "3", "--verdicts", verdicts, "--out", verdicts)
        assert code == 1 and f"--out ({verdicts}) is also the input --verdicts ({verdicts})" in err
