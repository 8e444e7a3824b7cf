"""Sections other packages add to a run's report, by registration (the report imports none of them).

The report is a lower floor than the packages whose results it shows: it must not import them. A
package that has a section of its own (the skill-eval release report) registers it when it is imported,
naming the file in the run folder its section is made from; :func:`~evalkit.report.html.render_report`
then shows, after the notebooks' sections, each registered section whose file is in the run folder,
in the order they were registered. The layer that writes run reports (``evalkit run``, ``evalkit
report``) imports the packages that register sections, so their sections are known by then.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from markupsafe import Markup


@dataclass(frozen=True)
class ReportSection:
    """One section another package adds to run reports.

    Attributes:
        id: the section's HTML id, also the navigation link's anchor.
        title: the navigation link's text.
        file: the file in the run folder the section is made from (a slash path); no file, no section.
        render: builds the section's HTML (a whole ``<section id=ID>`` element) from that file's path; it holds
            no ``<style>`` or ``<script>`` of its own (the page adds the section's ``style`` and ``script``, and its
            policy allows them by hash, as it allows only its own).
        style: the section's style sheet (CSS text), added to the page's styles when the section is shown.
        script: the section's script (JavaScript text, data only through ``script_json`` blocks in its HTML),
            added after the page's own scripts when the section is shown.
    """

    id: str
    title: str
    file: str
    render: Callable[[Path], Markup]
    style: str = ""
    script: str = ""


_REGISTERED: dict[str, ReportSection] = {}


def register_section(section: ReportSection) -> None:
    """Add a section to every run report whose folder holds ``section.file``.

    Registering the same section again (a module imported twice) changes nothing.

    Raises:
        ValueError: another section already has this id.
    """
    known = _REGISTERED.get(section.id)
    if known is not None and known != section:
        raise ValueError(f"a report section with id {section.id!r} is already registered (file {known.file!r})")
    _REGISTERED[section.id] = section


def registered_sections() -> list[ReportSection]:
    """The sections registered so far, in registration order."""
    return list(_REGISTERED.values())
