"""Executed notebooks as HTML pages without code cells, with no script or style from the network."""

from __future__ import annotations

import re
from pathlib import Path

_REMOTE_SCRIPT = re.compile(r'<script[^>]*\bsrc="https?://[^"]*"[^>]*>\s*</script>', re.I)
_REMOTE_LINK = re.compile(r'<link[^>]*\bhref="https?://[^"]*"[^>]*>', re.I)
_HEAD = re.compile(r"<head\b[^>]*>", re.I)

NOTEBOOK_PAGE_CSP = ("default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; "
                     "img-src data:; font-src data:")
"""The notebook pages' Content-Security-Policy, the one ``index.html`` carries: scripts and styles inline
only, images and fonts as ``data:`` URLs, nothing from the network, so a trace's text that reaches a
notebook's output cannot load anything or send anything out."""


def notebook_to_html(notebook_path: str | Path) -> str:
    """Render an executed notebook to a standalone HTML page with inputs hidden.

    nbconvert's templates reference require.js and MathJax on CDNs; those tags are removed so the
    page opens offline (evalkit's notebooks draw charts as inline SVG and need neither), and the page
    carries the report's Content-Security-Policy (:data:`NOTEBOOK_PAGE_CSP`) first in its head.
    """
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(notebook_path), as_version=4)
    exporter = HTMLExporter(template_name="lab", exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb)
    body = _REMOTE_SCRIPT.sub("", body)
    body = _REMOTE_LINK.sub("", body)
    csp = f'<meta http-equiv="Content-Security-Policy" content="{NOTEBOOK_PAGE_CSP}">'
    return _HEAD.sub(lambda head: f"{head.group(0)}\n{csp}", body, count=1)
