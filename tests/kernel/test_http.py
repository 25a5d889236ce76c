"""The one outbound HTTP client (kernel/http.py): total deadline, body cap, SSRF guard (issue 31 §2, BCP-SEC-02).

The peer is a local server on 127.0.0.1 (`DripServer`), the network boundary: nothing of ours is replaced.
"""

from __future__ import annotations

import contextlib
import gzip
import ipaddress
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from kernel.http import Deadline, OutboundError, request
from tests.bcp_app.drip import DripServer

# The peer answers one request per connection and hangs up: it says so, so that no kept connection waits on it.
OK = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: 12\r\n\r\n{"ok": true}'
# No length, no chunking: the body ends when the server closes, so only counting while reading can cap it.
UNDECLARED = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n" + b"x" * 20_000
# Each guard holds on the kept path too (`keep=True`: the platforms' calls, sent on httpcore's pool, issue 34).
KEEP = pytest.mark.parametrize("keep", [False, True], ids=["fresh", "kept"])
SLOW = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n" + b" " * 398 + b"{}"


@KEEP
def test_a_body_over_the_cap_is_refused_while_streaming(keep: bool) -> None:
    with DripServer(interval=0, answer=UNDECLARED) as peer, pytest.raises(OutboundError) as caught:
        request("GET", peer.url("/x"), max_bytes=4096, guard=False, keep=keep)
    assert caught.value.kind == "too_large"


@KEEP
def test_a_body_within_the_cap_is_read_whole(keep: bool) -> None:
    with DripServer(interval=0, answer=UNDECLARED) as peer:
        response = request("GET", peer.url("/x"), max_bytes=20_000, guard=False, keep=keep)
    assert (response.status_code, len(response.body)) == (200, 20_000)


@KEEP
def test_a_dripping_peer_is_cut_at_the_total_deadline_mid_body(keep: bool) -> None:
    """A per-read timeout never trips on one byte every 0.2 s; the total deadline does."""
    with DripServer(interval=0.2, answer=SLOW) as peer:
        with pytest.raises(OutboundError) as caught:
            request("GET", peer.url("/x"), deadline=1.0, guard=False, keep=keep)
        assert peer.cut.wait(10)  # the peer saw the client hang up
        sent = peer.sent
    assert caught.value.kind == "timeout"
    assert 0 < sent < len(SLOW)  # it was still dripping
    assert peer.connections == 1


@KEEP
def test_a_deadline_shared_by_attempts_leaves_nothing_for_one_after_it_passed(keep: bool) -> None:
    with DripServer(interval=0.2, answer=SLOW) as peer:
        budget = Deadline(0.6)
        with pytest.raises(OutboundError):
            request("GET", peer.url("/x"), deadline=budget, guard=False, keep=keep)
        with pytest.raises(OutboundError) as again:
            request("GET", peer.url("/x"), deadline=budget, guard=False, keep=keep)
    assert again.value.kind == "timeout"
    assert peer.connections == 1  # the second attempt never connected


@KEEP
@pytest.mark.parametrize("url", ["http://127.0.0.1:{port}/x", "http://localhost:{port}/x"])
def test_the_guard_refuses_private_addresses_unless_allowed(url: str, keep: bool) -> None:
    with DripServer(interval=0, answer=OK) as peer:
        target = url.format(port=peer.port)
        with pytest.raises(OutboundError) as caught:
            request("GET", target, guard=True, keep=keep)
        assert peer.connections == 0  # refused before connecting
        allowed = request("GET", target, guard=True, allow=["127.0.0.0/8", "localhost"], keep=keep)
        configured = request("GET", target, guard=False, keep=keep)  # a provider the merchant configured
    assert caught.value.kind == "blocked"
    assert (allowed.status_code, allowed.json()) == (200, {"ok": True})
    assert (configured.status_code, configured.json()) == (200, {"ok": True})


def test_the_guard_wants_https_for_public_hosts() -> None:
    with pytest.raises(OutboundError) as caught:
        request("GET", "http://93.184.216.34/x", guard=True)
    assert caught.value.kind == "scheme"


