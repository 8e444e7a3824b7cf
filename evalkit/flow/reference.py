"""The flow-graph rules written as plainly as possible: the specification that tests and the benchmark
check :func:`~evalkit.flow.build.build_flow_graph` against. Every value is searched for in every later
input, so it is slow (values x inputs x input length); do not use it on real traces.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from evalkit.contracts.trace import Trace
from evalkit.flow.slots import DEFAULT_MIN_THREAD_LEN


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _slots(payload: Any, single: str) -> list[tuple[str, Any]]:
    if payload is None:
        return []
    if isinstance(payload, dict):
        return sorted(payload.items())
    return [(single, payload)]


def plain_flow_graph(trace: Trace, *, dispatch_tool_names: Iterable[str] = (),
                     min_thread_len: int = DEFAULT_MIN_THREAD_LEN) -> dict[str, Any]:
    """The on-disk form of the trace's flow graph, built by the plain quadratic algorithm."""
    dispatch = set(dispatch_tool_names)
    observations = trace.observations
    texts = [obs.input if isinstance(obs.input, str) else _json(obs.input) for obs in observations]
    nodes, edges, unthreaded = [], [], []
    for i, obs in enumerate(observations):
        name = obs.name or ""
        outputs = _slots(obs.output, "_value")
        nodes.append({"id": f"n{i}", "index": i, "type": obs.type, "name": name,
                      "produces": [slot for slot, _ in outputs],
                      "consumes": [slot for slot, _ in _slots(obs.input, "_text")],
                      "isHandoff": name in dispatch})
        kind = "handoff" if name in dispatch else "threaded"
        for slot, value in outputs:
            text = (value if isinstance(value, str) else _json(value)).strip()
            if len(text) < min_thread_len:
                continue
            reached = [j for j in range(i + 1, len(observations)) if text in texts[j]]
            edges += [{"from": f"n{i}", "to": f"n{j}", "slot": slot, "kind": kind} for j in reached]
            if not reached:
                unthreaded.append({"node": f"n{i}", "name": name, "slot": slot})
    return {"traceId": trace.id, "nodes": nodes, "edges": edges, "unthreadedOutputs": unthreaded}
