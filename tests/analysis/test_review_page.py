"""review.html as a file: self-contained, trace text never becomes markup, labels preloaded per annotator."""

from __future__ import annotations

import json
import re

import pytest
from analysis_builders import make_trace, note

from evalkit.analysis import Taxonomy, render_review, review_key, write_review
from evalkit.errors import InputError

XSS = "</script><script>window.__xss=1</script><img src=x onerror=window.__xss=2>"


def _data(html: str) -> dict:
    match = re.search(r'<script id="review-data" type="application/json">(.*?)</script>', html, re.S)
    assert match
    return json.loads(match.group(1))


def test_page_is_self_contained_and_embeds_trace_text_only_as_escaped_json(tmp_path):
    trace = make_trace("t<1>", answer=XSS, metadata={XSS: XSS})
    path = write_review(tmp_path / "review.html", [trace, make_trace("t2")], title=f"batch {XSS}")
    html = path.read_text(encoding="utf-8")
    assert "<script>window.__xss" not in html and "<img src=x" not in html
    assert "batch &lt;/script&gt;" in html  # the title is escaped by the template
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html
    data = _data(html)
    assert data["traces"][0]["output"] == XSS  # the text survives, as data
    assert data["traces"][0]["id"] == "t<1>"


def test_storage_key_is_a_digest_of_the_trace_ids():
    key = review_key(["a", "b"])
    assert key.startswith("evalkit-review:") and key == review_key(["a", "b"])
    assert key != review_key(["b", "a"]) and key != review_key(["a", "b", "c"])
    # one reviewer's page never preloads another's labels from the same browser
    assert review_key(["a", "b"], "ana") != review_key(["a", "b"], "ben") != key
    assert _data(render_review([make_trace("a"), make_trace("b")]))["storageKey"] == key


def test_latest_labels_of_the_annotator_are_preloaded():
    traces = [make_trace("t1"), make_trace("t2")]
    labels = [note("t1", "pass"), note("t1", "fail", ("x",), minute=3, text="later", first="t1-plan"),
              note("t2", "defer", annotator="ben"), note("elsewhere", "pass")]
    data = _data(render_review(traces, annotations=labels))
    assert data["annotator"] == "ana"
    assert data["preloaded"] == {"t1": {"label": "fail", "note": "later", "modes": ["x"],
                                        "firstFailingObs": "t1-plan", "at": labels[1].at}}
    assert [m["id"] for m in data["modes"]] == ["x"]  # without a taxonomy: the modes in use
    ben = _data(render_review(traces, annotations=labels, annotator="ben"))
    assert ben["annotator"] == "ben" and list(ben["preloaded"]) == ["t2"]
    assert _data(render_review(traces, annotations=labels, annotator="new"))["preloaded"] == {}


def test_taxonomy_modes_become_tags_and_hidden_metadata_stays_off_the_page():
    taxonomy = Taxonomy.model_validate({"subject": "s", "version": 1, "modes": [
        {"id": "a", "name": "Mode A", "definition": "first", "examples": ["ex"]},
        {"id": "b", "name": "Mode B", "definition": "second"}]})
    trace = make_trace("t1", metadata={"intent": "refund", "injected_failures": ["a"]})
    data = _data(render_review([trace], taxonomy=taxonomy, hide_metadata=["injected_failures"]))
    assert [(m["id"], m["name"]) for m in data["modes"]] == [("a", "Mode A"), ("b", "Mode B")]
    assert data["traces"][0]["metadata"] == {"intent": "refund"}
    with pytest.raises(InputError, match="unknown failure mode 'z'"):
        render_review([trace], annotations=[note("t1", "fail", ("z",))], taxonomy=taxonomy)


def test_bad_inputs_are_refused():
    with pytest.raises(InputError, match="no traces"):
        render_review([])
    with pytest.raises(InputError, match="duplicate trace id 't1'"):
        render_review([make_trace("t1"), make_trace("t1")])
