"""Twenty XSS payloads on every kind of page evalkit writes, opened in Chromium offline: nothing runs, nothing loads.

The payloads (``benchmarks/hostile.py``) are put into every free-text field a page shows: tool names,
trace outputs, metadata values a breakdown groups by, annotation notes, failure-mode names, criterion ids
and statements, judge critiques, skill-eval transcripts and reviews. Each page is opened with a listener
on dialogs (``alert``, ``confirm``, ``prompt``, ``print``), on every request (only ``file:``, ``data:`` and
``blob:`` may be asked for), on Content-Security-Policy violations and on ``window.__xss``. Each page must
also show the payloads as text (a page that dropped them would pass for the wrong reason), carry a policy
without ``unsafe-inline`` or ``unsafe-eval``, name no CDN and hold no raw bidi control.
"""

from __future__ import annotations

import base64
import html
import re
import shutil
import urllib.parse
from pathlib import Path

import pytest

from benchmarks.hostile import BIDI, PAYLOADS, hostile_subject
from evalkit.contracts.skilleval_report import LOCAL_PATH

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WATCH = """
window.__dialogs = [];
for (const name of ["alert", "confirm", "prompt", "print"]) {
  window[name] = function (m) { window.__dialogs.push(name + ":" + m); };
}
document.addEventListener("securitypolicyviolation",
  e => (window.__csp = window.__csp || []).push(e.violatedDirective + " " + (e.blockedURI || "")));
"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    """Every page kind, written from hostile inputs by the functions the commands call."""
    from evalkit.analysis import read_store, read_taxonomy, write_review
    from evalkit.contract_files import read_model
    from evalkit.contracts.skilleval import SkillEvalReport
    from evalkit.pipeline import run_subject
    from evalkit.skilleval import write_report_page
    from evalkit.traces import load

    root = tmp_path_factory.mktemp("hostile")
    subject = hostile_subject(ROOT / "data" / "sample", root / "subject")
    run = root / "run"
    manifest = run_subject(subject, run, at="2026-01-01T00:00:00Z")
    assert [n.status for n in manifest.notebooks] == ["ok"] * 5, manifest.notebooks
    found = {"run report": run / "index.html"}
    found.update({f"notebook {n.name}": run / n.name / "notebook.html" for n in manifest.notebooks})
    traces = load(root / "subject" / "traces.jsonl")
    found["review page"] = write_review(root / "review.html", traces[:25],
                                        annotations=read_store(root / "subject" / "annotations.jsonl").annotations,
                                        taxonomy=read_taxonomy(root / "subject" / "failure-modes.yaml"),
                                        title=PAYLOADS[1])
    report = read_model(ROOT / "examples" / "contracts" / "skill-eval-report.json", SkillEvalReport)
    # A report refuses text that looks like a local path ("</script>" starts one): the payloads it takes.
    taken = [p for p in PAYLOADS if not LOCAL_PATH.search(p)]
    obj = report.model_dump(mode="json")
    obj["human_review"] = " ".join(taken) + BIDI
    for i, case in enumerate(obj["cases"]):
        case["human_review"] = f"{taken[i % len(taken)]} {BIDI}"
    hostile = SkillEvalReport.model_validate(obj)
    found["skill-eval report page"] = write_report_page(hostile, root / "report.html")
    # the run report with the skill-eval section in it
    (run / "skilleval").mkdir(exist_ok=True)
    (run / "skilleval" / "report.json").write_text(hostile.model_dump_json(by_alias=True), encoding="utf-8")
    from evalkit.pipeline import write_run_report

    found["run report with skill-eval section"] = shutil.copy(write_run_report(run), run / "with-section.html")
    found["skill-eval worksheet"] = _worksheet(root)
    return found


def _worksheet(root: Path) -> Path:
    from skilleval.worksheet_stage import evidence_for, make_stage, sample_cases, sample_policy

    from evalkit.io.atomic import atomic_write_text
    from evalkit.skilleval.worksheet import render_worksheet

    defs = sample_cases()
    stage = make_stage(defs, {})
    transcript = "\n".join(PAYLOADS) + "\n" + BIDI
    evidence = {(c.case_id, arm): evidence_for(defs[c.case_id], arm, transcript=transcript)
                for c in stage.report.cases for arm in ("candidate", "baseline") if getattr(c, arm) is not None}
    path = root / "worksheet.html"
    atomic_write_text(path, render_worksheet(stage, evidence, cases=defs, policy=sample_policy()))
    return path


def _svg_text(src: str) -> str:
    """The text an SVG image given as a data: URL shows."""
    head, _, body = src.partition(",")
    svg = base64.b64decode(body).decode("utf-8") if head.endswith(";base64") else urllib.parse.unquote(body)
    return html.unescape(re.sub(r"<[^>]+>", "", svg))


KINDS = ["run report", "notebook 00_overview", "notebook 01_error_analysis", "notebook 02_judge_calibration",
         "notebook 03_flow_graph", "notebook 04_scorecard", "review page", "skill-eval report page",
         "run report with skill-eval section", "skill-eval worksheet"]


@pytest.mark.parametrize("kind", KINDS)
def test_no_payload_runs_and_nothing_loads(pages, browser, kind):
    path = pages[kind]
    html = path.read_text(encoding="utf-8")
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html)
    assert policy and "unsafe-inline" not in policy.group(1) and "unsafe-eval" not in policy.group(1)
    assert "default-src 'none'" in policy.group(1)
    assert not re.search(r"(cdn|jsdelivr|unpkg|cdnjs)\.[a-z]", html, re.I), "a CDN is named"  # a host, not base64
    assert not re.search("[\u202a-\u202e\u2066-\u2069]", html), "a raw bidi control"
    assert "altair-viz-" not in html
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    requests: list[str] = []
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.route("**/*", lambda r: (requests.append(r.request.url),
                                  r.continue_() if r.request.url.startswith(("file:", "data:", "blob:"))
                                  else r.abort()))
    page.add_init_script(WATCH)
    page.goto(path.as_uri())
    if page.query_selector(".vega"):
        page.wait_for_function("[...document.querySelectorAll('.vega')].every(d => d.querySelector('svg'))",
                               timeout=30_000)
    page.wait_for_timeout(500)
    # what the page shows, SVG labels included, script blocks left out
    shown = page.evaluate("(() => { const b = document.body.cloneNode(true); "
                          "b.querySelectorAll('script').forEach(s => s.remove()); return b.textContent; })()")
    # a notebook's charts are SVG images (nbconvert writes them as data: URLs): their labels are shown too
    images = page.evaluate("[...document.images].map(i => i.src).filter(s => s.startsWith('data:image/svg+xml'))")
    shown += "".join(_svg_text(src) for src in images)
    screenshot = path.with_suffix(".png")
    page.screenshot(path=str(screenshot), full_page=False)
    state = page.evaluate("({xss: window.__xss, dialogs: window.__dialogs, csp: window.__csp || []})")
    context.close()
    assert dialogs == [] and state["dialogs"] == [], (dialogs, state)
    assert state["xss"] is None
    assert state["csp"] == [], state["csp"]  # evalkit's own scripts and styles all ran under the policy
    assert [u for u in requests if not u.startswith(("file:", "data:", "blob:"))] == []
    assert any(p in shown for p in ("alert(1)", "alert(2)", "alert(5)", "onerror=alert(3)")), "no payload shown"
    assert screenshot.stat().st_size > 5_000
