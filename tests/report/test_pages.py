"""Every evalkit page is rendered the same way: text escaped, a missing name an error, the final newline kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jinja2
import pytest

from evalkit.report import page_environment


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A package of its own with a ``templates`` folder, as each page-rendering evalkit package has."""
    root = tmp_path / "pages_fixture"
    (root / "templates").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "templates" / "page.html.j2").write_text("<p>{{ note }}</p><p>{{ count | loud }}</p>\n")
    (root / "templates" / "typo.html.j2").write_text("<p>{{ notes }}</p>\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "pages_fixture"


def test_trace_text_is_escaped_and_the_final_newline_kept(package: str) -> None:
    page = page_environment(package, loud=lambda n: f"{n}!").get_template("page.html.j2").render(
        note='</p><script>alert("x")</script>', count=3)
    assert page == "<p>&lt;/p&gt;&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;</p><p>3!</p>\n"


def test_a_name_the_template_uses_but_the_page_does_not_give_is_an_error(package: str) -> None:
    with pytest.raises(jinja2.UndefinedError, match="notes"):
        page_environment(package).get_template("typo.html.j2").render(note="hello")


def test_a_filter_not_given_is_an_error_when_the_template_is_loaded(package: str) -> None:
    with pytest.raises(jinja2.TemplateAssertionError, match="loud"):
        page_environment(package).get_template("page.html.j2")


@pytest.mark.slow
def test_rendering_a_page_does_not_import_the_chart_library() -> None:
    # altair takes about two seconds to import; `evalkit review build` and the skill-eval pages need none of it.
    code = ("import sys; import evalkit.analysis.review, evalkit.skilleval.worksheet, evalkit.skilleval.report_view;"
            "from evalkit.report import page_environment, MANIFEST_FILE; print('altair' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
