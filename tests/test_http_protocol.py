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

    from tests import api_server

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
