"""Open the report in headless Chromium with the network blocked, as a reader offline would."""

import pytest

pytestmark = pytest.mark.slow


@pytest.mark.slow
def test_report_renders_offline_without_errors_or_xss(overview_run, offline_page, tmp_path):
    page = offline_page
    page.goto((overview_run / "index.html").as_uri())
    page.wait_for_function("document.querySelectorAll('.vega').length > 0 && "
                           "[...document.querySelectorAll('.vega')].every(d => d.querySelector('svg, canvas'))",
                           timeout=20_000)
    charts = page.eval_on_selector_all(".vega", "els => els.map(e => !!e.querySelector('svg, canvas'))")
    assert charts and all(charts)
    assert page.console_errors == [] and page.page_errors == []
    assert page.blocked == []  # nothing tried to leave the file
    assert all(u.startswith(("file://", "data:", "blob:")) for u in page.requests)
    assert page.evaluate("window.__xss") is None  # the trace's <script> and onerror did not run
    assert "<script>window.__xss=1</script>" in page.inner_text("body")  # shown as text instead
    page.screenshot(path=str(overview_run / "report.png"), full_page=True)
    assert (overview_run / "report.png").stat().st_size > 10_000
