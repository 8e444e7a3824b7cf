"""Small traces, verdicts and labels in tmp folders, and a loopback HTTP receiver that records requests."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _trace(n: int) -> dict:
    tid = f"tr-{n:04d}"
    return {"id": tid, "name": "support-turn", "observations": [
        {"id": f"{tid}-o01", "type": "AGENT", "name": "agent", "startTime": f"2026-03-02T09:0{n}:40.000Z",
         "endTime": f"2026-03-02T09:0{n}:42.500Z", "input": "refund please", "output": "done"},
        {"id": f"{tid}-o02", "type": "TOOL", "name": "issue_refund", "parentId": f"{tid}-o01",
         "startTime": f"2026-03-02T09:0{n}:41.000Z", "endTime": f"2026-03-02T09:0{n}:41.200Z",
         "input": {"amount": 79.0}, "output": {"ok": True}},
    ]}


VERDICTS = [
    {"criterionId": "refund-correct", "traceId": "tr-0001", "result": "pass", "confidence": 0.9,
     "critique": "The refund matches the order.",
     "refs": [{"obs": "tr-0001-o02", "path": "input.amount", "value": "79.0"}]},
    {"criterionId": "refund-correct", "traceId": "tr-0002", "result": "fail", "confidence": 0.7,
     "critique": "Refunded the wrong amount."},
    {"criterionId": "tone", "traceId": "tr-0001", "result": "uncertain", "confidence": 0.4, "critique": None,
     "blockedBy": {"kind": "normative", "text": "no tone policy is given"}},
]
LABELS = [
    {"traceId": "tr-0001", "criterionId": "refund-correct", "label": "pass", "annotator": "qa-1"},
    {"traceId": "tr-0002", "criterionId": "refund-correct", "label": "defer", "notes": "unclear order"},
]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """traces.jsonl (two traces with evalkit ids), verdicts.jsonl (pass, fail, uncertain), labels.jsonl."""
    return {
        "traces": write_jsonl(tmp_path / "traces.jsonl", [_trace(1), _trace(2)]),
        "verdicts": write_jsonl(tmp_path / "verdicts.jsonl", VERDICTS),
        "labels": write_jsonl(tmp_path / "labels.jsonl", LABELS),
    }


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """What a loopback server got; ``status`` and ``reply`` are what it answers with."""

    url: str
    requests: list[Received] = field(default_factory=list)
    status: int = 200
    reply: bytes = b"{}"
    content_type: str = "application/json"


@pytest.fixture
def receiver():
    """An HTTP server on 127.0.0.1 (a free port) in a thread, recording every request; stopped after."""
    state = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            state.requests.append(Received("POST", self.path, {k.lower(): v for k, v in self.headers.items()},
                                           body))
            self.send_response(state.status)
            self.send_header("Content-Type", state.content_type)
            self.send_header("Content-Length", str(len(state.reply)))
            self.end_headers()
            self.wfile.write(state.reply)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
