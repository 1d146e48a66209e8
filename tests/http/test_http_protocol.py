"""The server's HTTP protocol: a response's head and body leave in one write (`app.http_protocol`)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

from app.http_protocol import JOIN_LIMIT, HeadJoiningTransport

HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"


class FakeTransport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str) -> str:
        return f"extra {name}"


def run_in_loop(steps) -> FakeTransport:  # type: ignore[no-untyped-def]
    """Run `steps(transport)` in one turn of a new event loop, then let the loop turn once more."""
    fake = FakeTransport()

    async def main() -> None:
        t = HeadJoiningTransport(fake, asyncio.get_running_loop())  # type: ignore[arg-type]
        steps(t)
        await asyncio.sleep(0)

    asyncio.run(main())
    return fake


def test_a_small_response_is_one_write() -> None:
    fake = run_in_loop(lambda t: (t.write(HEAD), t.write(b"ok")))
    assert fake.writes == [HEAD + b"ok"]


def test_a_large_body_follows_its_head_uncopied() -> None:
    body = b"x" * (JOIN_LIMIT + 1)
    fake = run_in_loop(lambda t: (t.write(HEAD), t.write(body)))
    assert fake.writes == [HEAD, body]


def test_a_head_without_a_body_this_turn_is_written_at_its_end() -> None:
    fake = run_in_loop(lambda t: t.write(HEAD))  # a HEAD request, or a stream whose first chunk comes later
    assert fake.writes == [HEAD]


def test_close_writes_a_held_head_first_and_other_writes_pass_through() -> None:
    def steps(t: HeadJoiningTransport) -> None:
        t.write(b"chunk")  # not a head: as it is
        t.write(HEAD)
        t.close()
        assert t.get_extra_info("peername") == "extra peername"  # the transport's own methods

    fake = run_in_loop(steps)
    assert fake.writes == [b"chunk", HEAD] and fake.closed


@pytest.mark.parametrize("keep_alive", [True, False])
def test_a_real_uvicorn_server_answers_whole_responses(keep_alive: bool) -> None:
    """uvicorn with the protocol: small, large and HEAD responses, keep-alive and HTTP/1.0 (the server closes)."""
    import uvicorn

    from app.http_protocol import StarrouteHttpProtocol

    big = b"y" * (3 * JOIN_LIMIT)

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            return
        body = big if scope["path"] == "/big" else b"small"
        headers = [(b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(app, host="127.0.0.1", port=port, http=StarrouteHttpProtocol, log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        version = "1.1" if keep_alive else "1.0"
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            got = b""
            for path, method in (("/small", "GET"), ("/big", "GET"), ("/small", "HEAD"))[: 3 if keep_alive else 1]:
                c.sendall(f"{method} {path} HTTP/{version}\r\nHost: x\r\n\r\n".encode())
                want = 5 if method == "GET" and path == "/small" else len(big) if method == "GET" else 0
                while got.count(b"\r\n\r\n") < 1 or len(got.split(b"\r\n\r\n", 1)[1]) < want:
                    chunk = c.recv(1 << 16)
                    assert chunk, f"connection closed early: {got[:200]!r}"
                    got += chunk
                head, got = got.split(b"\r\n\r\n", 1)
                assert head.startswith(b"HTTP/1.1 200 OK"), head
                body, got = got[:want], got[want:]
                assert body == (b"small" if path == "/small" else big)[:want]
            if not keep_alive:
                assert c.recv(10) == b""  # HTTP/1.0: closed after the response
    finally:
        server.should_exit = True
        thread.join(10)


def raw_exchange(base: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send `request` as it is on a new connection; (status, headers, body) of the answer, read until it closes."""
    host, port = base.rsplit("/", 1)[-1].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as c:
        c.sendall(request)
        got = b""
        while chunk := c.recv(1 << 16):
            got += chunk
    head, body = got.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


def test_what_the_http_parser_refuses_is_answered_in_json(bundled_graph) -> None:  # type: ignore[no-untyped-def]
    """A URL over 64 KB (httptools cannot parse it), garbage and a malformed URL: JSON with a code, as every other
    refusal; OSRM paths answer 400 as OSRM does, a native path 414."""
    import json

    from harness import api_server

    base = api_server.shared(bundled_graph)
    many = ";".join(["7.4197,43.7311"] * 4500)  # 4,500 coordinates: 66 KB
    cases = {
        f"GET /route/v1/driving/{many} HTTP/1.1": (400, "TooBig"),
        f"GET /table/v1/driving/{many}?annotations=duration HTTP/1.1": (400, "TooBig"),
        "GET /route?from=7.4197,43.7311&to=7.4246,43.7384&x=" + "a" * 70_000 + " HTTP/1.1": (414, "TooBig"),
        "GARBAGE": (400, "InvalidQuery"),
        "GET /route/v1/driving/7.4,43.7;7.4,43.8\x01 HTTP/1.1": (400, "InvalidQuery"),
        "GET http://[bad/route HTTP/1.1": (400, "InvalidUrl"),
    }
    for line, (status, code) in cases.items():
        got, headers, body = raw_exchange(base, f"{line}\r\nHost: x\r\n\r\n".encode())
        assert (got, headers["content-type"].split(";")[0]) == (status, "application/json"), (line[:60], body[:200])
        assert json.loads(body)["code"] == code, (line[:60], body[:200])
    fewer = ";".join(["7.4197,43.7311"] * 600)  # under the URL limit: the coordinates' own limit, as before
    request = f"GET /route/v1/driving/{fewer} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    got, _, body = raw_exchange(base, request.encode())
    assert got == 400 and json.loads(body)["code"] == "TooBig"


