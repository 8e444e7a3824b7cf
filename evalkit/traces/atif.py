"""ATIF, the Agent Trajectory Interchange Format (Harbor's RFC 0001): one trajectory document, one trace.

A trajectory is ``{schema_version: "ATIF-v1.x", session_id, agent: {name, version, model_name},
steps: [...], final_metrics?, notes?, extra?}``. Each step has a ``source``: ``system`` and ``user``
steps are messages (system steps may carry an observation, such as a subagent hand-off); an ``agent``
step is one model turn, a GENERATION: its input the conversation before it (``{role, content}``
messages, tool results as ``tool`` messages), its output the step's ``message`` with its
``reasoning_content`` and ``tool_calls``, its usage from ``metrics`` (``prompt_tokens``,
``completion_tokens``, ``cached_tokens``). Each tool call is a TOOL child, its output the observation
result naming it (``source_call_id``; a step's one unnamed result answers its one call). A result that
refers to a subagent trajectory (``subagent_trajectory_ref``) nests that trajectory under the call or
step as an AGENT when its ``trajectory_path`` is found beside the file; otherwise the reference is kept
in metadata and the report warns. Token ids and log probabilities (RL data, not for reading) are
counted and left out; step rewards and ``final_metrics`` go to trace metadata.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from evalkit.contracts.trace import Observation, Trace
from evalkit.io.strict_json import read_json_strict
from evalkit.traces.observation_edits import updated
from evalkit.traces.report import ImportContext, ImportReport
from evalkit.traces.source import SourceValue

__all__ = ["looks_like_atif", "read_atif"]

_USAGE = {"prompt_tokens": "input", "completion_tokens": "output", "cached_tokens": "cache_read_input"}
_RL = ("prompt_token_ids", "completion_token_ids", "logprobs")


def looks_like_atif(value: Any) -> bool:
    """An ATIF trajectory: ``schema_version`` ``ATIF-v...`` with a list of steps."""
    return (isinstance(value, dict) and isinstance(value.get("schema_version"), str)
            and value["schema_version"].upper().startswith("ATIF") and isinstance(value.get("steps"), list))


class _Trajectory:
    def __init__(self, doc: dict[str, Any], sv: SourceValue, report: ImportReport, prefix: str = "",
                 taken: set[str] | None = None, depth: int = 0) -> None:
        self.doc, self.sv, self.report, self.prefix, self.depth = doc, sv, report, prefix, depth
        agent = doc.get("agent") if isinstance(doc.get("agent"), dict) else {}
        self.agent_name = str(agent.get("name") or "agent")
        self.model = agent.get("model_name") if isinstance(agent.get("model_name"), str) else None
        self.observations: list[Observation] = []
        self.taken = taken if taken is not None else set()
        self.history: list[dict[str, Any]] = []
        self.rewards: dict[str, Any] = {}
        self.last_time: str | None = None

    def _id(self, candidate: str) -> str:
        obs_id, n = f"{self.prefix}{candidate}", 1
        base = obs_id
        while obs_id in self.taken:
            n += 1
            obs_id = f"{base}#{n}"
        self.taken.add(obs_id)
        return obs_id

    def build(self) -> list[Observation]:
        for i, step in enumerate(self.doc["steps"]):
            if not isinstance(step, dict):
                raise self.sv.error("a step must be an object", f"steps[{i}]")
            source = step.get("source")
            if source == "agent":
                self._agent(step, i)
            elif source in ("system", "user"):
                self._message(step, i, str(source))
            else:
                raise self.sv.error('source must be "system", "user" or "agent"', f"steps[{i}].source")
            if isinstance(step.get("timestamp"), str):
                self.last_time = step["timestamp"]
        return self.observations

    def _message(self, step: dict[str, Any], i: int, role: str) -> None:
        self.history.append({"role": role, "content": step.get("message")})
        results = _results(step)
        if results or role == "system":
            obs_id = self._id(f"step-{step.get('step_id', i + 1)}")
            self.observations.append(Observation(id=obs_id, type="EVENT", name=role, output=step.get("message"),
                                                 start_time=step.get("timestamp")))
            for result in results:
                self._subagents(result, obs_id)

    def _agent(self, step: dict[str, Any], i: int) -> None:
        calls = [c for c in step.get("tool_calls") or [] if isinstance(c, dict)]
        said: dict[str, Any] = {"role": "assistant", "content": step.get("message")}
        if step.get("reasoning_content"):
            said["reasoning_content"] = step["reasoning_content"]
        if calls:
            said["tool_calls"] = [{"id": c.get("tool_call_id"), "type": "function",
                                   "function": {"name": c.get("function_name"), "arguments": c.get("arguments")}}
                                  for c in calls]
        gen_id = self._id(f"step-{step.get('step_id', i + 1)}")
        fields: dict[str, Any] = {"id": gen_id, "type": "GENERATION", "name": self.agent_name,
                                  "input": list(self.history), "output": said,
                                  "start_time": self.last_time or step.get("timestamp"),
                                  "end_time": step.get("timestamp")}
        model = step.get("model_name") if isinstance(step.get("model_name"), str) else self.model
        if model:
            fields["model"] = model
        metrics = step.get("metrics") if isinstance(step.get("metrics"), dict) else {}
        usage = {name: metrics[key] for key, name in _USAGE.items()
                 if isinstance(metrics.get(key), int | float) and not isinstance(metrics.get(key), bool)}
        if "input" in usage and "output" in usage:
            usage["total"] = usage["input"] + usage["output"]
        if usage:
            fields["usage"] = usage
        kept = {k: v for k, v in metrics.items() if k not in _USAGE and k not in _RL and k != "reward"}
        if any(k in metrics for k in _RL):
            self.report.skipped("token ids and log probabilities of agent steps (RL training data)")
        if "reward" in metrics:
            self.rewards[str(step.get("step_id", i + 1))] = metrics["reward"]
        meta = {**kept, **({"extra": step["extra"]} if step.get("extra") else {})}
        if step.get("reasoning_effort") is not None:
            meta["reasoningEffort"] = step["reasoning_effort"]
        if meta:
            fields["metadata"] = meta
        self.observations.append(Observation(**fields))
        self.history.append(said)
        self._tools(calls, _results(step), gen_id, step.get("timestamp"))

    def _tools(self, calls: list[dict[str, Any]], results: list[dict[str, Any]], gen_id: str, at: Any) -> None:
        by_call = {r.get("source_call_id"): r for r in results if r.get("source_call_id")}
        unnamed = [r for r in results if not r.get("source_call_id")]
        for call in calls:
            call_id = call.get("tool_call_id")
            result = by_call.pop(call_id, None)
            if result is None and len(calls) == 1 and len(unnamed) == 1:
                result = unnamed.pop()  # one call, one unnamed result: its answer (terminus-2 writes them so)
            tool_id = self._id(str(call_id or f"{gen_id}.tool"))
            fields: dict[str, Any] = {"id": tool_id, "type": "TOOL", "name": str(call.get("function_name") or "tool"),
                                      "input": call.get("arguments"), "parent_id": gen_id, "start_time": at,
                                      "metadata": {"toolCallId": call_id}}
            if result is not None and "content" in result:
                fields["output"] = result["content"]
            self.observations.append(Observation(**fields))
            self.history.append({"role": "tool", "tool_call_id": call_id, "content": fields.get("output")})
            if result is not None:
                self._subagents(result, tool_id)
        for result in [*by_call.values(), *unnamed]:
            obs_id = self._id(f"{gen_id}.result")
            self.observations.append(Observation(id=obs_id, type="EVENT", name="observation", parent_id=gen_id,
                                                 output=result.get("content"), start_time=at))
            self.history.append({"role": "user", "content": result.get("content")})
            self._subagents(result, obs_id)

    def _subagents(self, result: dict[str, Any], parent: str) -> None:
        for ref in result.get("subagent_trajectory_ref") or []:
            if not isinstance(ref, dict):
                continue
            path = Path(self.sv.file).parent / str(ref.get("trajectory_path") or "")
            if not ref.get("trajectory_path") or not path.is_file() or self.depth >= 5:
                self.report.warn(f"{self.sv.file}: subagent trajectory {ref.get('session_id')!r} "
                                 f"({ref.get('trajectory_path')}) not found beside the file: not in the trace")
                self.observations.append(Observation(id=self._id(f"agent-{ref.get('session_id')}"), type="AGENT",
                                                     name="subagent", parent_id=parent, metadata={"ref": ref}))
                continue
            doc = read_json_strict(path)
            if not looks_like_atif(doc):
                self.report.warn(f"{path}: not an ATIF trajectory; the subagent it names is not in the trace")
                continue
            sub = _Trajectory(doc, SourceValue(doc, str(path)), self.report, f"{ref.get('session_id')}/",
                              self.taken, self.depth + 1)
            inner = sub.build()
            agent_id = self._id(f"agent-{ref.get('session_id')}")
            self.report.kept("subagent trajectories, each under the step or call that handed off to it", "AGENT")
            self.observations.append(Observation(id=agent_id, type="AGENT", name=sub.agent_name, parent_id=parent,
                                                 metadata={"ref": ref}))
            for obs in inner:
                if obs.parent_id is None:
                    obs = updated(obs, parent_id=agent_id)
                self.observations.append(obs)


def _results(step: dict[str, Any]) -> list[dict[str, Any]]:
    observation = step.get("observation")
    results = observation.get("results") if isinstance(observation, dict) else None
    return [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []


def read_atif(values: Iterable[SourceValue], context: ImportContext | None = None) -> Iterator[Trace]:
    """One trace per ATIF trajectory (see the module docstring).

    Raises:
        evalkit.errors.InputError: a value that is not a trajectory, or a step without a known source.
    """
    report = context.report if context is not None else ImportReport()
    for sv in values:
        doc = sv.value
        if not looks_like_atif(doc):
            raise sv.error('not an ATIF trajectory (schema_version "ATIF-v..." and steps)')
        trajectory = _Trajectory(doc, sv, report)
        observations = trajectory.build()
        agent = doc.get("agent") if isinstance(doc.get("agent"), dict) else {}
        metadata: dict[str, Any] = {"schemaVersion": doc["schema_version"],
                                    "agent": {k: v for k, v in agent.items() if k != "tool_definitions"}}
        for key in ("final_metrics", "notes", "extra", "continued_trajectory_ref"):
            if doc.get(key) not in (None, "", {}):
                metadata[key] = doc[key]
        if trajectory.rewards:
            metadata["stepRewards"] = trajectory.rewards
        metadata["source"] = "atif"
        steps = [s for s in doc["steps"] if isinstance(s, dict)]
        fields: dict[str, Any] = {"id": str(doc.get("session_id") or Path(sv.file).stem), "name": agent.get("name"),
                                  "observations": observations, "metadata": metadata}
        first_user = next((s.get("message") for s in steps if s.get("source") == "user"), None)
        if first_user is not None:
            fields["input"] = first_user
        last = next((s.get("message") for s in reversed(steps) if s.get("source") == "agent" and s.get("message")),
                    None)
        if last is not None:
            fields["output"] = last
        yield Trace(**fields)
