"""uvicorn's httptools protocol, with each response's head and body leaving in one write.

uvicorn writes a response's status line and headers when the app sends `http.response.start`, and its body on
`http.response.body`: two `send` system calls and, with TCP_NODELAY, two segments for every small answer. Here the
connection's transport holds a head back until the first body write of the same response (or the end of the event
loop's turn, or a close), then writes both at once. Nothing else changes: a body larger than `JOIN_LIMIT` follows
its head in a second write (no copy), and every other transport method is the transport's own.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

JOIN_LIMIT = 64 * 1024  # bodies up to this size are joined to their head (a copy: cheap below it)


class HeadJoiningTransport:
    """A transport that holds a response head (`HTTP/...` through the blank line) until the next write."""

    __slots__ = ("_transport", "_loop", "_held")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if len(data) <= JOIN_LIMIT:
                self._transport.write(held + data)
                return
            self._transport.write(held)
        elif data[:5] == b"HTTP/" and data[-4:] == b"\r\n\r\n":
            self._held = data
            self._loop.call_soon(self.flush)  # a body that comes later (a stream) must not hold the head back
            return
        self._transport.write(data)

    def flush(self) -> None:
        """Write a held head now."""
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class HeadJoiningHttpToolsProtocol(HttpToolsProtocol):
    """`HttpToolsProtocol` on a `HeadJoiningTransport` (uvicorn's `http=` setting)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(HeadJoiningTransport(transport, self.loop))  # type: ignore[arg-type]