class ToyServer:
    """uvicorn with the server's protocol (`StarrouteHttpProtocol.configured(limits)`, listener set as `run_server`
    sets it) on a loopback port, in a thread; `/busy` holds the event loop `busy_s`, any other path answers at once."""

    def __init__(self, limits: object, busy_s: float = 0.3) -> None:
        import uvicorn

        from app.http_protocol import StarrouteHttpProtocol

        async def app(scope, receive, send):  # type: ignore[no-untyped-def]
            if scope["type"] != "http":
                return
            if scope["path"] == "/busy":
                time.sleep(busy_s)  # the loop is held: a turn lasts this long, as under load
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
            await send({"type": "http.response.body", "body": b"ok"})

        protocol = StarrouteHttpProtocol.configured(limits)  # type: ignore[arg-type]
        config = uvicorn.Config(app, host="127.0.0.1", port=0, http=protocol, log_level="error", lifespan="off")
        self.listener = config.bind_socket()
        protocol.listener = self.listener
        self.port = self.listener.getsockname()[1]
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.listener]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def _keep_busy(port: int, stop: threading.Event) -> None:
    """One client asking `/busy` back to back: every turn of the server's loop lasts the busy time."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        while not stop.is_set():
            c.sendall(b"GET /busy HTTP/1.1\r\nHost: x\r\n\r\n")
            got = b""
            while not got.endswith(b"ok"):
                got += c.recv(4096)


def test_waiting_connections_are_accepted_at_once_not_one_per_turn_of_a_busy_loop() -> None:
    """libuv (under uvloop) accepts one connection per turn of the event loop; a turn of a loaded server lasts a
    fraction of a second, and connections waited in the listener's queue for many seconds, unseen (wrk with 1,000
    connections on Porto: timeouts at 10 s). The protocol takes every waiting one when one comes in."""
    from app.http_protocol import ConnectionLimits

    server = ToyServer(ConnectionLimits(), busy_s=0.1)
    stop = threading.Event()
    busy = [threading.Thread(target=_keep_busy, args=(server.port, stop)) for _ in range(4)]  # always one ready
    try:
        for t in busy:
            t.start()
        time.sleep(0.5)
        t0 = time.monotonic()
        clients = [socket.create_connection(("127.0.0.1", server.port), timeout=15) for _ in range(20)]
        for c in clients:
            c.sendall(b"GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answers = [c.recv(4096) for c in clients]
        took = time.monotonic() - t0
        for c in clients:
            c.close()
    finally:
        stop.set()
        for t in busy:
            t.join(10)
        server.stop()
    assert all(a.startswith(b"HTTP/1.1 200") for a in answers), answers
    assert took < 2.0, f"20 connections answered after {took:.1f} s (one accepted per turn of 0.4 s: 8 s)"


def test_a_request_that_waited_too_long_for_its_worker_is_answered_503_unworked() -> None:
    """Requests read in one turn of the loop are handled one after the other: one queued behind a long one past
    `queue_timeout_s` is answered 503 `Overloaded` with Retry-After, without being worked."""
    from app.http_protocol import ConnectionLimits

    server = ToyServer(ConnectionLimits(queue_timeout_s=0.2), busy_s=0.5)
    try:
        with (
            socket.create_connection(("127.0.0.1", server.port), timeout=10) as hold,
            socket.create_connection(("127.0.0.1", server.port), timeout=10) as busy,
            socket.create_connection(("127.0.0.1", server.port), timeout=10) as late,
        ):
            time.sleep(0.2)  # all three accepted
            hold.sendall(b"GET /busy HTTP/1.1\r\nHost: x\r\n\r\n")
            time.sleep(0.1)  # the loop is held from now on: the next two are read in the same turn, in this order
            busy.sendall(b"GET /busy HTTP/1.1\r\nHost: x\r\n\r\n")
            time.sleep(0.05)
            late.sendall(b"GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = late.recv(4096)
    finally:
        server.stop()
    head, body = answer.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 503") and b"retry-after: 1" in head.lower(), head
    assert b'"code":"Overloaded"' in body, body


def test_slow_clients_are_cut_and_connections_bounded(bundled_graph) -> None:  # type: ignore[no-untyped-def]
    """A connection that sends no request (or half a head) is answered 408 `Timeout` and closed after the header
    timeout; beyond `max_connections` a new one is answered 503 `Overloaded` with Retry-After and closed at once."""
    import json

    from harness import api_server

    env = {"STARROUTE_HEADER_TIMEOUT_S": "0.5", "STARROUTE_MAX_CONNECTIONS": "4"}
    base = api_server.shared(bundled_graph, env=env)
    port = int(base.rsplit(":", 1)[1])

    def answer(c: socket.socket) -> tuple[bytes, bytes, float]:
        t0 = time.monotonic()
        got = b""
        while chunk := c.recv(65536):
            got += chunk
        head, body = got.split(b"\r\n\r\n", 1)
        return head, body, time.monotonic() - t0

    idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(3)]
    idle[1].sendall(b"GET /health HTTP/1.1\r\nHost")  # half a head
    time.sleep(0.1)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as fourth:
        over = socket.create_connection(("127.0.0.1", port), timeout=10)  # the fifth
        head, body, _ = answer(over)
        over.close()
        assert head.startswith(b"HTTP/1.1 503") and b"retry-after: 1" in head.lower(), head
        assert json.loads(body)["code"] == "Overloaded"
        fourth.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert answer(fourth)[0].startswith(b"HTTP/1.1 200")  # the ones within the limit are served
    for c in idle:
        head, body, waited = answer(c)
        c.close()
        assert head.startswith(b"HTTP/1.1 408") and json.loads(body)["code"] == "Timeout", head
        assert waited < 2.0
