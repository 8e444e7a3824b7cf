"""The trace viewer inside a run's report: the traces the report cites, searchable, each opened in place.

:func:`write_trace_view` leaves the run's cited traces in the run folder (``evalkit run`` calls it before
the report is written); importing this package registers the report section that embeds them, so a click
on a table row naming a trace, a failure mode or a criterion opens the trace (its conversation, observation
tree, verdicts with their refs highlighted, review and flow graph) in the same self-contained file.
"""

from evalkit.viewer.payload import (
    FAILING_PER_GROUP,
    VIEW_FILE,
    cited_names,
    embedded_counts,
    read_trace_view,
    trace_view,
    write_trace_view,
)
from evalkit.viewer.section import SECTION_ID, register_viewer_section, render_viewer_section, viewer_script

register_viewer_section()

__all__ = [
    "FAILING_PER_GROUP",
    "SECTION_ID",
    "VIEW_FILE",
    "cited_names",
    "embedded_counts",
    "read_trace_view",
    "register_viewer_section",
    "render_viewer_section",
    "trace_view",
    "viewer_script",
    "write_trace_view",
]
