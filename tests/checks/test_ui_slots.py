"""The expected UI slots against an HTML page: a computed value absent from the page is reported."""

from __future__ import annotations

import json

from evalkit.checks.ui_slots import check_ui_slots, page_text
from evalkit.cli.main import main
from evalkit.contracts.flow import ExpectedFlow
from evalkit.contracts.trace import Trace
from evalkit.io import canonical_line


def _trace(tid: str, answer: str, total: float | None = None) -> Trace:
    output = {"answer": answer} if total is None else {"answer": answer, "total": total}
    return Trace.model_validate({"id": tid, "observations": [
        {"id": f"{tid}-o1", "type": "GENERATION", "name": "draft", "output": {"answer": "a first draft"}},
        {"id": f"{tid}-o2", "type": "GENERATION", "name": "respond", "output": output}]})


EXPECTED = ExpectedFlow(dispatch_tool_names=[], edges=[], expected_ui_slots=["answer", "total", "eta"])
PAGE = """<html><head><style>.a{}</style><script>var x = "Refunds & returns: 30   days";</script></head>
<body><h1>Answers</h1><p>Refunds &amp; returns:
30 days</p><p>Order total <b>59.9</b></p></body></html>"""


def test_a_value_computed_but_absent_from_the_page_is_a_missing_data_leak():
    traces = [_trace("t1", "Refunds & returns: 30 days", 59.9), _trace("t2", "Your parcel left today.")]
    check = check_ui_slots(EXPECTED, traces, PAGE)
    assert check.looked_for == 3 and not check.ok
    [missing] = check.missing                         # the last value under the slot, not the draft
    assert (missing.trace_id, missing.slot, missing.obs, missing.value) == ("t2", "answer", "t2-o2",
                                                                            "Your parcel left today.")
    assert check.never_computed == ["eta"]
    assert check.lines()[0] == "ui slots answer, total, eta: 2 of 3 computed value(s) shown on the page"


def test_the_page_is_read_as_shown_entities_decoded_scripts_left_out_case_kept():
    assert "Refunds & returns: 30 days" in page_text(PAGE) and "var x" not in page_text(PAGE)
    only_in_script = check_ui_slots(EXPECTED, [_trace("t3", "Refunds & returns: 30   days")],
                                    PAGE.replace("<p>Refunds &amp; returns:\n30 days</p>", ""))
    assert [m.trace_id for m in only_in_script.missing] == ["t3"]
    assert not check_ui_slots(EXPECTED, [_trace("t4", "refunds & returns: 30 days")], PAGE).ok


def test_flow_ui_slots_command_exits_3_on_a_missing_value(tmp_path, capsys):
    expected, traces, page = tmp_path / "flow.json", tmp_path / "t.jsonl", tmp_path / "page.html"
    expected.write_text(json.dumps(EXPECTED.to_json_obj()))
    traces.write_text("".join(canonical_line(t.to_json_obj()) for t in
                              [_trace("t1", "Refunds & returns: 30 days", 59.9), _trace("t2", "Gone.")]))
    page.write_text(PAGE)
    assert main(["flow", "ui-slots", str(expected), str(traces), str(page)]) == 3
    out = capsys.readouterr().out
    assert "missing: t2 answer (from t2-o2): 'Gone.'" in out and "never computed: slot 'eta'" in out
    page.write_text(PAGE + "<p>Gone.</p>")
    assert main(["flow", "ui-slots", str(expected), str(traces), str(page)]) == 0
