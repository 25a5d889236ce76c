"""The one outbound HTTP client (kernel/http.py): total deadline, body cap, SSRF guard (issue 31 §2, BCP-SEC-02).

The peer is a local server on 127.0.0.1 (`DripServer`), the network boundary: nothing of ours is replaced.
"""

from __future__ import annotations

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
