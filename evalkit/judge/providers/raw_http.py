"""A small HTTP/1.1 keep-alive client for JSON POSTs: the judge's fast path to local OpenAI-compatible servers.

Why it exists: through the official ``openai`` SDK a chat-completion call costs 3 to 7 ms of CPU on a
small machine (the SDK transforms every request recursively, schema included, and httpx's connection
pool checks every pooled socket on every request). Against a local server (vLLM, llama.cpp, Ollama) with
short latencies and many calls in flight, that CPU, not the server, sets the pace. This client costs
about 0.1 ms a call: one pooled socket per call in flight, the request written in one piece, the reply
read by ``Content-Length`` (or chunked), nothing else.

What it does not do, on purpose: TLS, proxies, redirects, HTTP/2, cookies. It serves ``http://`` URLs
only (a server on this machine or the local network); everything else goes through the SDK, which
stays the default (see :mod:`evalkit.judge.providers.openai`).
"""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from typing import NamedTuple
from urllib.parse import urlsplit

from evalkit.errors import InputError, TransientError

_Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class HTTPReply(NamedTuple):
    """One response: status code, headers (names lower-cased), and the decoded body."""

    status: int
    headers: dict[str, str]
    body: bytes


class _Unreadable(Exception):
    """The server's bytes are not an HTTP/1.1 response this client reads."""


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
        self._slots = asyncio.Semaphore(max_connections) if max_connections else contextlib.nullcontext()
        self._open: set[asyncio.StreamWriter] = set()

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
                    reply, reusable = await self._exchange(connection, request)
            except TimeoutError:
                self._discard(connection)
                raise TransientError(f"timed out: no answer within {self.timeout:g}s", kind="timeout") from None
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
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
        while self._idle:
            reader, writer = self._idle.pop()
            if not reader.at_eof() and not writer.is_closing():  # the server did not close it while idle
                return reader, writer
            self._discard((reader, writer))
        reader, writer = await asyncio.open_connection(self.host, self.port, limit=1 << 20)
        self._open.add(writer)
        return reader, writer

    async def _exchange(self, connection: _Connection, request: bytes) -> tuple[HTTPReply, bool]:
        reader, writer = connection
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise _Unreadable(f"status line {lines[0][:80]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        reusable = parts[0] == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = await _read_chunked(reader)
        elif "content-length" in headers:
            try:
                length = int(headers["content-length"])
            except ValueError:
                raise _Unreadable(f"Content-Length {headers['content-length']!r}") from None
            body = await reader.readexactly(length)
        else:  # the body runs to the end of the connection
            body, reusable = await reader.read(), False
        encoding = headers.get("content-encoding", "identity").lower()
        if encoding in ("gzip", "deflate"):
            try:
                body = zlib.decompress(body, 47 if encoding == "gzip" else 15)
            except zlib.error:
                try:
                    body = zlib.decompress(body, -15)  # raw deflate, as some servers send it
                except zlib.error as exc:
                    raise _Unreadable(f"{encoding} body: {exc}") from None
        elif encoding != "identity":
            raise _Unreadable(f"Content-Encoding {encoding!r}")
        return HTTPReply(status, headers, body), reusable

    def _discard(self, connection: _Connection | None) -> None:
        if connection is not None:
            self._open.discard(connection[1])
            connection[1].close()

    async def aclose(self) -> None:
        """Close every connection."""
        self._idle.clear()
        writers, self._open = self._open, set()
        for writer in writers:
            writer.close()
        for writer in writers:
            with contextlib.suppress(OSError):
                await writer.wait_closed()


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks = []
    while True:
        line = await reader.readuntil(b"\r\n")
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise _Unreadable(f"chunk size line {line[:40]!r}") from None
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers, then the blank line
                pass
            return b"".join(chunks)
        chunk = await reader.readexactly(size + 2)
        chunks.append(chunk[:-2])


__all__ = ["HTTPReply", "JSONPoster"]
