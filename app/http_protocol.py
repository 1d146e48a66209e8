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
- the queue is bounded and every wait it imposes ends in an answer (`ConnectionLimits`, from the settings): the
  connections waiting in the listener's queue are accepted at once (libuv, under uvloop, accepts one per turn of the
  event loop: under load, a turn lasts a fraction of a second and connections waited many seconds unseen, to time
  out without an answer); a worker holding `max_connections` answers a new one 503 `Overloaded` with Retry-After
  and closes it; a connection whose request head has not arrived `header_timeout_s` after it opened (or after its
  first byte, on a kept-alive connection) is answered 408 `Timeout` and closed (slow clients holding sockets); a
  request that waited longer than `queue_timeout_s` for the loop once its head had arrived is answered 503
  `Overloaded` with Retry-After, unworked.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from dataclasses import dataclass
from typing import Any, ClassVar

import httptools
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from app.api.errors import RETRY_AFTER_S, error_body
from app.api.frontdoor import is_native_path

JOIN_LIMIT = 64 * 1024  # bodies up to this size are joined to their head (a copy: cheap below it)
MAX_URL_BYTES = 65535  # httptools.parse_url keeps offsets in 16 bits
ACCEPT_BATCH = 64  # connections a worker takes from the listener's queue at a time (then the next turn)


@dataclass(frozen=True)
class ConnectionLimits:
    """A worker's bounds on connections and waiting (`Settings`: `max_connections`, `header_timeout_s`,
    `queue_timeout_s`)."""

    max_connections: int = 1000
    header_timeout_s: float = 10.0
    queue_timeout_s: float = 5.0


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
    """`HttpToolsProtocol` on a `HeadJoiningTransport`, with the parser's refusals answered in JSON and the
    connection limits of `ConnectionLimits` (uvicorn's `http=` setting: `configured` makes the class a server uses)."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits()
    listener: ClassVar[socket.socket | None] = None  # the listening socket, whose queue `_accept_waiting` empties
    accepting: ClassVar[bool] = True  # False once the server shuts down

    @classmethod
    def configured(cls, limits: ConnectionLimits) -> type[StarrouteHttpProtocol]:
        """A subclass with these limits; set its `listener` once the socket is bound."""
        return type(cls.__name__, (cls,), {"limits": limits, "listener": None, "accepting": True})

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(HeadJoiningTransport(transport, self.loop))  # type: ignore[arg-type]
        self._head_timer: asyncio.TimerHandle | None = None
        self._head_pending = False  # a request has begun and its head is not complete
        self._head_at = 0.0
        if len(self.connections) > self.limits.max_connections:
            self.refuse(503, "Overloaded", f"this worker holds {self.limits.max_connections} connections: retry later")
            return
        self._arm_head_timer()
        self._accept_waiting()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        type(self).accepting = False
        super().shutdown()

    def _accept_waiting(self) -> None:
        """Accept the connections waiting in the listener's queue now, up to `ACCEPT_BATCH` (each new connection
        accepts the next ones), not one per turn of the loop as uvloop's server does."""
        listener = self.listener
        if listener is None or not self.accepting:
            return
        for _ in range(ACCEPT_BATCH):
            try:
                conn, _ = listener.accept()
            except OSError:  # none waiting (or the listener closed, or no descriptor left: uvloop's accept says so)
                return
            conn.setblocking(False)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.loop.create_task(self.loop.connect_accepted_socket(self._new_connection, conn))

    def _new_connection(self) -> StarrouteHttpProtocol:
        return type(self)(config=self.config, server_state=self.server_state, app_state=self.app_state, _loop=self.loop)

    # the request head's deadline -------------------------------------------------------------------------------
    def _arm_head_timer(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.limits.header_timeout_s, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        timer = getattr(self, "_head_timer", None)
        if timer is not None:
            timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            why = f"the request's head did not arrive within {self.limits.header_timeout_s:g} s"
            self.refuse(408, "Timeout", why)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_pending = True

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._head_pending and self._head_timer is None and not self.transport.is_closing():
            self._arm_head_timer()  # a kept-alive connection's next request began, its head is not all here yet

    def on_headers_complete(self) -> None:
        self._cancel_head_timer()
        self._head_pending = False
        self._head_at = self.loop.time()
        super().on_headers_complete()

    def _start_asgi_task(self, cycle: Any, app: Any) -> None:
        super()._start_asgi_task(cycle, self._unless_waited_too_long(app, self._head_at))

    def _unless_waited_too_long(self, app: Any, head_at: float) -> Any:
        """`app`, unless the request, its head complete at `head_at`, has waited over `queue_timeout_s` for the loop
        by the time it starts (then 503 `Overloaded` with Retry-After, unworked)."""
        limit = self.limits.queue_timeout_s
        loop = self.loop

        async def guarded(scope: Any, receive: Any, send: Any) -> None:
            waited = loop.time() - head_at
            if waited <= limit:
                await app(scope, receive, send)
                return
            body = error_body("Overloaded", f"the request waited {waited:.1f} s for this worker: retry later")
            headers = [
                (b"content-type", b"application/json; charset=UTF-8"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", str(RETRY_AFTER_S).encode()),
            ]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        return guarded

    # refusals ----------------------------------------------------------------------------------------------------
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
        """Answer `{"code", "message"}` with `status` (and Retry-After with a 503) and close the connection."""
        self._cancel_head_timer()
        body = error_body(code, message)
        content = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        if status == 503:
            content.append(b"retry-after: " + str(RETRY_AFTER_S).encode() + b"\r\n")
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