def test_the_allow_list_is_parsed_once_and_still_decides_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34: every call parsed every allow-list entry as a network (and walked the special ranges for the
    address); the parse is kept per distinct list, each call still checks its own list."""
    parsed: list[str] = []
    parse = ipaddress.ip_network

    def counted(entry: str, strict: bool = True) -> Any:
        parsed.append(entry)
        return parse(entry, strict=strict)

    monkeypatch.setattr(ipaddress, "ip_network", counted)
    with DripServer(interval=0, answer=OK) as peer:
        url = f"http://127.0.0.1:{peer.port}/x"
        allow = ["127.0.0.2/32", "127.0.0.1/32", "example.test"]
        for _ in range(3):
            assert request("GET", url, allow=list(allow)).status_code == 200
        with pytest.raises(OutboundError) as caught:
            request("GET", url, allow=["127.0.0.2/32"])
    assert caught.value.kind == "blocked"
    assert parsed.count("127.0.0.1/32") <= 1  # (none when an earlier call of this process parsed the same list)


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


class _RecordingPeer:
    """A keep-alive peer on 127.0.0.1 that records each request's bytes as received and gives `answer` to each."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.requests: list[bytes] = []
        self.connections = 0
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self.server.accept()
                self.connections += 1
                threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buffer = b""
        with conn, contextlib.suppress(OSError):
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, _, rest = buffer.partition(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":", 1)[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                while len(rest) < length:
                    rest += conn.recv(65536)
                self.requests.append(head + b"\r\n\r\n" + rest[:length])
                buffer = rest[length:]
                conn.sendall(self.answer)

    def __enter__(self) -> _RecordingPeer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.close()


def test_a_kept_call_sends_the_bytes_httpx_sends() -> None:
    """The kept path (httpcore's pool, no httpx client) puts on the wire what httpx puts for the same call."""
    body = '{"pedido": "ação"}'.encode()
    with _RecordingPeer(OK.replace(b"Connection: close\r\n", b"")) as peer:
        for keep in (False, True, True):
            url = f"http://127.0.0.1:{peer.port}/hooks/a b?x=1&y=ç"
            response = request("POST", url, content=body, headers={"Content-Type": "application/json",
                               "Webhook-Id": "w1"}, guard=False, keep=keep)  # fmt: skip
            assert (response.status_code, response.json(), response.reason_phrase) == (200, {"ok": True}, "OK")
            request("GET", f"http://127.0.0.1:{peer.port}/perfil", headers={"Accept": "application/json"},
                    guard=False, keep=keep)  # fmt: skip
            request("POST", f"http://127.0.0.1:{peer.port}/vazio", guard=False, keep=keep)
    assert len(peer.requests) == 9
    fresh, kept, kept_again = peer.requests[0:3], peer.requests[3:6], peer.requests[6:9]
    assert kept == fresh and kept_again == fresh
    assert peer.connections == 3 + 1  # a connection per fresh call, then one kept for the six kept calls


def test_a_kept_call_decodes_a_compressed_answer_and_caps_what_it_decodes() -> None:
    packed = gzip.compress(b'{"ok": true}' + b" " * 10_000)
    answer = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
        + f"Content-Length: {len(packed)}\r\n\r\n".encode()
        + packed
    )
    with _RecordingPeer(answer) as peer:
        url = f"http://127.0.0.1:{peer.port}/perfil"
        assert request("GET", url, guard=False, keep=True).json() == {"ok": True}
        with pytest.raises(OutboundError) as caught:
            request("GET", url, guard=False, keep=True, max_bytes=5_000)  # 10 KB once decoded
    assert caught.value.kind == "too_large"
    assert len(packed) < 5_000


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (b"HTTP/1.1 302 Found\r\nLocation: http://10.0.0.1/\r\nContent-Length: 0\r\n\r\n", "redirect"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 999999\r\n\r\n{}", "too_large"),
    ],
)
def test_a_kept_call_refuses_redirects_and_declared_oversize(answer: bytes, kind: str) -> None:
    with _RecordingPeer(answer) as peer:
        for _ in range(2):
            with pytest.raises(OutboundError) as caught:
                request("GET", f"http://127.0.0.1:{peer.port}/x", guard=False, keep=True, max_bytes=1000)
            assert caught.value.kind == kind
    assert peer.connections == 2  # a refused call's connection is not used again
