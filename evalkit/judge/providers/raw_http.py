"""A small HTTP/1.1 keep-alive client for JSON POSTs: the judge's fast path to local OpenAI-compatible servers.

Why it exists: through the official ``openai`` SDK a chat-completion call costs 3 to 7 ms of CPU on a
small machine (the SDK transforms every request recursively, schema included, and httpx's connection
pool checks every pooled socket on every request). Against a local server (vLLM, llama.cpp, Ollama) with
short latencies and many calls in flight, that CPU, not the server, sets the pace. This client costs
about 0.1 ms a call, event loop included: one pooled socket per call in flight (to a loopback server
connected at once by the call that needs it, to any other opened ahead by :meth:`JSONPoster.preconnect`),
the request written in one piece, the reply parsed straight
from the socket's bytes (no transport or stream reader between) and read by ``Content-Length`` (or
chunked), nothing else.

What it does not do, on purpose: TLS, proxies, redirects, HTTP/2, cookies. It serves ``http://`` URLs
only (a server on this machine or the local network); everything else goes through the SDK, which
stays the default (see :mod:`evalkit.judge.providers.openai`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ipaddress
import socket
import zlib
from typing import NamedTuple
from urllib.parse import urlsplit

from evalkit.errors import InputError, TransientError


class HTTPReply(NamedTuple):
    """One response: status code, headers (names lower-cased), and the decoded body."""

    status: int
    headers: dict[str, str]
    body: bytes


class _Unreadable(Exception):
    """The server's bytes are not an HTTP/1.1 response this client reads."""


_HEAD_LIMIT = 1 << 20
"""The longest response head read (status line and headers), as the stream reader's limit was."""


READ_SIZE = 1 << 16
"""Bytes read from a socket at most at once."""


