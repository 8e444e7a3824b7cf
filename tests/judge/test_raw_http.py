"""The ``http`` transport of the openai provider against the official SDK, on the same loopback server.

Same bytes on the wire (request line, auth and content headers, body), the same reply read, the same
failures raised, the same structured-output step-down; and the raw client's own duties: keep-alive reuse,
chunked and gzip bodies, a connection the server closed while idle, https refused.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading

import pytest

from evalkit.contracts.judge import JudgePin
from evalkit.errors import CallError, FatalError, InputError, ProviderError, TransientError
from evalkit.judge.output import JUDGE_OUTPUT_SCHEMA
from evalkit.judge.providers import make_provider
from evalkit.judge.providers.openai import OpenAIProvider
from evalkit.judge.runner import run_judge
from tests.judge.servers import JudgeServer, judge_prompt, on_own_loop

TRANSPORTS = ("sdk", "http")


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")



def _provider(url, transport, timeout=5.0, **kw):
    pin = JudgePin(provider="openai", model="gpt-4o-mini", transport=transport, **kw)
    return make_provider(pin, base_url=url, timeout=timeout)


def _complete_all(provider, prompts):
    """Each prompt once through ``provider.complete``: the reply, or the error it raised."""
    async def main():
        out = []
        try:
            for messages in prompts:
                try:
                    out.append(await provider.complete(messages, JUDGE_OUTPUT_SCHEMA))
                except ProviderError as exc:
                    out.append(exc)
        finally:
            await provider.aclose()
        return out

    return on_own_loop(main())


def _outcome(result):
    """A reply as it is; an error as its class, kind, Retry-After and, where the server wrote it, message
    (a timeout or an unreadable body is worded by each HTTP client in its own way)."""
    if isinstance(result, ProviderError):
        own_words = not isinstance(result, TransientError) or "HTTP" in str(result)
        return (type(result).__name__, getattr(result, "kind", None), getattr(result, "retry_after", None),
                str(result) if own_words else str(result).split(":")[0])
    return result


def _head_fields(head: bytes) -> tuple[str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    return lines[0], fields


TRICKY = ["plain", "naïve café — ünïcödé", "line\u2028separator and \u2029", 'quotes " and \\ backslash',
          "tab\tnewline\ncontrol\x01", "emoji 🧪 astral"]


def _messages(i: int, text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": f"You judge. {text}"},
            {"role": "user", "content": f"Judge this trace. item=t{i} {text}"}]


@pytest.mark.parametrize("llama_cpp", [False, True])
def test_both_transports_send_the_same_bytes_and_read_the_same_replies(keys, llama_cpp):
    results, raw = {}, {}
    prompts = [_messages(i, text) for i, text in enumerate(TRICKY)]
    server = JudgeServer(llama_cpp=llama_cpp).start()
    try:
        for transport in TRANSPORTS:
            server.attempts.clear()
            sent = len(server.raw_requests)
            results[transport] = _complete_all(_provider(server.url + "/v1", transport), prompts)
            raw[transport] = server.raw_requests[sent:]
    finally:
        server.stop()
    assert results["sdk"] == results["http"]
    assert all(r.text.startswith("{") for r in results["http"])
    assert len(raw["sdk"]) == len(raw["http"]) == len(prompts) + llama_cpp  # one refusal, then json_object
    for (sdk_head, sdk_body), (http_head, http_body) in zip(raw["sdk"], raw["http"], strict=True):
        assert http_body == sdk_body  # byte for byte
        sdk_line, sdk_fields = _head_fields(sdk_head)
        http_line, http_fields = _head_fields(http_head)
        assert http_line == sdk_line == "POST /v1/chat/completions HTTP/1.1"
        for name in ("authorization", "content-type", "accept", "content-length", "host", "accept-encoding"):
            assert http_fields[name] == sdk_fields[name], name
    body = json.loads(raw["http"][-1][1])
    assert body["max_tokens"] == 1024 and body["temperature"] == 0
    assert body["response_format"]["type"] == ("json_object" if llama_cpp else "json_schema")


def test_the_inline_schema_mode_sends_the_same_bytes(keys):
    raw = {}
    for transport in TRANSPORTS:
        server = JudgeServer().start()
        try:
            provider = OpenAIProvider("m", api_key="sk-test", base_url=server.url + "/v1", modes=("prompt",),
                                      transport=transport, max_tokens=33)
            _complete_all(provider, [_messages(0, "x")])
        finally:
            server.stop()
        raw[transport] = server.raw_requests[0][1]
    assert raw["http"] == raw["sdk"]
    body = json.loads(raw["http"])
    assert "response_format" not in body and body["max_tokens"] == 33
    assert "JSON Schema" in body["messages"][0]["content"]


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["429", "500", "401", "malformed", "timeout", "bad-output", "not-json"])
def test_both_transports_fail_the_same_way(keys, fault):
    outcomes = {}
    for transport in TRANSPORTS:
        server = JudgeServer(faults={"t1": [fault]}, retry_after="7", hang=2.0).start()
        try:
            provider = _provider(server.url + "/v1", transport, timeout=0.5)
            outcomes[transport] = [_outcome(r) for r in _complete_all(provider, [_messages(1, "x")])]
        finally:
            server.stop()
    assert outcomes["sdk"] == outcomes["http"]
    expected = {"429": ("TransientError", "rate-limit", 7.0), "500": ("TransientError", "server", None),
                "401": ("FatalError", None, None), "malformed": ("TransientError", "server", None),
                "timeout": ("TransientError", "timeout", None)}
    if fault in expected:
        assert outcomes["http"][0][:3] == expected[fault]
    else:  # the reply is read; the runner judges whether it is valid
        assert outcomes["http"][0].text


def test_http_transport_runs_a_judge_run_reusing_its_connections(keys, tmp_path):
    server = JudgeServer().start()
    try:
        provider = _provider(server.url + "/v1", "http")
        summary = run_judge([judge_prompt(f"t{i}", "fail" if i % 3 else "pass") for i in range(20)], provider,
                            out=tmp_path / "v.jsonl", concurrency=4, progress=False)
    finally:
        server.stop()
    assert summary.verdicts == 20 and summary.errors == 0 and summary.calls == 20
    assert server.connections <= 4  # keep-alive: one socket per call in flight, reused
    results = [json.loads(line)["result"] for line in (tmp_path / "v.jsonl").read_text().splitlines()]
    assert results.count("fail") == 13


def test_http_transport_is_for_http_urls_and_the_openai_provider_only(keys, monkeypatch):
    with pytest.raises(InputError, match="http:// URLs only"):
        _provider("https://api.openai.com/v1", "http")
    with pytest.raises(InputError, match="http:// URLs only"):
        _provider(None, "http")  # OpenAI itself: the SDK's job
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with pytest.raises(InputError, match="openai provider only"):
        make_provider(JudgePin(provider="anthropic", model="c", transport="http"), base_url="http://127.0.0.1:1")
    with pytest.raises(ValueError):
        JudgePin(provider="openai", model="m", transport="carrier-pigeon")


class _OddServer:
    """Answers each request with a body sent chunked and gzip-compressed, then closes the connection
    without saying so (as a server whose keep-alive timeout is shorter than the client's wait)."""

    def __init__(self, reply: bytes) -> None:
        self.reply, self.connections = reply, 0
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        ready.wait(5)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)

        async def handle(reader, writer):
            self.connections += 1
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))
            await reader.readexactly(length)
            body = gzip.compress(self.reply)
            chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:10], body[10:]))
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n")
            await writer.drain()
            writer.close()

        async def serve():
            server = await asyncio.start_server(handle, "127.0.0.1", 0)
            self.port = server.sockets[0].getsockname()[1]
            ready.set()
            await server.serve_forever()

        self.loop.run_until_complete(serve())


