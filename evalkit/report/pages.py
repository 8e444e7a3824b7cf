"""The one Jinja set-up every evalkit page is rendered with (run report, review page, skill-eval pages), and
the policy every page carries.

Each page keeps its templates in its own package's ``templates/`` folder; what must not differ between
them is how text reaches the page: autoescaping on (trace and evidence text is never markup), bidi
controls shown as their escapes (:func:`neutral_text`: a right-to-left override in a tool name would
display the rest of the line reversed), an undefined name an error rather than an empty string (a renamed
field cannot silently blank a page), and the template's final newline kept.

And what a page may run: :func:`render_page` renders a page's own scripts and styles from their templates,
inlines them, and writes a Content-Security-Policy naming exactly those by their SHA-256 (no
``unsafe-inline``, no ``unsafe-eval``): a script or style that reached the page any other way (a payload
in a trace that escaped its escaping) does not run, and nothing is loaded from anywhere (``default-src
'none'``, images and fonts as ``data:`` only).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Iterable
from typing import Any

import jinja2
from markupsafe import Markup

BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Characters that reorder the text around them (embeddings, overrides, isolates, marks)."""


def neutral_text(text: str) -> str:
    """``text`` with each bidi control shown as its escape (``\\u202E``), as the review page shows names."""
    return BIDI_CONTROLS.sub(lambda m: f"\\u{ord(m.group(0)):04X}", text)


def _finalize(value: Any) -> Any:
    # Markup is evalkit's own markup (a rendered section, an inlined script): it is left as it is.
    if isinstance(value, str) and not isinstance(value, Markup):
        return neutral_text(value)
    return value


def page_environment(package: str, **filters: Callable[..., Any]) -> jinja2.Environment:
    """A Jinja environment for the templates in ``PACKAGE/templates``.

    Args:
        package: the package holding the ``templates`` folder, e.g. ``"evalkit.analysis"``.
        **filters: extra template filters by name, e.g. ``readable=readable``.

    Returns:
        An environment with autoescaping, bidi controls neutralised, strict undefined names and kept
        trailing newlines.
    """
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True, finalize=_finalize,
    )
    env.filters.update(filters)
    return env


def source_hash(text: str) -> str:
    """The CSP source that allows exactly this inline script or style: ``'sha256-BASE64'``."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def content_security_policy(scripts: Iterable[str] = (), styles: Iterable[str] = ()) -> str:
    """The policy of a page whose only scripts and styles are ``scripts`` and ``styles`` (their exact text).

    Nothing loads from anywhere; a page without scripts gets ``script-src 'none'``.
    """
    def sources(texts: Iterable[str]) -> str:
        hashes = sorted({source_hash(text) for text in texts})
        return " ".join(hashes) if hashes else "'none'"

    return (f"default-src 'none'; script-src {sources(scripts)}; style-src {sources(styles)}; img-src data:; "
            "font-src data:; base-uri 'none'; form-action 'none'")


def render_page(package: str, template: str, *, scripts: Iterable[str | Markup] = (),
                styles: Iterable[str] = (), filters: dict[str, Callable[..., Any]] | None = None,
                **context: Any) -> str:
    """A page with its own scripts and styles inlined and allowed by hash, and nothing else.

    The template writes ``<meta http-equiv="Content-Security-Policy" content="{{ csp }}">`` first in its head,
    each style as ``<style>{{ page_styles[i] }}</style>`` and each script as ``<script>{{ page_scripts[i] }}
    </script>`` (no space around them: the hash is of the exact text between the tags).

    Args:
        package: the package holding the templates.
        template: the page's template.
        scripts: template names of the page's scripts (rendered with the context), or script text as Markup
            (a bundle shipped as it is).
        styles: template names of the page's style sheets.
        filters: extra template filters by name.
        **context: the page's values.
    """
    env = page_environment(package, **(filters or {}))

    def text(item: str | Markup) -> Markup:
        return item if isinstance(item, Markup) else Markup(env.get_template(item).render(**context))

    page_scripts = [text(item) for item in scripts]
    page_styles = [text(item) for item in styles]
    csp = content_security_policy(page_scripts, page_styles)
    return env.get_template(template).render(csp=Markup(csp), page_scripts=page_scripts, page_styles=page_styles,
                                             **context)
