"""The one Jinja set-up every evalkit page is rendered with (run report, review page, skill-eval pages).

Each page keeps its templates in its own package's ``templates/`` folder; what must not differ between
them is how text reaches the page: autoescaping on (trace and evidence text is never markup), an
undefined name an error rather than an empty string (a renamed field cannot silently blank a page), and
the template's final newline kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jinja2


def page_environment(package: str, **filters: Callable[..., Any]) -> jinja2.Environment:
    """A Jinja environment for the templates in ``PACKAGE/templates``.

    Args:
        package: the package holding the ``templates`` folder, e.g. ``"evalkit.analysis"``.
        **filters: extra template filters by name, e.g. ``readable=readable``.

    Returns:
        An environment with autoescaping, strict undefined names and kept trailing newlines.
    """
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
    )
    env.filters.update(filters)
    return env
