"""``index.html``: one self-contained report per run, from ``run.json`` and each notebook's summary.

Everything taken from traces or summaries goes through Jinja's autoescaping; chart specs are
embedded as JSON with ``<``, ``>`` and ``&`` escaped, so no text can close its script block. The page runs
its two scripts only (the Vega bundle and the chart loader, allowed by hash: :func:`render_page`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from markupsafe import Markup

from evalkit.contracts.summary import NotebookSummary, RunManifest
from evalkit.errors import InputError
from evalkit.io.atomic import atomic_write_text
from evalkit.io.script_json import script_json
from evalkit.report.numbers import readable
from evalkit.report.pages import render_page
from evalkit.report.sections import registered_sections
from evalkit.report.summary_builder import SUMMARY_FILE
from evalkit.report.vega import vega_bundle

MANIFEST_FILE = "run.json"
INDEX_FILE = "index.html"
NOTEBOOK_HTML = "notebook.html"


def _title(name: str) -> str:
    words = name.split("_", 1)[-1].replace("_", " ")
    return words[:1].upper() + words[1:]


def _figures(folder: Path, summary: NotebookSummary | None) -> list[dict[str, Any]]:
    """The summary's drawings as ``data:`` images (an SVG in an ``img`` runs no script); a drawing
    whose file is gone is kept with ``src`` None, and the report says so."""
    import base64

    figures = []
    for figure in summary.figures if summary is not None else []:
        path = folder / figure.path
        src = (f"data:image/svg+xml;base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"
               if path.is_file() else None)
        figures.append({"title": figure.title, "caption": figure.caption, "src": src, "file": figure.path})
    return figures


def render_report(run_dir: str | Path) -> str:
    """The HTML of a run's report (see :func:`write_report`)."""
    from evalkit.contract_files import read_model

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
            "figures": _figures(run / nb.name, summary), "parameters": nb.parameters,
            "notebook_html": f"{nb.name}/{NOTEBOOK_HTML}" if html_page.exists() else None,
        })
    # Sections other packages registered (evalkit.report.sections), each shown when its file is here
    shown = [s for s in registered_sections() if (run / s.file).is_file()]
    added = [{"id": s.id, "title": s.title, "html": s.render(run / s.file)} for s in shown]
    return render_page("evalkit.report", "index.html.j2",
                       scripts=[Markup(vega_bundle()), "index.js.j2", *(Markup(s.script) for s in shown if s.script)],
                       styles=["index.css.j2", *(Markup(s.style) for s in shown if s.style)],
                       filters={"readable": readable}, manifest=manifest,
                       sections=sections, added_sections=added)


def write_report(run_dir: str | Path) -> Path:
    """Write ``RUN_DIR/index.html`` atomically; returns its path."""
    path = Path(run_dir) / INDEX_FILE
    atomic_write_text(path, render_report(run_dir))
    return path
