"""Trace formats from other packages: the ``evalkit.trace_formats`` entry-point group.

A package teaches evalkit a new trace format without changing evalkit by declaring, in its
``pyproject.toml``::

    [project.entry-points."evalkit.trace_formats"]
    swe-agent = "my_package.swe_agent:FORMAT"

where ``FORMAT`` is an :class:`evalkit.traces.TraceFormat` (or a function of no arguments
returning one). Once the package is installed, ``evalkit traces import`` sniffs the format and
``--format swe-agent`` selects it (the entry point and the format must have the same name: ``--format``
offers entry-point names without loading them). Plug-in formats are sniffed after the built-in ones, so a plug-in
cannot take over a file evalkit already reads. ``examples/plugins/`` is a complete plug-in package
(OpenHands event streams and SWE-agent trajectories).

A plug-in that fails to load, or whose name is already taken, is left out with a warning naming the
entry point: a broken third-party package must not stop evalkit from reading other files.
"""

from __future__ import annotations

import warnings
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalkit.traces.trace_format import TraceFormat

__all__ = ["ENTRY_POINT_GROUP", "add_format", "load_plugin_formats"]

ENTRY_POINT_GROUP = "evalkit.trace_formats"


def _is_format(value: Any) -> bool:
    return (isinstance(getattr(value, "name", None), str) and callable(getattr(value, "looks_like", None))
            and callable(getattr(value, "read", None)))


def add_format(fmt: TraceFormat, formats: dict[str, TraceFormat]) -> None:
    """Add a trace format to ``formats`` (sniffed after those already there).

    :func:`evalkit.traces.register_format` adds to evalkit's own registry with this.

    Raises:
        ValueError: the name is already registered, or ``fmt`` is not a TraceFormat-like object.
    """
    if not _is_format(fmt):
        raise ValueError(f"not a trace format (needs name, looks_like and read): {fmt!r}")
    if fmt.name in formats or fmt.name == "auto":
        raise ValueError(f"trace format name {fmt.name!r} is already taken")
    formats[fmt.name] = fmt


def load_plugin_formats(formats: dict[str, TraceFormat]) -> list[str]:
    """Register every format declared in the ``evalkit.trace_formats`` entry-point group.

    Entry points are loaded in name order, so sniffing order does not depend on install order.

    Returns:
        The names of the formats added.
    """
    added: list[str] = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)):
        try:
            value = ep.load()
            fmt = value if _is_format(value) else value()
            if _is_format(fmt) and fmt.name != ep.name:  # --format offers the entry point's name unloaded
                raise ValueError(f"the entry point is named {ep.name!r} but its format {fmt.name!r}: "
                                 "name them alike")
            add_format(fmt, formats)
        except Exception as exc:  # noqa: BLE001 -- any failure of third-party code is reported, not raised
            warnings.warn(f"trace format plug-in {ep.name!r} ({ep.value}) left out: {exc}", stacklevel=2)
            continue
        added.append(fmt.name)
    return added