class _Connection:
    """One keep-alive connection: sends a request, parses the response from the bytes as they arrive.

    At most one exchange at a time (HTTP/1.1 without pipelining); :meth:`exchange` returns a future that
    is done when the whole response is in (or the connection failed).

    A non-blocking socket that the event loop watches (``add_reader``), not an asyncio transport and
    protocol: a request is one ``send`` (the rest, if the socket's buffer is full, when it is writable
    again), a reply is read straight from the socket into the parser. Wrapping 64 sockets into
    transports took 5 ms at the start of a run (several event-loop turns each, every socket's turn
    waiting for all the others'), and a transport's layers cost time on every call. The loop must be
    a selector loop (the default everywhere but Windows, where the SDK transport is the one to use)."""

    def __init__(self, sock: socket.socket, loop: asyncio.AbstractEventLoop) -> None:
        self.sock, self.loop, self.fd = sock, loop, sock.fileno()
        self.buffer = bytearray()
        self.waiter: asyncio.Future[tuple[HTTPReply, bool]] | None = None
        self.head: tuple[int, dict[str, str], bool] | None = None  # status, headers, reusable
        self.unsent: memoryview | None = None  # the rest of a request the socket could not take at once
        self.eof = False
        self.closed = False
        try:
            loop.add_reader(self.fd, self._readable)
        except NotImplementedError:
            sock.close()
            raise InputError("the http transport needs a selector event loop (not Windows' default): use the "
                             "SDK transport", path="transport") from None

    # -- the socket --------------------------------------------------------------------------
    def _readable(self) -> None:
        try:
            data = self.sock.recv(READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._lost(exc)
            return
        if data:
            self.buffer += data
            if self.waiter is not None:
                self._parse()
            return
        self.eof = True  # the server closed its side: a body read to the end is complete now
        if self.waiter is not None:
            self._parse()
        self.close()

    def _writable(self) -> None:
        assert self.unsent is not None
        try:
            sent = self.sock.send(self.unsent)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._lost(exc)
            return
        self.unsent = self.unsent[sent:]
        if not self.unsent:
            self.unsent = None
            self.loop.remove_writer(self.fd)

    def _lost(self, exc: Exception) -> None:
        waiter, self.waiter = self.waiter, None
        self.close()
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    # -- the exchange -------------------------------------------------------------------------
    @property
    def usable(self) -> bool:
        """Still open, and the server did not close or write to it while it was idle."""
        return not (self.closed or self.eof or self.buffer)

    def exchange(self, request: bytes) -> asyncio.Future[tuple[HTTPReply, bool]]:
        """Send ``request``; the future gets ``(reply, reusable)``."""
        assert not self.closed and self.waiter is None
        waiter = self.waiter = self.loop.create_future()
        self.head = None
        try:
            sent = self.sock.send(request)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError as exc:
            self._lost(exc)
            return waiter
        if sent < len(request):
            self.unsent = memoryview(request)[sent:]
            self.loop.add_writer(self.fd, self._writable)
        return waiter

    def close(self) -> None:
        """Stop watching the socket and close it; an exchange still waiting fails."""
        sock = self.detach()
        if sock is not None:
            sock.close()

    def detach(self) -> socket.socket | None:
        """Stop watching the socket and hand it over, to be closed by the caller (None if already closed);
        an exchange still waiting fails."""
        if self.closed:
            return None
        self.closed = True
        self.loop.remove_reader(self.fd)
        if self.unsent is not None:
            self.loop.remove_writer(self.fd)
            self.unsent = None
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(ConnectionResetError("the server closed the connection mid-response"))
        return self.sock

    def _parse(self) -> None:
        waiter = self.waiter
        if waiter is None or waiter.done():
            return
        try:
            done = self._response()
        except _Unreadable as exc:
            self.waiter = None
            waiter.set_exception(exc)
            return
        if done is not None:
            self.waiter = None
            waiter.set_result(done)
        elif self.eof:
            self.waiter = None
            waiter.set_exception(ConnectionResetError("the server closed the connection mid-response"))

    def _response(self) -> tuple[HTTPReply, bool] | None:
        """The whole response when it is in the buffer (consumed), else None (wait for more bytes)."""
        buffer = self.buffer
        if self.head is None:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > _HEAD_LIMIT:
                    raise _Unreadable(f"response head longer than {_HEAD_LIMIT} bytes")
                return None
            lines = buffer[:end].decode("latin-1").split("\r\n")
            del buffer[:end + 4]
            parts = lines[0].split(" ", 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
                raise _Unreadable(f"status line {lines[0][:80]!r}")
            headers: dict[str, str] = {}
            for line in lines[1:]:
                if line:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
            reusable = parts[0] == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
            self.head = (int(parts[1]), headers, reusable)
        status, headers, reusable = self.head
        if "chunked" in headers.get("transfer-encoding", "").lower():
            parsed = _chunked_body(buffer)
            if parsed is None:
                return None
            body, used = parsed
        elif "content-length" in headers:
            try:
                used = int(headers["content-length"])
            except ValueError:
                raise _Unreadable(f"Content-Length {headers['content-length']!r}") from None
            if len(buffer) < used:
                return None
            body = bytes(buffer[:used])
        else:  # the body runs to the end of the connection
            if not self.eof:
                return None
            body, used, reusable = bytes(buffer), len(buffer), False
        del buffer[:used]
        if buffer:  # bytes past the response: the connection is out of step, do not reuse it
            reusable = False
        return HTTPReply(status, headers, _decoded(body, headers)), reusable


def _chunked_body(buffer: bytearray) -> tuple[bytes, int] | None:
    """``(body, bytes used)`` of a complete chunked body at the buffer's start; None while incomplete."""
    chunks, pos = [], 0
    while True:
        eol = buffer.find(b"\r\n", pos)
        if eol < 0:
            return None
        line = bytes(buffer[pos:eol])
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise _Unreadable(f"chunk size line {line[:40]!r}") from None
        pos = eol + 2
        if size == 0:
            while True:  # trailers, then the blank line
                eol = buffer.find(b"\r\n", pos)
                if eol < 0:
                    return None
                blank, pos = eol == pos, eol + 2
                if blank:
                    return b"".join(chunks), pos
        if len(buffer) < pos + size + 2:
            return None
        chunks.append(bytes(buffer[pos:pos + size]))
        pos += size + 2


def _decoded(body: bytes, headers: dict[str, str]) -> bytes:
    encoding = headers.get("content-encoding", "identity").lower()
    if encoding in ("gzip", "deflate"):
        try:
            return zlib.decompress(body, 47 if encoding == "gzip" else 15)
        except zlib.error:
            try:
                return zlib.decompress(body, -15)  # raw deflate, as some servers send it
            except zlib.error as exc:
                raise _Unreadable(f"{encoding} body: {exc}") from None
    if encoding != "identity":
        raise _Unreadable(f"Content-Encoding {encoding!r}")
    return body


def _close_all(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        sock.close()


LOOPBACK_CONNECT_TIMEOUT = 0.05
"""How long a connect to a loopback server may hold the event loop (it normally takes microseconds)."""


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``host`` as an IP address; None for a name (resolved by the event loop, never here)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _loopback_family(host: str) -> tuple[bool, int]:
    """Whether ``host`` is a loopback IP address (127.0.0.0/8, ::1), and its address family."""
    address = _ip(host)
    if address is None:
        return False, socket.AF_INET
    return address.is_loopback, socket.AF_INET6 if address.version == 6 else socket.AF_INET


def _no_delay(sock: socket.socket) -> None:
    """Send each request at once (no Nagle delay), as asyncio's transports do."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class JSONPoster:
    """POSTs JSON bodies to one ``http://`` server over a pool of keep-alive connections.

    Args:
        base_url: ``http://host[:port][/prefix]``; paths given to :meth:`post` are appended to the prefix.
        headers: sent with every request (``Host`` and ``Content-Length`` are added).
        timeout: seconds for one whole exchange (connect, send, read); past it, a ``timeout`` error.
        max_connections: sockets open at most (more concurrent posts wait for one); None: no cap, one
            socket per post in flight (the judge runner bounds those).

    Raises:
        InputError: the URL is not ``http://`` with a host.
    """

    def __init__(self, base_url: str, *, headers: dict[str, str], timeout: float,
                 max_connections: int | None = None) -> None:
        url = urlsplit(base_url)
        if url.scheme != "http" or not url.hostname:
            raise InputError(f"the raw HTTP transport serves http:// URLs only, not {base_url!r}: use the SDK "
                             "transport for https and remote APIs", path="transport")
        self.host, self.port = url.hostname, url.port or 80
        self.prefix = url.path.rstrip("/")
        self.timeout = timeout
        host = self.host if url.port is None else f"{self.host}:{self.port}"
        if ":" in self.host:  # an IPv6 literal keeps its brackets in Host
            host = f"[{self.host}]" + (f":{self.port}" if url.port else "")
        self._head = "".join(f"{k}: {v}\r\n" for k, v in {"Host": host, **headers}.items()).encode("latin-1")
        self._idle: list[_Connection] = []
        self._max_connections = max_connections
        self._slots = asyncio.Semaphore(max_connections) if max_connections else contextlib.nullcontext()
        self._open: set[_Connection] = set()
        self._loopback, self._family = _loopback_family(self.host)
        self._literal = _ip(self.host) is not None
        self._opening = 0  # connections being opened ahead (preconnect)
        self._waiters: collections.deque[asyncio.Future] = collections.deque()
        self._warming: set[asyncio.Task] = set()

    def preconnect(self, connections: int) -> None:
        """Open ``connections`` sockets (at most ``max_connections``) ahead of the first posts, in the
        background; a post that finds none idle waits for one still opening rather than opening its own.
        Best effort: a socket that fails to open is left to the post that needs one to report. Call from
        within the event loop.

        A loopback server gets none ahead: each post that finds no idle socket connects one at once
        (:meth:`_connect_loopback`, tens of microseconds), so the first request leaves after one connect
        rather than after all of them, and the connects are spread among the first sends."""
        if self._loopback:
            return
        if self._max_connections:
            connections = min(connections, self._max_connections)
        for _ in range(connections - len(self._open) - self._opening):
            self._opening += 1
            task = asyncio.ensure_future(self._open_ahead())
            self._warming.add(task)
            task.add_done_callback(self._warming.discard)

    def _connect_loopback(self) -> socket.socket | None:
        """A socket connected to a loopback server at once, in this thread; None if it did not connect.

        On loopback the kernel completes a connect inside the system call (or refuses it at once), so
        connecting here, with a short timeout for a server whose backlog is full, takes tens of
        microseconds; through the event loop (asyncio's ``sock_connect``) each took about 200 (64
        sockets: 2.4 ms against 13 to 23 ms, measured here). A socket that does not connect is opened
        through the event loop instead, whose failure the post reports."""
        sock = socket.socket(self._family, socket.SOCK_STREAM)
        try:
            sock.settimeout(LOOPBACK_CONNECT_TIMEOUT)
            sock.connect((self.host, self.port))
            sock.setblocking(False)
            _no_delay(sock)
        except OSError:
            sock.close()
            return None
        return sock

    async def _open_ahead(self) -> None:
        try:
            async with asyncio.timeout(self.timeout):
                connection = await self._open_connection()
            self._idle.append(connection)
        except OSError:  # TimeoutError included: the post that waits for it opens its own, and reports
            pass
        finally:
            self._opening -= 1
            while self._waiters:  # hand it to the first post still waiting
                waiter = self._waiters.popleft()
                if not waiter.done():
                    waiter.set_result(None)
                    break

    async def post(self, path: str, body: bytes) -> HTTPReply:
        """Send one POST and read its whole response.

        Raises:
            TransientError: the connection failed or was closed mid-exchange (``connection``), the response
                was not HTTP (``server``), or the exchange took longer than the timeout (``timeout``).
        """
        request = b"POST %s HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n%s" % (
            (self.prefix + path).encode(), self._head, len(body), body)
        async with self._slots:
            connection: _Connection | None = None
            try:
                async with asyncio.timeout(self.timeout):
                    connection = await self._connection()
                    reply, reusable = await connection.exchange(request)
            except TimeoutError:
                self._discard(connection)
                raise TransientError(f"timed out: no answer within {self.timeout:g}s", kind="timeout") from None
            except OSError as exc:
                self._discard(connection)
                raise TransientError(f"connection failed: {type(exc).__name__}: {exc}", kind="connection") from None
            except _Unreadable as exc:
                self._discard(connection)
                raise TransientError(f"unreadable response: {exc}", kind="server") from None
            except BaseException:  # cancelled mid-exchange: the socket's state is unknown
                self._discard(connection)
                raise
            if reusable:
                self._idle.append(connection)
            else:
                self._discard(connection)
            return reply

    async def _connection(self) -> _Connection:
        while True:
            while self._idle:
                connection = self._idle.pop()
                if connection.usable:  # the server did not close it while idle
                    return connection
                self._discard(connection)
            if self._opening <= len(self._waiters):  # no socket opening ahead is left for this post
                break
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
        return await self._open_connection()

    async def _open_connection(self) -> _Connection:
        loop = asyncio.get_running_loop()
        sock = self._connect_loopback() if self._loopback else None
        connection = _Connection(sock or await self._connect(loop), loop)
        self._open.add(connection)
        return connection

    async def _connect(self, loop: asyncio.AbstractEventLoop) -> socket.socket:
        """A socket connected to the server through the event loop (each of its addresses in turn)."""
        if self._literal:  # an IP address: nothing to resolve
            addresses = [(self._family, (self.host, self.port))]
        else:
            addresses = [(family, address) for family, _, _, _, address
                         in await loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)]
        error: OSError = OSError(f"no address for {self.host}")
        for family, address in addresses:
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.setblocking(False)
                await loop.sock_connect(sock, address)
            except OSError as exc:
                sock.close()
                error = exc
                continue
            except BaseException:
                sock.close()
                raise
            _no_delay(sock)
            return sock
        raise error

    def _discard(self, connection: _Connection | None) -> None:
        if connection is not None:
            self._open.discard(connection)
            connection.close()

    async def aclose(self) -> None:
        """Close every connection.

        The sockets are closed on a worker thread: each close is a system call of tens of microseconds
        (64 of them: 1.5 to 2.4 ms at the end of a judge run, measured here), which the event loop's
        thread spends writing the run's outputs instead."""
        for task in list(self._warming):
            task.cancel()
        self._idle.clear()
        connections, self._open = self._open, set()
        sockets = [sock for sock in (connection.detach() for connection in connections) if sock is not None]
        if len(sockets) > 1:
            await asyncio.to_thread(_close_all, sockets)
        else:
            _close_all(sockets)


__all__ = ["HTTPReply", "JSONPoster"]
