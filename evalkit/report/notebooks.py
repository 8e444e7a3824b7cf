"""Executed notebooks as HTML pages without code cells, without any script, and loading nothing.

evalkit's notebooks draw their charts as SVG (altair's ``svg`` renderer, through vl-convert: the Vega the
report inlines, run when the notebook runs), so their pages need no script at all. nbconvert's templates
carry some (a Mermaid loader importing from a CDN, MathJax's configuration): every script element is taken
out, and the page's Content-Security-Policy allows none (``script-src 'none'``), so a trace's text that
reached a notebook's output as markup cannot run either. Styles are nbconvert's and the outputs' own, each
allowed by its hash; nothing loads from the network. Bidi controls are shown as their escapes.
"""

from __future__ import annotations

import re
from pathlib import Path

from evalkit.report.pages import content_security_policy, neutral_text

_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script\s*>", re.I | re.S)
_REMOTE_LINK = re.compile(r'<link[^>]*\bhref="https?://[^"]*"[^>]*>', re.I)
_STYLE = re.compile(r"<style\b[^>]*>(.*?)</style\s*>", re.I | re.S)
_HEAD = re.compile(r"<head\b[^>]*>", re.I)


def notebook_page_csp(html: str) -> str:
    """The policy of a notebook page: no script, its own style elements by hash, nothing from anywhere."""
    return content_security_policy(scripts=(), styles=[m.group(1) for m in _STYLE.finditer(html)])


def notebook_to_html(notebook_path: str | Path) -> str:
    """Render an executed notebook to a standalone HTML page with inputs hidden (see the module doc)."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(notebook_path), as_version=4)
    exporter = HTMLExporter(template_name="lab", exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb)
    body = _SCRIPT.sub("", body)
    body = _REMOTE_LINK.sub("", body)
    body = neutral_text(body)
    csp = f'<meta http-equiv="Content-Security-Policy" content="{notebook_page_csp(body)}">'
    return _HEAD.sub(lambda head: f"{head.group(0)}\n{csp}", body, count=1)
