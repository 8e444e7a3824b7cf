"""Numbers in a report read as a person would say them; the summary keeps them exact."""

import pytest

from evalkit.report.numbers import readable, readable_duration


@pytest.mark.parametrize(("value", "shown"), [
    (5825.652, "5,826"), (2123.0, "2,123"), (41256, "41,256"), (5.0, "5"), (0.0, "0"), (12.3456, "12.3"),
    (0.0714285, "0.0714"), (0.5, "0.5"), (-3.14159, "-3.14"), (True, "yes"), (False, "no"), (None, ""),
    ("tr-0010", "tr-0010"),
])
def test_readable(value, shown):
    assert readable(value) == shown


@pytest.mark.parametrize(("ms", "said"), [
    (5825.652, (5.8, "s")), (412.4, (412.0, "ms")), (3.14159, (3.1, "ms")), (300_000, (5.0, "min")),
    (None, (None, "ms")),
])
def test_readable_duration(ms, said):
    assert readable_duration(ms) == said
