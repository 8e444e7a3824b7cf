"""JSON embedded in an HTML ``<script>`` element: shared by the report and the review page.

Text taken from traces can hold ``</script>`` or ``<!--``; escaping ``<``, ``>`` and ``&`` (and the two
line separators JavaScript treats as line breaks) means no value can end the script block early. Bidi
controls are escaped too, so the page's source holds none raw (the page's script shows them as escapes).
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from evalkit.io.canonical import compact_sorted_json

_SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                              "\u2028": "\\u2028", "\u2029": "\\u2029",
                              # bidi controls travel escaped: the page's source shows none raw
                              **{chr(c): f"\\u{c:04x}" for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                                                                 *range(0x2066, 0x206A))}})


def script_json(value: Any) -> Markup:
    """JSON that is safe inside a ``<script>`` element (cannot end it or open a comment).

    Args:
        value: any JSON-serialisable value.

    Returns:
        Compact JSON with sorted keys, marked safe for Jinja so it is not escaped twice.
    """
    text = compact_sorted_json(value)
    return Markup(text.translate(_SCRIPT_SAFE))
