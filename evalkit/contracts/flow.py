"""The information-flow graph of one trace, and the expected flow a subject's graphs are diffed against.

Node, tool and slot names are the trace's own; nothing here knows a particular subject.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evalkit.contracts.base import CamelContract, SchemaNamed
from evalkit.contracts.types import NonEmptyStr

FlowEdgeKind = Literal["threaded", "handoff"]
"""``threaded``: a plain tool result reached a later input; ``handoff``: a sub-agent dispatch's context did."""


class FlowNode(CamelContract):
    """One observation of the trace, seen as a producer and consumer of slots."""

    id: str
    index: int = Field(ge=0, strict=True)
    type: str
    name: str
    produces: list[str]
    consumes: list[str]
    is_handoff: bool = Field(strict=True)


class FlowEdge(CamelContract):
    """A producer slot whose value reached a later node's input."""

    from_: str = Field(alias="from")
    to: str
    slot: str
    kind: FlowEdgeKind


class UnthreadedOutput(CamelContract):
    """A producer slot whose value never reached any later node: a candidate leak."""

    node: str
    name: str
    slot: str


class FlowGraph(CamelContract, SchemaNamed):
    """The flow graph built from one trace."""

    trace_id: str
    nodes: list[FlowNode]
    edges: list[FlowEdge]
    unthreaded_outputs: list[UnthreadedOutput]
    terminal_outputs: list[UnthreadedOutput] = Field(default_factory=list)
    """Producer slots that reached no later node because they are end products (a final answer, a
    result after the last input): not candidate leaks. Absent in graphs built the reference way."""


class ExpectedEdge(CamelContract):
    """A producer-to-consumer threading the subject should show; with ``slot``, that slot must thread."""

    from_tool: NonEmptyStr
    to_tool: NonEmptyStr
    slot: NonEmptyStr | None = None


class ExpectedFlow(CamelContract, SchemaNamed):
    """The flow a subject should exhibit: dispatch tools, expected threadings, and UI slots to render."""

    dispatch_tool_names: list[NonEmptyStr]
    edges: list[ExpectedEdge]
    expected_ui_slots: list[NonEmptyStr]
