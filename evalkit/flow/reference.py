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


def _decoded(text: str) -> Any:
    """The object or array a string holds as JSON text (or as JSON text written as a JSON string)."""
    if text.lstrip()[:1] not in ("{", "[", '"'):
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    if isinstance(parsed, str) and text.lstrip()[:1] == '"':
        return _decoded(parsed)
    return parsed if isinstance(parsed, dict | list) else None


def _leaves(value: Any) -> list[str]:
    """String leaves in document order, JSON text decoded."""
    if isinstance(value, str):
        inner = _decoded(value)
        return [value] if inner is None else _leaves(inner)
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return []


def _received(value: Any) -> str:
    """What a reader of the payload saw: strings unescaped, JSON text decoded (evalkit.flow.received)."""
    if isinstance(value, str):
        inner = _decoded(value)
        return value if inner is None else _received(inner)
    if isinstance(value, dict):
        return "{" + ",".join(f'"{k}":{_received(v)}' for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_received(v) for v in value) + "]"
    return json.dumps(value)


def plain_flow_graph(trace: Trace, *, dispatch_tool_names: Iterable[str] = (),
                     min_thread_len: int = DEFAULT_MIN_THREAD_LEN, semantics: str = "mutagent") -> dict[str, Any]:
    """The on-disk form of the trace's flow graph, built by the plain quadratic algorithm.

    ``semantics="mutagent"`` (here the default: the reference method itself) looks for a value's JSON
    text in each later input's JSON text. ``"received"`` looks for its received text in the text each
    later input received (an absent input received nothing); an unreached value is terminal, not
    unthreaded, when no later observation took any input or when it is in the trace's output.
    """
    received = semantics == "received"
    dispatch = set(dispatch_tool_names)
    observations = trace.observations
    if received:
        texts = [None if obs.input is None else _received(obs.input) for obs in observations]
        inputs = [i for i, obs in enumerate(observations) if obs.input is not None]
        answer = "" if trace.output is None else _received(trace.output)
    else:
        texts = [obs.input if isinstance(obs.input, str) else _json(obs.input) for obs in observations]
    nodes, edges, unthreaded, terminal = [], [], [], []
    for i, obs in enumerate(observations):
        name = obs.name or ""
        outputs = _slots(obs.output, "_value")
        nodes.append({"id": f"n{i}", "index": i, "type": obs.type, "name": name,
                      "produces": [slot for slot, _ in outputs],
                      "consumes": [slot for slot, _ in _slots(obs.input, "_text")],
                      "isHandoff": name in dispatch})
        kind = "handoff" if name in dispatch else "threaded"
        for slot, value in outputs:
            if received:
                text = _received(value).strip()
                # A structured value mostly made of one text is also followed by that text.
                leaves = [] if isinstance(value, str) and _decoded(value) is None else _leaves(value)
                main = max((leaf.strip() for leaf in leaves), key=len, default="")
                if len(main) < 0.5 * sum(len(leaf.strip()) for leaf in leaves):
                    main = ""
                needles = [n for n in (text, main) if len(n) >= min_thread_len]
            else:
                text = (value if isinstance(value, str) else _json(value)).strip()
                needles = [text]
            if len(text) < min_thread_len:
                continue
            reached = [j for j in range(i + 1, len(observations))
                       if texts[j] is not None and any(n in texts[j] for n in needles)]
            edges += [{"from": f"n{i}", "to": f"n{j}", "slot": slot, "kind": kind} for j in reached]
            if reached:
                continue
            output = {"node": f"n{i}", "name": name, "slot": slot}
            is_terminal = received and (not any(j > i for j in inputs) or any(n in answer for n in needles))
            (terminal if is_terminal else unthreaded).append(output)
    graph = {"traceId": trace.id, "nodes": nodes, "edges": edges, "unthreadedOutputs": unthreaded}
    if received:
        graph["terminalOutputs"] = terminal
    return graph
