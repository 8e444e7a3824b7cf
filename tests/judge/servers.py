"""Loopback fake judge servers for tests and benchmarks: ``/v1/chat/completions`` and ``/v1/messages``.

An asyncio HTTP/1.1 server (keep-alive, Content-Length bodies, a protocol per connection) bound to
127.0.0.1 only, run in a background thread (tests) or as its own process (``python -m
tests.judge.servers --latency 0.05``, which prints its port: the benchmark, so the server does not share
the client's interpreter).

Each request's item is the ``item=ID`` marker in its first user message; the reply is a valid judge
output whose result is the ``expect=pass|fail|uncertain`` marker (pass when absent). Faults are
scripted per item, one per attempt, in order: ``429`` (with ``Retry-After``), ``500``, ``timeout``
(answers after ``hang`` seconds), ``malformed`` (an HTTP body that is not JSON), ``bad-output`` (a
reply that violates the schema), ``not-json`` (reply text that is not JSON), ``401``, ``overflow`` (the
HTTP 400 llama.cpp's server sends for a prompt longer than its context). With
``llama_cpp=True`` the chat endpoint refuses ``response_format`` ``json_schema`` with HTTP 500 the way
llama.cpp server does, and accepts ``{"type": "json_object", "schema": ...}``.

``GET /v1/models`` lists :attr:`JudgeServer.models`. With ``tokenizer=True`` the server has a tokenizer
of its own (words and punctuation marks, not characters), answers llama-cpp-python's
``/extras/tokenize/count`` and Anthropic's ``/v1/messages/count_tokens``, reports prompt tokens with it (and a chat template's few tokens a message), and
with ``context`` refuses a prompt whose tokens and ``max_tokens`` pass it, as llama.cpp's server does.
Requests to these side endpoints are kept in ``side_requests``, not ``requests``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import selectors
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

_ITEM = re.compile(r"item=([\w.:-]+)")
_TOKEN = re.compile(r"\w+|[^\w\s]")
SERVED = ("m", "c", "gpt-4o-mini", "local-model", "my-local", "my-local-model", "priced", "smollm2-135m")
"""The model names the fake server lists at /v1/models (those the tests use)."""
SIDE_PATHS = ("/models", "/tokenize", "/tokenize/count", "/count_tokens")
_EXPECT = re.compile(r"expect=(pass|fail|uncertain)")
LLAMA_CPP_REFUSAL = 'response_format type must be one of "text" or "json_object", but got: json_schema'
REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
           500: "Internal Server Error"}


def on_own_loop(coro: Any) -> Any:
    """``asyncio.run(coro)`` on a worker thread: the session's Playwright browser may keep a loop running in
    the test's thread, where ``asyncio.run`` refuses to start."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def judge_output(result: str, item: str) -> dict[str, Any]:
    """A valid judge output for ``item`` with ``result``."""
    return {"critique": f"Checked {item} against the criterion.", "refs": [], "assumptions": [],
            "result": result, "confidence": 0.9,
            "blockedBy": {"kind": "normative", "text": "criterion unclear"} if result == "uncertain" else None}


