"""The one outbound HTTP client (kernel/http.py): total deadline, body cap, SSRF guard (issue 31 §2, BCP-SEC-02).

The peer is a local server on 127.0.0.1 (`DripServer`), the network boundary: nothing of ours is replaced.
"""

from __future__ import annotations

import contextlib
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from kernel.http import Deadline, OutboundError, request
from tests.bcp_app.drip import DripServer

OK = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{"ok": true}'
# No length, no chunking: the body ends when the server closes, so only counting while reading can cap it.
UNDECLARED = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n" + b"x" * 20_000
SLOW = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n" + b" " * 398 + b"{}"


def test_a_body_over_the_cap_is_refused_while_streaming() -> None:
    with DripServer(interval=0, answer=UNDECLARED) as peer, pytest.raises(OutboundError) as caught:
        request("GET", peer.url("/x"), max_bytes=4096, guard=False)
    assert caught.value.kind == "too_large"


def test_a_body_within_the_cap_is_read_whole() -> None:
    with DripServer(interval=0, answer=UNDECLARED) as peer:
        response = request("GET", peer.url("/x"), max_bytes=20_000, guard=False)
    assert (response.status_code, len(response.body)) == (200, 20_000)


def test_a_dripping_peer_is_cut_at_the_total_deadline_mid_body() -> None:
    """A per-read timeout never trips on one byte every 0.2 s; the total deadline does."""
    with DripServer(interval=0.2, answer=SLOW) as peer:
        with pytest.raises(OutboundError) as caught:
            request("GET", peer.url("/x"), deadline=1.0, guard=False)
        assert peer.cut.wait(10)  # the peer saw the client hang up
        sent = peer.sent
    assert caught.value.kind == "timeout"
    assert 0 < sent < len(SLOW)  # it was still dripping
    assert peer.connections == 1


def test_a_deadline_shared_by_attempts_leaves_nothing_for_one_after_it_passed() -> None:
    with DripServer(interval=0.2, answer=SLOW) as peer:
        budget = Deadline(0.6)
        with pytest.raises(OutboundError):
            request("GET", peer.url("/x"), deadline=budget, guard=False)
        with pytest.raises(OutboundError) as again:
            request("GET", peer.url("/x"), deadline=budget, guard=False)
    assert again.value.kind == "timeout"
    assert peer.connections == 1  # the second attempt never connected


@pytest.mark.parametrize("url", ["http://127.0.0.1:{port}/x", "http://localhost:{port}/x"])
def test_the_guard_refuses_private_addresses_unless_allowed(url: str) -> None:
    with DripServer(interval=0, answer=OK) as peer:
        target = url.format(port=peer.port)
        with pytest.raises(OutboundError) as caught:
            request("GET", target, guard=True)
        assert peer.connections == 0  # refused before connecting
        allowed = request("GET", target, guard=True, allow=["127.0.0.0/8", "localhost"])
        configured = request("GET", target, guard=False)  # a provider the merchant configured
    assert caught.value.kind == "blocked"
    assert (allowed.status_code, allowed.json()) == (200, {"ok": True})
    assert (configured.status_code, configured.json()) == (200, {"ok": True})


def test_the_guard_wants_https_for_public_hosts() -> None:
    with pytest.raises(OutboundError) as caught:
        request("GET", "http://93.184.216.34/x", guard=True)
    assert caught.value.kind == "scheme"


# --- kept connections (`keep=True`: the platforms' calls, issue 34) -------------------------------------------------


class _KeepAlivePeer:
    """An HTTP/1.1 keep-alive server on 127.0.0.1 that counts its connections and records each request."""

    def __init__(self) -> None:
        peer = self
        self.connections = 0
        self.requests: list[tuple[str, str, str]] = []  # (path, Host, Cookie)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                peer.connections += 1

            def do_GET(self) -> None:
                peer.requests.append((self.path, self.headers.get("Host", ""), self.headers.get("Cookie", "")))
                if self.path == "/slow":
                    time.sleep(1.5)
                with contextlib.suppress(OSError):  # the slow answer's client has hung up (its deadline)
                    self.send_response(200)
                    self.send_header("Content-Length", "2")
                    self.send_header("Set-Cookie", "session=abc; Path=/")
                    self.end_headers()
                    self.wfile.write(b"{}")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> _KeepAlivePeer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_kept_connection_serves_the_next_call_to_the_same_destination() -> None:
    allow = ["127.0.0.1", "localhost"]
    with _KeepAlivePeer() as peer:
        for path in ("/a", "/b", "/c"):
            assert request("GET", f"http://127.0.0.1:{peer.port}{path}", allow=allow, keep=True).status_code == 200
        assert peer.connections == 1
        request("GET", f"http://127.0.0.1:{peer.port}/d", allow=allow)  # not kept: a connection of its own
        assert peer.connections == 2
        # Same address, another host name: never a connection made (and verified) for another host.
        request("GET", f"http://localhost:{peer.port}/e", allow=allow, keep=True)
        assert peer.connections == 3
    assert [path for path, _, _ in peer.requests] == ["/a", "/b", "/c", "/d", "/e"]
    assert peer.requests[-1][1] == f"localhost:{peer.port}"
    assert all(cookie == "" for _, _, cookie in peer.requests)  # a kept client keeps no cookie


def test_the_guard_runs_on_every_call_over_a_kept_connection() -> None:
    with _KeepAlivePeer() as peer:
        url = f"http://127.0.0.1:{peer.port}/x"
        request("GET", url, allow=["127.0.0.1"], keep=True)
        with pytest.raises(OutboundError) as caught:
            request("GET", url, keep=True)  # no longer allow-listed: refused although a connection is open
    assert caught.value.kind == "blocked"
    assert len(peer.requests) == 1


def test_a_kept_connection_is_bounded_by_the_current_calls_deadline() -> None:
    with _KeepAlivePeer() as peer:
        base = f"http://127.0.0.1:{peer.port}"
        request("GET", f"{base}/x", guard=False, keep=True, deadline=30)
        with pytest.raises(OutboundError) as caught:
            request("GET", f"{base}/slow", guard=False, keep=True, deadline=0.5)
        after = request("GET", f"{base}/y", guard=False, keep=True)  # the cut connection is not reused
    assert caught.value.kind == "timeout"
    assert after.status_code == 200
    assert peer.connections == 2
