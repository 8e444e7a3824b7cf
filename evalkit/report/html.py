"""``index.html``: one self-contained report per run, from ``run.json`` and each notebook's summary.

Everything taken from traces or summaries goes through Jinja's autoescaping; chart specs are
embedded as JSON with ``<``, ``>`` and ``&`` escaped, so no text can close its script block.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from evalkit.contracts.summary import NotebookSummary, RunManifest
from evalkit.io.atomic import atomic_write_text
from evalkit.io.errors import InputError
from evalkit.report.summary import SUMMARY_FILE
from evalkit.report.vega import vega_bundle

MANIFEST_FILE = "run.json"
INDEX_FILE = "index.html"
NOTEBOOK_HTML = "notebook.html"

_SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                              "\u2028": "\\u2028", "\u2029": "\\u2029"})


def script_json(value: Any) -> Markup:
    """JSON that is safe inside a ``<script>`` element (cannot end it or open a comment)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return Markup(text.translate(_SCRIPT_SAFE))


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("evalkit.report", "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
    )


def _title(name: str) -> str:
    words = name.split("_", 1)[-1].replace("_", " ")
    return words[:1].upper() + words[1:]


def render_report(run_dir: str | Path) -> str:
    """The HTML of a run's report (see :func:`write_report`)."""
    from evalkit.validation import read_model

    run = Path(run_dir)
    manifest_path = run / MANIFEST_FILE
    if not manifest_path.exists():
        raise InputError("not a run folder: run.json is missing (run `evalkit run` first)", file=str(run))
    manifest = read_model(manifest_path, RunManifest)
    sections = []
    for nb in manifest.notebooks:
        summary_path = run / nb.name / SUMMARY_FILE
        summary = read_model(summary_path, NotebookSummary) if nb.status == "ok" else None
        charts = []
        if summary is not None:
            for i, chart in enumerate(summary.charts):
                charts.append({"id": f"chart-{nb.name}-{i}", "title": chart.title, "caption": chart.caption,
                               "spec_json": script_json(chart.spec)})
        html_page = run / nb.name / NOTEBOOK_HTML
        sections.append({
            "name": nb.name, "title": summary.title if summary else _title(nb.name), "status": nb.status,
            "error": nb.error, "summary": summary, "charts": charts,
            "notebook_html": f"{nb.name}/{NOTEBOOK_HTML}" if html_page.exists() else None,
        })
    template = _environment().get_template("index.html.j2")
    return template.render(manifest=manifest, sections=sections, vega_bundle=Markup(vega_bundle()))


def write_report(run_dir: str | Path) -> Path:
    """Write ``RUN_DIR/index.html`` atomically; returns its path."""
    path = Path(run_dir) / INDEX_FILE
    atomic_write_text(path, render_report(run_dir))
    return path