def test_http_transport_reads_chunked_gzip_bodies_and_reconnects_after_an_idle_close(keys):
    reply = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": '{"a": 1}'}}],
                        "usage": {"prompt_tokens": 5, "completion_tokens": 2}}).encode()
    server = _OddServer(reply)
    provider = _provider(f"http://127.0.0.1:{server.port}/v1", "http")

    async def twice():
        try:
            first = await provider.complete(_messages(0, "x"), JUDGE_OUTPUT_SCHEMA)
            await asyncio.sleep(0.2)  # the server's close lands while the connection is idle
            second = await provider.complete(_messages(1, "x"), JUDGE_OUTPUT_SCHEMA)
            return first, second
        finally:
            await provider.aclose()

    first, second = on_own_loop(twice())
    assert first.text == second.text == '{"a": 1}'
    assert (first.input_tokens, first.output_tokens, first.mode) == (5, 2, "json_schema")
    assert server.connections == 2  # the closed connection was not reused


def test_a_refusal_without_content_is_a_call_error_on_both(keys):
    class Refusing(JudgeServer):
        def answer(self, path, body):
            payload = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": None,
                                                                          "refusal": "I cannot judge this"}}]})
            return 200, {}, payload.encode(), 0.0

    outcomes = {}
    for transport in TRANSPORTS:
        server = Refusing().start()
        try:
            outcomes[transport] = _complete_all(_provider(server.url + "/v1", transport), [_messages(0, "x")])
        finally:
            server.stop()
    assert [str(e) for e in outcomes["sdk"]] == [str(e) for e in outcomes["http"]]
    assert isinstance(outcomes["http"][0], CallError) and "I cannot judge this" in str(outcomes["http"][0])
    assert not isinstance(outcomes["http"][0], FatalError)


