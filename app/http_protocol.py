"""uvicorn's httptools protocol, as the server runs it (`StarrouteHttpProtocol`):

- each response's head and body leave in one write. uvicorn writes a response's status line and headers when the
  app sends `http.response.start`, and its body on `http.response.body`: two `send` system calls and, with
  TCP_NODELAY, two segments for every small answer. Here the connection's transport holds a head back until the
  first body write of the same response (or the end of the event loop's turn, or a close), then writes both at once.
  A body larger than `JOIN_LIMIT` follows its head in a second write (no copy), and every other transport method is
  the transport's own.
- a request the HTTP parser refuses is answered in JSON with a code, as every other refusal (uvicorn answers
  "Invalid HTTP request received." in plain text): a URL longer than `MAX_URL_BYTES` (httptools' URL parser takes
  no longer one) `TooBig`, with HTTP 400 on the OSRM paths as every OSRM error, 414 on the native ones; a URL that
  does not parse `InvalidUrl`; anything else malformed `InvalidQuery` with the parser's reason.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from app.api.errors import error_body
from app.api.frontdoor import is_native_path

JOIN_LIMIT = 64 * 1024  # bodies up to this size are joined to their head (a copy: cheap below it)
MAX_URL_BYTES = 65535  # httptools.parse_url keeps offsets in 16 bits


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


class UrlTooLong(Exception):
    """Raised in the parser's URL callback: the URL has grown past `MAX_URL_BYTES`."""


def refusal(exc: BaseException | None, url: bytes) -> tuple[int, str, str]:
    """(status, code, message) of the answer to a request the parser refused with `exc` (the callback's own exception
    is its `__context__`), `url` being what arrived of its URL."""
    cause = exc.__context__ if exc is not None else None
    if isinstance(cause, UrlTooLong):
        path = url.split(b"?", 1)[0].decode("latin-1")
        if is_native_path(path):
            why = f"URL longer than {MAX_URL_BYTES} bytes: send the request as a POST with a JSON body"
            return 414, "TooBig", why
        return 400, "TooBig", f"URL longer than {MAX_URL_BYTES} bytes"
    if isinstance(cause, httptools.HttpParserInvalidURLError):
        return 400, "InvalidUrl", "URL string malformed"
    reason = str(exc) if exc is not None else "unknown"
    return 400, "InvalidQuery", f"malformed HTTP request: {reason}"


class StarrouteHttpProtocol(HttpToolsProtocol):
    """`HttpToolsProtocol` on a `HeadJoiningTransport`, with the parser's refusals answered in JSON (uvicorn's
    `http=` setting)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(HeadJoiningTransport(transport, self.loop))  # type: ignore[arg-type]

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        if len(self.url) > MAX_URL_BYTES:  # said now: no need to read the rest of it
            raise UrlTooLong

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a parser error (called in its `except` clause, so the error is `sys.exc_info()`'s), in
        JSON; the connection closes."""
        status, code, message = refusal(sys.exc_info()[1], getattr(self, "url", b""))
        self.refuse(status, code, message)

    def refuse(self, status: int, code: str, message: str) -> None:
        """Answer `{"code", "message"}` with `status` and close the connection."""
        body = error_body(code, message)
        content = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        content.extend(
            [
                b"content-type: application/json; charset=UTF-8\r\n",
                b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
                b"connection: close\r\n",
                b"\r\n",
                body,
            ]
        )
        self.transport.write(b"".join(content))
        self.transport.close()
