"""The one outbound client: SSRF guard, no redirects, size cap, https only (BCP §3 step 2, BCP-SEC-01/02)."""

from __future__ import annotations

import pytest

from bcp_app.service import outbound
from tests.bcp_app.bcp_fixtures import FakePlatform


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/perfil.json",
        "https://10.1.2.3/perfil.json",
        "https://192.168.0.10/perfil.json",
        "https://172.16.5.5/perfil.json",
        "https://169.254.169.254/latest/meta-data",
        "https://100.64.0.1/x",
        "https://[::1]/perfil.json",
        "https://[fe80::1]/perfil.json",
        "https://[::ffff:127.0.0.1]/perfil.json",
        "https://0.0.0.0/x",
        "https://240.0.0.1/x",
        "https://localhost/perfil.json",
    ],
)
def test_special_use_addresses_are_refused_bcp_sec_02(settings: object, url: str) -> None:
    settings.BCP_OUTBOUND_ALLOWLIST = []  # type: ignore[attr-defined]
    with pytest.raises(outbound.OutboundError) as err:
        outbound.check_url(url)
    assert err.value.kind == "blocked"


def test_plain_http_is_refused_for_public_hosts_bcp_sec_01(settings: object) -> None:
    settings.BCP_OUTBOUND_ALLOWLIST = []  # type: ignore[attr-defined]
    with pytest.raises(outbound.OutboundError) as err:
        outbound.check_url("http://93.184.216.34/perfil.json")
    assert err.value.kind == "scheme"


@pytest.mark.parametrize("url", ["ftp://example.com/x", "https://user:pw@example.com/x", "https:///x", "nonsense"])
def test_malformed_urls_are_refused(url: str) -> None:
    with pytest.raises(outbound.OutboundError) as err:
        outbound.check_url(url)
    assert err.value.kind == "invalid_url"


def test_allow_listed_cidr_and_host_may_use_loopback_over_http(settings: object) -> None:
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.0/8"]  # type: ignore[attr-defined]
    assert outbound.check_url("http://127.0.0.1:8080/x").allow_listed is True
    settings.BCP_OUTBOUND_ALLOWLIST = ["localhost"]  # type: ignore[attr-defined]
    assert outbound.check_url("http://localhost:8080/x").allow_listed is True


def test_get_reads_an_allow_listed_local_server(settings: object, fake_platform: FakePlatform) -> None:
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]  # type: ignore[attr-defined]
    url = fake_platform.serve_json("/doc.json", {"ok": True})
    response = outbound.get(url)
    assert (response.status_code, response.body) == (200, b'{"ok": true}')
    assert fake_platform.received[0].headers["host"] == f"127.0.0.1:{fake_platform.port}"


def test_redirects_are_not_followed_bcp_sec_02(settings: object, fake_platform: FakePlatform) -> None:
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]  # type: ignore[attr-defined]
    fake_platform.routes["/moved"] = (302, {"Location": fake_platform.url("/doc.json")}, b"")
    with pytest.raises(outbound.OutboundError) as err:
        outbound.get(fake_platform.url("/moved"))
    assert err.value.kind == "redirect"
    assert fake_platform.hits == {"/moved": 1}


def test_bodies_over_the_cap_are_refused_bcp_sec_02(settings: object, fake_platform: FakePlatform) -> None:
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]  # type: ignore[attr-defined]
    fake_platform.routes["/big"] = (200, {"Content-Type": "application/json"}, b"x" * 5000)
    with pytest.raises(outbound.OutboundError) as err:
        outbound.get(fake_platform.url("/big"), max_bytes=4096)
    assert err.value.kind == "too_large"
    # a server that lies about (omits) the length is cut off while streaming
    fake_platform.routes["/chunked"] = (
        200,
        {"Content-Type": "application/json", "Content-Length": "4000"},
        b"y" * 4000,
    )
    assert len(outbound.get(fake_platform.url("/chunked"), max_bytes=4096).body) == 4000


def test_unreachable_port_is_a_connect_error(settings: object, fake_platform: FakePlatform) -> None:
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]  # type: ignore[attr-defined]
    with pytest.raises(outbound.OutboundError) as err:
        outbound.get("http://127.0.0.1:1/x")
    assert err.value.kind == "connect"


def test_a_hanging_dns_lookup_is_inside_the_total_deadline(settings: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: `getaddrinfo` ran before the deadline started and had no bound of its own (a resolver that
    never answers held the request for the system's resolver timeout × retries). The resolver is the
    network boundary here: this stand-in never answers until the test releases it."""
    import socket
    import threading

    settings.BCP_OUTBOUND_ALLOWLIST = []  # type: ignore[attr-defined]
    released = threading.Event()
    real = socket.getaddrinfo

    def hanging_resolver(host: str, *args: object, **kwargs: object) -> object:
        if host == "perfil.plataforma.example":
            released.wait(60)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", hanging_resolver)
    outcome: dict[str, object] = {}

    def fetch() -> None:
        try:
            outbound.get("https://perfil.plataforma.example/perfil.json", deadline=1)
        except outbound.OutboundError as exc:
            outcome["kind"] = exc.kind

    caller = threading.Thread(target=fetch)
    caller.start()
    caller.join(timeout=30)
    answered_while_hanging = not caller.is_alive()
    released.set()
    caller.join(timeout=60)
    assert answered_while_hanging
    assert outcome == {"kind": "timeout"}