@pytest.mark.parametrize("framing", ["length", "chunked", "to-eof"])
def test_a_response_arriving_a_byte_at_a_time_is_read_whole(framing):
    from evalkit.judge.providers.raw_http import _Connection

    payload = json.dumps({"choices": [], "note": "naïve " * 50}).encode()
    body = gzip.compress(payload)
    if framing == "chunked":
        head = b"Transfer-Encoding: chunked\r\n"
        wire = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(part), part) for part in (body[:7], body[7:40], body[40:]))
        wire += b"0\r\nX-Trailer: 1\r\n\r\n"
    elif framing == "length":
        head, wire = b"Content-Length: %d\r\n" % len(body), body
    else:
        head, wire = b"", body
    response = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n" + head + b"\r\n" + wire

    async def main():
        ours, servers = socket.socketpair()
        ours.setblocking(False)
        connection = _Connection(ours, asyncio.get_running_loop())
        done = connection.exchange(b"POST / HTTP/1.1\r\n\r\n")
        assert servers.recv(100) == b"POST / HTTP/1.1\r\n\r\n"
        for i in range(len(response)):  # one byte a read
            assert not done.done()
            servers.send(response[i:i + 1])
            connection._readable()
        if framing == "to-eof":
            assert not done.done()
            servers.shutdown(socket.SHUT_WR)
            connection._readable()
        reply, reusable = done.result()
        assert reply.status == 200 and reply.body == payload
        assert reusable == (framing != "to-eof") == connection.usable
        connection.close()
        servers.close()

    on_own_loop(main())


def test_a_request_larger_than_the_socket_buffer_is_sent_whole_while_the_reply_is_awaited():
    from evalkit.judge.providers.raw_http import _Connection

    request = b"POST / HTTP/1.1\r\nContent-Length: 8000000\r\n\r\n" + bytes(range(256)) * 31250

    async def main():
        ours, servers = socket.socketpair()
        ours.setblocking(False)
        servers.setblocking(False)
        loop = asyncio.get_running_loop()
        connection = _Connection(ours, loop)
        done = connection.exchange(request)
        assert connection.unsent is not None  # the socket took part of it; the loop sends the rest
        received = bytearray()
        while len(received) < len(request):
            received += await loop.sock_recv(servers, 1 << 20)
        assert received == request and connection.unsent is None
        await loop.sock_sendall(servers, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
        reply, reusable = await done
        assert (reply.status, reply.body, reusable) == (200, b"{}", True)
        connection.close()
        servers.close()

    on_own_loop(main())


def test_a_connection_closed_mid_response_or_a_garbled_one_is_a_transient_error(keys):
    async def serve(reply: bytes):
        async def handle(reader, writer):
            await reader.readuntil(b"\r\n\r\n")
            writer.write(reply)
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        return server, server.sockets[0].getsockname()[1]

    async def main():
        from evalkit.judge.providers.raw_http import JSONPoster

        outcomes = []
        for reply in (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"cut", b"SMTP ready\r\n\r\n"):
            server, port = await serve(reply)
            poster = JSONPoster(f"http://127.0.0.1:{port}/v1", headers={}, timeout=5)
            try:
                await poster.post("/chat/completions", b"{}")
            except TransientError as exc:
                outcomes.append((exc.kind, str(exc).split(":")[0]))
            await poster.aclose()
            server.close()
        return outcomes

    assert on_own_loop(main()) == [("connection", "connection failed"), ("server", "unreadable response")]


def test_sockets_to_a_loopback_server_connect_at_once_and_a_named_host_through_the_event_loop():
    from evalkit.judge.providers.raw_http import JSONPoster, _loopback_family

    assert [_loopback_family(h)[0] for h in ("127.0.0.1", "127.3.2.1", "::1", "10.0.0.7", "localhost")] == \
        [True, True, True, False, False]

    async def main():
        server = JudgeServer().start()
        try:
            replies = []
            for host in ("127.0.0.1", "localhost"):
                poster = JSONPoster(f"http://{host}:{server.port}/v1", headers={}, timeout=5)
                poster.preconnect(4)
                # Loopback: nothing ahead, each post connects at once, never through the event loop's
                # connect; a name: opened ahead, still connecting on the event loop.
                assert (len(poster._idle), poster._opening) == ((0, 0) if host == "127.0.0.1" else (0, 4))
                if host == "127.0.0.1":
                    async def through_the_loop(loop):
                        raise AssertionError("a loopback socket went through the event loop's connect")
                    poster._connect = through_the_loop
                body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "item=t1"}]}).encode()
                replies += await asyncio.gather(*(poster.post("/chat/completions", body) for _ in range(4)))
                sockets = [connection.sock for connection in poster._open]
                await poster.aclose()
                assert len(sockets) == 4 and all(sock.fileno() == -1 for sock in sockets)  # closed on return
        finally:
            server.stop()
        assert [r.status for r in replies] == [200] * 8
        assert server.connections == 8  # four each: one per post in flight

    on_own_loop(main())
