"""Session-level judging: every trace of a conversation, grouped by the session id their metadata carries, shown to
the judge as one trace.

A spec with ``scope: session`` and ``sessionKey: PATH`` judges sessions, not traces. Each session becomes one
trace (:func:`session_traces`): its id is the session id (the verdict's ``traceId``, so human labels on the
session calibrate the judge as for any criterion), its input the first turn's input, its output the last turn's
output, and for each turn, in order, a ``SPAN`` observation whose id is the turn's trace id (its input, output and
metadata are the turn's) with the turn's observations beneath it. Turns are ordered by their first start time
(file order where a turn has none). Observation ids are kept, so a ref cites what the trace file says; when two
turns share an observation id, every observation id of the session is prefixed with its turn's trace id
(``TRACE:ID``) to keep them apart. The judge's refs are re-resolved against this session trace, as a trace
judge's are against the trace.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from evalkit.contracts.judge import JudgeSpec
from evalkit.contracts.trace import Trace
from evalkit.errors import InputError
from evalkit.trace_paths import MISSING, parse_path, step_into

_LATEST = 2**63  # orders a turn without any start time after every timed one


def session_id_of(trace: Trace, key: str) -> str | None:
    """The session id at ``key`` (a path) in the trace's metadata, as text; None when it has none."""
    value: Any = trace.metadata or {}
    for step in parse_path(key):
        value = step_into(value, step)
        if value is MISSING:
            return None
    if isinstance(value, bool) or value is None or isinstance(value, dict | list):
        return None
    text = str(value).strip()
    return text or None


def _first_start(trace: Trace) -> int:
    from evalkit.traces import utc_micros

    starts = [m for o in trace.observations if o.start_time for m in (utc_micros(o.start_time),) if m is not None]
    return min(starts) if starts else _LATEST


def _session_trace(session: str, key: str, turns: Sequence[Trace]) -> Trace:
    ids = [t.id for t in turns] + [o.id for t in turns for o in t.observations]
    prefix = len(set(ids)) != len(ids)
    observations: list[dict[str, Any]] = []
    for turn in turns:
        lead = f"{turn.id}:" if prefix else ""
        span: dict[str, Any] = {"id": turn.id, "type": "SPAN", "name": turn.name or "turn"}
        on_disk = turn.to_json_obj()
        for field in ("input", "output", "metadata"):
            if field in on_disk:
                span[field] = on_disk[field]
        observations.append(span)
        for raw in on_disk["observations"]:
            obs = dict(raw, id=lead + raw["id"])
            parent = raw.get("parentId")
            obs["parentId"] = lead + parent if parent is not None else turn.id
            observations.append(obs)
    first, last = turns[0].to_json_obj(), turns[-1].to_json_obj()
    session_trace: dict[str, Any] = {"id": session, "name": "session", "observations": observations,
                                     "metadata": {"session": {"key": key, "id": session,
                                                              "turns": [t.id for t in turns]}}}
    if "input" in first:
        session_trace["input"] = first["input"]
    if "output" in last:
        session_trace["output"] = last["output"]
    return Trace.model_validate(session_trace)


def session_traces(traces: Iterable[Trace], key: str) -> list[Trace]:
    """One trace per session (see the module docstring), sessions in the order their first turn was read.

    Raises:
        InputError: a trace carries no session id at ``key`` (naming how many, and the first).
    """
    sessions: dict[str, list[tuple[int, int, Trace]]] = {}
    grouped: dict[str, Trace] = {}
    lacking: list[str] = []
    for i, trace in enumerate(traces):
        if _is_session(trace, key):  # grouped already (judge prompt --trace SESSION): taken as it is
            grouped[trace.id] = trace
            continue
        session = session_id_of(trace, key)
        if session is None:
            lacking.append(trace.id)
            continue
        sessions.setdefault(session, []).append((_first_start(trace), i, trace))
    if lacking:
        raise InputError(f"{len(lacking)} trace(s) carry no session id at metadata.{key} (the first: {lacking[0]}); "
                         "a session judge judges whole conversations: give it traces that all carry one, or fix "
                         "sessionKey", path="sessionKey")
    return [*grouped.values(), *(_session_trace(session, key, [t for _, _, t in sorted(turns, key=lambda x: (x[0], x[1]))])
                                 for session, turns in sessions.items())]


def _is_session(trace: Trace, key: str) -> bool:
    mark = (trace.metadata or {}).get("session")
    return trace.name == "session" and isinstance(mark, dict) and mark.get("key") == key and "turns" in mark


def judged_traces(spec: JudgeSpec, traces: Iterable[Trace]) -> list[Trace]:
    """What ``spec`` judges: the traces themselves, or one trace per session (``scope: session``)."""
    if spec.scope == "session":
        assert spec.session_key is not None  # the contract requires it with scope: session
        return session_traces(traces, spec.session_key)
    return list(traces)


def session_traces_by_id(specs: Iterable[JudgeSpec], traces: Sequence[Trace]) -> dict[str, Trace]:
    """The session traces the session specs among ``specs`` judge, by id: what their verdicts' refs are checked
    against (add them to the traces by id a run verifies against). Empty when every spec judges traces."""
    out: dict[str, Trace] = {}
    for spec in specs:
        if spec.scope == "session":
            out.update((t.id, t) for t in judged_traces(spec, traces))
    return out


def refuse_session_scope(specs: Iterable[JudgeSpec], where: str) -> None:
    """Refuse session judges where traces are judged apart (a cluster's partitions, an eval run's traces).

    Raises:
        InputError: naming the spec and saying what to do instead.
    """
    for spec in specs:
        if spec.scope == "session":
            file, line = spec.source
            raise InputError(f"judge spec {spec.id!r} judges whole sessions (scope: session), which {where} cannot "
                             "do: judge it with evalkit judge run in one process", file=file, line=line, path="scope")
