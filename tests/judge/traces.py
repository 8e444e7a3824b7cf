"""Small traces of the shapes real imports give (a chat agent with tool calls), built in the tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalkit.contracts import HumanLabel, JudgeSpec, Trace
from evalkit.io import canonical_line

SYSTEM = ("You are Emma, the leasing assistant of The Riverside. Answer only from the community information "
          "your tools return; never invent fees, dates or policies.")


def leasing_trace(trace_id: str, *, reply: str = "The pet fee is 300 dollars per pet.",
                  tool_output: Any = '{"pet_policy":{"fee":"300 dollars per pet","max_pets":2}}',
                  metadata: dict[str, Any] | None = None) -> Trace:
    """A user question, a tool call, then the assistant's reply (which re-sends the conversation)."""
    history = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "What is your pet fee?"}]
    record: dict[str, Any] = {
        "id": trace_id,
        "input": "What is your pet fee?",
        "output": reply,
        "observations": [
            {"id": "m1", "type": "GENERATION", "name": "assistant", "input": history,
             "output": {"role": "assistant", "content": "Let me check."}},
            {"id": "m2", "type": "TOOL", "name": "getCommunitiesInformation", "input": {"subCategory": "pet policy"},
             "output": tool_output},
            {"id": "m3", "type": "GENERATION", "name": "assistant",
             "input": [*history, {"role": "assistant", "content": "Let me check."},
                       {"role": "tool", "content": tool_output if isinstance(tool_output, str) else "x"}],
             "output": {"role": "assistant", "content": reply}},
        ],
    }
    if metadata is not None:
        record["metadata"] = metadata
    return Trace.model_validate(record)


def spec(**changes: Any) -> JudgeSpec:
    """A judge spec for substantiated replies, with ``changes`` applied (on-disk names)."""
    value: dict[str, Any] = {
        "id": "all_responses_substantiated",
        "criterion": "Every factual statement the assistant makes is backed by a tool output or the system prompt.",
        "pass": "Every factual claim can be traced to a tool output, the system prompt or the user's words.",
        "fail": "At least one reply states a fee, date or policy that nothing in the trace supports.",
    }
    value.update(changes)
    return JudgeSpec.model_validate(value)


def labels(**splits: tuple[str, str]) -> list[HumanLabel]:
    """Labels by trace id: ``labels(t1=("pass", "train"))``."""
    return [HumanLabel(trace_id=tid, label=label, split=split) for tid, (label, split) in splits.items()]


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(canonical_line(r) for r in records), encoding="utf-8")
    return path
