"""What the trace viewer embeds: the traces the tables name, a few failing each criterion and mode, no more."""

from __future__ import annotations

import base64
import gzip
import re

from evalkit.contracts.summary import NotebookRun, RunManifest
from evalkit.io import atomic_write_text, canonical_dumps
from evalkit.report import SummaryBuilder
from evalkit.subjects import load_subject
from evalkit.viewer import cited_names, read_trace_view, render_viewer_section, trace_view, write_trace_view
from evalkit.viewer import payload as viewer_payload


def _run_naming(folder, rows):
    """A run folder whose one summary has a table with ``rows`` (each a list of cells)."""
    import polars as pl

    (folder / "00_overview").mkdir(parents=True)
    summary = SummaryBuilder("00_overview", "Overview", "viewer")
    summary.table("Worst traces", pl.DataFrame({"trace": [r[0] for r in rows], "note": [r[1] for r in rows]}))
    summary.conclude("done")
    summary.write(folder / "00_overview")
    manifest = RunManifest(subject="viewer", evalkit_version="0", seed=0, inputs=[],
                           notebooks=[NotebookRun(name="00_overview", status="ok")])
    atomic_write_text(folder / "run.json", canonical_dumps(manifest.model_dump(mode="json")))
    return folder


def test_the_view_holds_the_cited_traces_and_the_first_failing_per_group(tmp_path, viewer_subject, monkeypatch):
    monkeypatch.setattr(viewer_payload, "FAILING_PER_GROUP", 2)
    run = _run_naming(tmp_path / "run", [["t8", "worst"], ["t10, t6", "listed together"], ["nope", "not a trace"]])
    assert cited_names(run)[:4] == ["t8", "worst", "t10, t6", "t10"]
    view = trace_view(run, load_subject(viewer_subject))
    # t8, t10, t6 are named; t1, t3 fail `grounded` first (2 per group); t1, t3 are also the first wrong-order fails
    assert [t["id"] for t in view["traces"]] == ["t8", "t10", "t6", "t1", "t3"]
    assert (view["total"], view["cited"]) == (12, 3)
    t1 = next(t for t in view["traces"] if t["id"] == "t1")
    assert t1["verdicts"][0]["result"] == "fail" and t1["verdicts"][0]["refs"][0]["obs"] == "t1-x1"
    assert t1["review"]["modes"] == ["wrong-order"] and t1["review"]["annotator"] == "ana"
    assert [m["role"] for m in t1["transcript"]] == ["user", "assistant", "tool", "assistant"]
    assert {"from": "t1-x1", "to": "t1-g2", "slot": "status", "kind": "threaded"} in t1["flow"]["edges"]
    assert view["criteria"] == ["grounded"] and view["modes"][0]["id"] == "wrong-order"


def test_the_view_is_compressed_the_same_on_every_run(tmp_path, viewer_subject):
    run = _run_naming(tmp_path / "run", [["t0", "x"]])
    first = write_trace_view(run, load_subject(viewer_subject)).read_bytes()
    again = write_trace_view(run, load_subject(viewer_subject)).read_bytes()
    assert first == again and gzip.decompress(first).startswith(b"{")
    raw, data = read_trace_view(run / "trace-view.json.gz")
    assert raw == first and data["total"] == 12


def test_the_section_embeds_only_base64_so_no_trace_text_reaches_the_markup(tmp_path, viewer_subject):
    run = _run_naming(tmp_path / "run", [["t0", "x"], ["t1", "y"]])
    path = write_trace_view(run, load_subject(viewer_subject))
    html = str(render_viewer_section(path))
    assert "window.__xss" not in html and "<img" not in html
    data = re.search(r'<script type="application/octet-stream" id="tv-data"[^>]*>([^<]*)</script>', html).group(1)
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", data) and base64.b64decode(data) == path.read_bytes()
    assert "This file holds 7 of the run's 12 traces: the 2 the tables above name" in html
