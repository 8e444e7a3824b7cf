"""Every page runs its own scripts and styles only, allowed by hash; text cannot close a script block or
reorder what a reader sees (issue 35, pages)."""

from __future__ import annotations

import json
import re

from evalkit.io.script_json import script_json
from evalkit.report import content_security_policy, neutral_text, render_page, vega_safe
from evalkit.report.pages import source_hash


def _policy(html: str) -> dict[str, list[str]]:
    [content] = re.findall(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html)
    return {d.split()[0]: d.split()[1:] for d in (part.strip() for part in content.split(";")) if d}


def test_a_page_allows_exactly_its_own_scripts_and_styles_by_hash():
    html = render_page("evalkit.skilleval", "report_page.html.j2", styles=["report_page.css.j2"],
                       title="t", section="")
    policy = _policy(html)
    styles = re.findall(r"<style>(.*?)</style>", html, re.S)
    assert policy["style-src"] == sorted(source_hash(s) for s in styles) and styles
    assert policy["script-src"] == ["'none'"] and policy["default-src"] == ["'none'"]
    assert "unsafe-inline" not in html and "unsafe-eval" not in html


def test_the_policy_names_each_hash_once_and_nothing_else():
    policy = content_security_policy(scripts=["a()", "a()", "b()"], styles=[])
    assert policy.count("'sha256-") == 2 and "style-src 'none'" in policy and "unsafe" not in policy


def test_text_reaches_a_page_with_bidi_controls_shown_as_escapes():
    html = render_page("evalkit.skilleval", "report_page.html.j2", title="refund \u202eredacted\u202c ok",
                       section="")
    assert "\u202e" not in html and "refund \\u202Eredacted\\u202C ok" in html
    assert neutral_text("a\u2066b\u2069c\u200fd") == "a\\u2066b\\u2069c\\u200Fd"


def test_json_in_a_script_element_cannot_end_it_and_holds_no_raw_line_separator_or_bidi_control():
    value = {"id": "</script><script>alert(1)</script>", "name": "tool\u2028name \u202eevil &"}
    text = str(script_json(value))
    assert "<" not in text and ">" not in text and "&" not in text
    assert not re.search("[\u2028\u2029\u202a-\u202e\u2066-\u2069]", text)
    assert json.loads(text) == value  # the page's script reads the same value back


def test_a_chart_spec_holds_no_line_separator_vega_cannot_parse_and_keeps_its_fields_matched():
    spec = {"data": {"values": [{"tool\u2028name": "a\u2028b \u202ex"}]},
            "encoding": {"x": {"field": "tool\u2028name", "sort": ["a\u2028b \u202ex"]}}}
    safe = vega_safe(spec)
    assert "\u2028" not in json.dumps(safe, ensure_ascii=False) and "\u202e" not in json.dumps(safe, ensure_ascii=False)
    assert safe["encoding"]["x"]["field"] in safe["data"]["values"][0]
    assert safe["encoding"]["x"]["sort"][0] == safe["data"]["values"][0][safe["encoding"]["x"]["field"]]