@dataclass
class JudgeServer:
    """The fake server's script and what it saw.

    Args:
        latency: seconds before every answer.
        faults: per item, the fault for each successive attempt (then normal answers).
        retry_after: the ``Retry-After`` header sent with a 429, in seconds.
        hang: how long a ``timeout`` fault waits before answering.
        llama_cpp: refuse ``json_schema`` response formats like llama.cpp server.
    """

    latency: float = 0.0
    faults: dict[str, list[str]] = field(default_factory=dict)
    retry_after: str = "1"
    hang: float = 5.0
    llama_cpp: bool = False
    models: tuple[str, ...] = SERVED
    tokenizer: bool = False
    context: int | None = None
    side_requests: list[str] = field(default_factory=list)
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    raw_requests: list[tuple[bytes, bytes]] = field(default_factory=list)
    """Each request's head (request line and headers) and body bytes, as received."""
    attempts: Counter = field(default_factory=Counter)
    port: int = 0
    record: bool = True
    connections: int = 0
    """Connections accepted so far (keep-alive reuse shows as fewer connections than requests)."""
    script: Any = None
    """``script(messages) -> reply text``: answers every chat completion with that text instead (a test's own
    judge or verifier); faults and llama.cpp's refusal still apply first."""

    def _first_user(self, body: dict[str, Any]) -> str:
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        content = users[0]["content"] if users else ""
        return content if isinstance(content, str) else json.dumps(content)

    def tokens(self, text: str) -> int:
        """The server's own token count of a text."""
        return len(_TOKEN.findall(text))

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        """A request's prompt tokens: its messages' and a chat template's five a message, plus one."""
        messages = body.get("messages", [])
        system = body.get("system")
        tools = [json.dumps(t) for t in body.get("tools") or []]  # Anthropic bills tool definitions as input
        text = "\n".join([*([system] if isinstance(system, str) else []),
                          *(str(m.get("content", "")) for m in messages), *tools])
        return self.tokens(text) + 5 * (len(messages) + (isinstance(system, str))) + 1

    def side(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes, float] | None:
        """The answer of a side endpoint (models, tokenize), or None for a completion."""
        if path.endswith("/models"):
            self.side_requests.append(path)
            return 200, {}, orjson.dumps({"object": "list", "data": [
                {"id": m, "object": "model", "owned_by": "me"} for m in self.models]}), 0.0
        if path.endswith("/messages/count_tokens"):
            self.side_requests.append(path)
            if not self.tokenizer:
                return 404, {}, _error(404, "Not Found"), 0.0
            return 200, {}, orjson.dumps({"input_tokens": self.prompt_tokens(body)}), 0.0
        if path.endswith("/extras/tokenize/count"):
            self.side_requests.append(path)
            if not self.tokenizer:
                return 404, {}, _error(404, "Not Found"), 0.0
            return 200, {}, orjson.dumps({"count": self.tokens(str(body.get("input", "")))}), 0.0
        if path.endswith("/tokenize"):
            self.side_requests.append(path)
            return 404, {}, _error(404, "Not Found"), 0.0
        return None

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes, float]:
        """``(status, headers, body, delay)`` for one request."""
        side = self.side(path, body)
        if side is not None:
            return side
        if self.record:
            self.requests.append((path, body))
        text = self._first_user(body)
        item = (_ITEM.search(text) or [None, "?"])[1]
        expect = (_EXPECT.search(text) or [None, "pass"])[1]
        attempt = self.attempts[item]
        self.attempts[item] += 1
        plan = self.faults.get(item, [])
        fault = plan[attempt] if attempt < len(plan) else None
        if fault == "429":
            return 429, {"Retry-After": self.retry_after}, _error(429, "rate limited"), self.latency
        if fault == "500":
            return 500, {}, _error(500, "upstream overloaded"), self.latency
        if fault == "401":
            return 401, {}, _error(401, "invalid api key"), self.latency
        if fault == "timeout":
            return 200, {}, b"{}", self.hang
        if fault == "malformed":
            return 200, {}, b'{"id": "x", "choices": [', self.latency
        prompt = self.prompt_tokens(body) if self.tokenizer else _tokens(body)
        asked = prompt + int(body.get("max_tokens") or 0)
        if fault == "overflow" or self.context is not None and asked > self.context:
            context = self.context or 8192
            return 400, {}, _error(400, f"Requested tokens ({asked}) exceed context window of {context}"), \
                self.latency
        if path.endswith("/chat/completions") and self.llama_cpp \
                and (body.get("response_format") or {}).get("type") == "json_schema":
            return 500, {}, _error(500, LLAMA_CPP_REFUSAL), self.latency
        if self.script is not None and path.endswith("/chat/completions"):
            return 200, {}, _openai(body, self.script(body.get("messages", [])), prompt), self.latency
        output: Any = judge_output(expect, item)
        if fault == "bad-output":
            output = {"critique": "", "result": "maybe"}
        reply_text = "this is not json" if fault == "not-json" else json.dumps(output)
        if path.endswith("/messages"):
            return 200, {}, _anthropic(body, output, reply_text, fault, prompt), self.latency
        return 200, {}, _openai(body, reply_text, prompt), self.latency

    # -- serving -------------------------------------------------------------------------------
    def respond(self, status: int, extra: dict[str, str], payload: bytes) -> bytes:
        """The response's bytes."""
        head = [f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}", "Content-Type: application/json",
                f"Content-Length: {len(payload)}", *(f"{k}: {v}" for k, v in extra.items())]
        return ("\r\n".join(head) + "\r\n\r\n").encode() + payload

    async def serve(self, ready: threading.Event | None = None) -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: _Connection(self), "127.0.0.1", self.port, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        self._server = server
        if ready is not None:
            ready.set()
        async with server:
            await server.serve_forever()

    def start(self) -> JudgeServer:
        """Serve in a daemon thread; returns once the port is bound."""
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=lambda: self._run_loop(ready), daemon=True)
        self._thread.start()
        ready.wait(5)
        return self

    def _run_loop(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        with contextlib.suppress(asyncio.CancelledError):
            self._loop.run_until_complete(self.serve(ready))

    def stop(self) -> None:
        """Stop serving and join the thread."""
        def cancel() -> None:
            for task in asyncio.all_tasks(self._loop):
                task.cancel()
        self._loop.call_soon_threadsafe(cancel)
        self._thread.join(5)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class _Connection(asyncio.Protocol):
    """One keep-alive connection: requests answered one at a time, in order, each ``latency`` seconds
    after it arrived.

    The latency counts from the request's arrival, as a real server's does (reading and answering a
    request is part of its latency, not added to it): ``data_received`` only notes the time and keeps
    the bytes, and the request is read in a later turn of the event loop, so a burst of requests is
    stamped as it arrives rather than one parse after another. A protocol rather than streams: the
    server's CPU per request is kept small (the benchmark's server runs in its own process)."""

    def __init__(self, server: JudgeServer) -> None:
        self.server = server
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.busy = False  # a request is being answered (its reply is not sent yet)
        self.arrived = 0.0  # when the request at the buffer's start arrived (event-loop time)
        self.reading = False  # a call to next_request is scheduled
        self.loop = asyncio.get_event_loop()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.server.connections += 1

    def data_received(self, data: bytes) -> None:
        if not self.buffer and not self.busy:
            self.arrived = self.loop.time()
        self.buffer += data
        if not self.busy and not self.reading:
            self.reading = True
            self.loop.call_soon(self.next_request)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def next_request(self) -> None:
        self.reading = False
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0 or self.busy:
            return
        head = bytes(self.buffer[:end + 4])
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        length = int(headers.get("content-length", "0"))
        if len(self.buffer) < end + 4 + length:
            return
        raw = bytes(self.buffer[end + 4:end + 4 + length])
        del self.buffer[:end + 4 + length]
        server = self.server
        path = lines[0].split(" ")[1]
        if server.record and not path.endswith(SIDE_PATHS):
            server.raw_requests.append((head, raw))
        status, extra, payload, delay = server.answer(path, orjson.loads(raw or b"{}"))
        self.busy = True
        if delay:
            self.loop.call_at(self.arrived + delay, self.send, server.respond(status, extra, payload))
        else:
            self.send(server.respond(status, extra, payload))

    def send(self, response: bytes) -> None:
        self.busy = False
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(response)
            self.arrived = self.loop.time()  # a request already waiting counts from now
            self.next_request()


def _error(status: int, message: str) -> bytes:
    return json.dumps({"error": {"code": status, "message": message, "type": "server_error"}}).encode()


def _tokens(body: dict[str, Any]) -> int:
    return sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4 + 1


def _openai(body: dict[str, Any], text: str, prompt: int) -> bytes:
    return orjson.dumps({
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": body.get("model"),
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 40, "total_tokens": prompt + 40},
    })


