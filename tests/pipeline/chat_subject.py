"""A subject shaped like an imported chat log: no times, no tokens, no levels, no ``intent``; built in a tmp dir."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

CHANNELS = ("sms", "email", "email", "voice", "email", "sms", "email", "sms")
"""One trace per entry; ``voice`` is a group of one, so its breakdown row must say n=1."""


def write_chat_subject(folder: Path, *, annotations: bool = True, **extra) -> Path:
    """Write traces (and annotations) into ``folder`` and a subject file naming them; returns the subject file.

    Every trace is a user turn answered by generations and a tool call, as a chat importer writes it:
    observations without start or end time, usage, model or level. Traces 1, 3 and 5 fail with
    ``wrong-date``; trace 3 (the only ``voice`` one) also with ``no-handoff``.
    """
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, channel in enumerate(CHANNELS):
        observations = [
            {"id": f"g{i}a", "type": "GENERATION", "name": "assistant", "input": [{"role": "user", "content": "hi"}],
             "output": {"role": "assistant", "content": "let me check"}},
            {"id": f"t{i}", "type": "TOOL", "name": "lookup_tour_times", "input": {"day": i}, "output": "11 AM"},
            {"id": f"g{i}b", "type": "GENERATION", "name": "assistant", "input": [{"role": "tool", "content": "11 AM"}],
             "output": {"role": "assistant", "content": "11 AM works"}},
        ]
        lines.append(json.dumps({"id": f"chat-{i}", "metadata": {"channel": channel, "source": "openai-chat"},
                                 "observations": observations}))
    (folder / "traces.jsonl").write_text("\n".join(lines) + "\n")
    subject = {"name": "chat-agent", "traces": "traces.jsonl", "notebooks": ["00_overview", "01_error_analysis"]}
    if annotations:
        records = []
        for i in range(len(CHANNELS)):
            failing = i in (1, 3, 5)
            modes = (["wrong-date", "no-handoff"] if i == 3 else ["wrong-date"]) if failing else []
            records.append(json.dumps({"traceId": f"chat-{i}", "annotator": "ana", "at": "2026-11-30T10:00:00+00:00",
                                       "label": "fail" if failing else "pass", "modes": modes}))
        (folder / "annotations.jsonl").write_text("\n".join(records) + "\n")
        subject["annotations"] = "annotations.jsonl"
    subject.update(extra)
    path = folder / "subject.yaml"
    path.write_text(yaml.safe_dump(subject, sort_keys=False))
    return path
