"""Chat-shaped traces for the review page tests: every model call repeats the history, as real agents log it."""

from __future__ import annotations

import json
from typing import Any

from analysis_builders import iso

from evalkit.contracts.trace import Observation, Trace

SYSTEM = "You are the leasing assistant of Maple Grove Lofts. Answer from the tools only."
TOOL_SCHEMAS = [{"type": "function", "function": {"name": f"tool_{i}", "description": "Looks things up. " * 40,
                                                    "parameters": {"type": "object", "properties": {}}}}
                for i in range(6)]


def openai_chat_trace(trace_id: str = "chat-1", *, tool_output: Any = None, tool_name: str = "get_availability",
                      tool_error: bool = False) -> Trace:
    """Three model calls and one tool call, OpenAI chat shaped: user asks, assistant calls a tool, answers,
    user follows up, assistant answers. The tool result is logged as an object on the TOOL observation
    and as JSON text in the next call's input."""
    result = tool_output if tool_output is not None else {"units": [{"beds": 1, "rent": 2254}]}
    result_text = result if isinstance(result, str) else _compact(result)
    call = {"id": "call_1", "type": "function", "function": {"name": tool_name, "arguments": '{"beds": 1}'}}
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM},
                                     {"role": "user", "content": "Any 1 bedroom lofts?"}]
    obs = []
    first_out = {"role": "assistant", "content": None, "tool_calls": [call]}
    obs.append(_gen("g1", list(history), first_out, 1))
    history += [first_out]
    tool: dict[str, Any] = {"input": {"beds": 1}}
    if tool_error:
        tool |= {"level": "ERROR", "status_message": "availability service timed out"}
    else:
        tool["output"] = result
    obs.append(Observation(id="t1", type="TOOL", name=tool_name, start_time=iso(2), end_time=iso(3), **tool))
    history += [{"role": "tool", "tool_call_id": "call_1", "content": result_text}]
    second_out = {"role": "assistant", "content": "Yes: a 1 bedroom at $2254 a month."}
    obs.append(_gen("g2", list(history), second_out, 4))
    history += [second_out, {"role": "user", "content": "Can I tour it Friday?"}]
    third_out = {"role": "assistant", "content": "Friday works: you are booked at 10am."}
    obs.append(_gen("g3", list(history), third_out, 6))
    return Trace(id=trace_id, name="leasing-chat", input="Any 1 bedroom lofts?", output=third_out["content"],
                 metadata={"channel": "voice", "tools": TOOL_SCHEMAS}, observations=obs)


def _gen(obs_id: str, messages: list[dict[str, Any]], output: dict[str, Any], at: float) -> Observation:
    return Observation(id=obs_id, type="GENERATION", name="chat", model="gpt-4o", start_time=iso(at),
                       end_time=iso(at + 0.5), input=messages, output=output)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))