def _anthropic(body: dict[str, Any], output: Any, text: str, fault: str | None, prompt: int) -> bytes:
    if fault == "not-json":
        content = [{"type": "text", "text": text}]
    else:
        tool = (body.get("tools") or [{"name": "judge_output"}])[0]["name"]
        content = [{"type": "tool_use", "id": "toolu_fake", "name": tool, "input": output}]
    return json.dumps({
        "id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model"), "content": content,
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": 40},
    }).encode()


def main() -> None:
    """Serve until killed; prints the port on the first line of stdout."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = JudgeServer(latency=args.latency, port=args.port, record=False)

    async def run() -> None:
        ready = threading.Event()
        task = asyncio.create_task(server.serve(ready))
        while not ready.is_set():
            await asyncio.sleep(0.01)
        print(server.port, flush=True)
        await task

    # select(2) rather than epoll: epoll waits in whole milliseconds, rounded up, so every answer would
    # leave up to a millisecond after its latency (half a millisecond on average): the server, not the
    # client, would add to the benchmark's ratio. select's timeout is in microseconds, and with the
    # benchmark's 64 connections it costs no more.
    with asyncio.Runner(loop_factory=lambda: asyncio.SelectorEventLoop(selectors.SelectSelector())) as runner:
        runner.run(run())


if __name__ == "__main__":
    main()


def judge_prompt(trace_id: str, expect: str = "pass", criterion: str = "grounded-policy",
                 pre_verdict: Any = None) -> Any:
    """A judge prompt the fake servers answer: ``item=TRACE expect=RESULT`` in its user message."""
    from evalkit.judge.output import JUDGE_OUTPUT_SCHEMA
    from evalkit.judge.prompt import JudgePrompt, prompt_digest

    messages = ({"role": "system", "content": "You judge one criterion of a support agent's trace."},
                {"role": "user", "content": f"Judge this trace. item={trace_id} expect={expect}"})
    return JudgePrompt(criterion_id=criterion, trace_id=trace_id, messages=messages, schema=JUDGE_OUTPUT_SCHEMA,
                       digest=prompt_digest(messages, JUDGE_OUTPUT_SCHEMA), pre_verdict=pre_verdict, pin=None)
