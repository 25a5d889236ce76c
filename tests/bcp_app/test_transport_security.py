"""The protocol mounts get what Django's SecurityMiddleware gives every page (issue 13 §14).

`/bcp/mcp`, `/bcp/a2a` and the agent card are served by the ASGI router, not by Django: before, they
had no HSTS, no nosniff and answered plain HTTP in production. Now the router applies the same
headers from the same settings and the same HTTPS rule (GET redirected, other methods refused).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.bcp_app.test_a2a_helpers import (
    SEED_HEADERS,
    LiveServer,
    live_fixture,  # noqa: F401 (fixture "live")
    send_message,
    server_fixture,  # noqa: F401 (fixture "server")
)

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]

HEADERS = ("strict-transport-security", "x-content-type-options", "referrer-policy", "cross-origin-opener-policy")
MCP_LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
MCP_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
}


@pytest.fixture
def production(settings: Any) -> Any:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 31536000
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    settings.SECURE_HSTS_PRELOAD = True
    settings.SECURE_CONTENT_TYPE_NOSNIFF = True
    return settings


def requests(server: LiveServer, extra: dict[str, str]) -> dict[str, httpx.Response]:
    a2a = json.dumps(send_message([{"text": "oi"}])).encode()
    return {
        "agent card": httpx.get(f"{server.base_url}/.well-known/agent-card.json", headers=extra, timeout=30),
        "a2a": httpx.post(server.a2a_url, content=a2a, headers={**SEED_HEADERS, **extra}, timeout=30),
        "mcp": httpx.post(f"{server.base_url}/bcp/mcp", content=MCP_LIST, headers={**MCP_HEADERS, **extra}, timeout=30),
    }


def django_security_headers(secure: bool) -> dict[str, str | None]:
    """What Django's own SecurityMiddleware adds with the current settings (built fresh: it reads them once)."""
    from django.http import HttpResponse
    from django.middleware.security import SecurityMiddleware
    from django.test import RequestFactory

    request = RequestFactory().get("/", secure=secure)
    response = SecurityMiddleware(lambda r: HttpResponse())(request)
    return {header: response.headers.get(header) for header in HEADERS}


def test_mounts_send_the_same_security_headers_as_django_pages(server: LiveServer, production: Any) -> None:
    responses = requests(server, {"X-Forwarded-Proto": "https"})
    expected = django_security_headers(secure=True)
    assert expected == {
        "strict-transport-security": "max-age=31536000; includeSubDomains; preload",
        "x-content-type-options": "nosniff",
        "referrer-policy": "same-origin",
        "cross-origin-opener-policy": "same-origin",
    }
    for name in ("agent card", "a2a", "mcp"):
        assert responses[name].status_code == 200, (name, responses[name].text)
        assert {header: responses[name].headers.get(header) for header in HEADERS} == expected, name


def test_plain_http_is_redirected_or_refused_in_production(server: LiveServer, production: Any) -> None:
    responses = requests(server, {})
    host = server.base_url.removeprefix("http://")
    assert (responses["agent card"].status_code, responses["agent card"].headers["location"]) == (
        301,
        f"https://{host}/.well-known/agent-card.json",
    )
    message = "Invalid Request: use HTTPS."
    refused = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": message, "data": {"code": "invalid_request", "content": message}},
    }
    for name in ("a2a", "mcp"):
        assert (responses[name].status_code, responses[name].json()) == (403, refused), name
        assert responses[name].headers["x-content-type-options"] == "nosniff"
        assert "strict-transport-security" not in responses[name].headers  # HSTS only over HTTPS, as Django


def test_secure_redirect_exempt_paths_are_honoured_like_django(server: LiveServer, production: Any) -> None:
    # given an exemption, as a proxy that terminates TLS itself for the A2A location would need
    production.SECURE_REDIRECT_EXEMPT = [r"^bcp/a2a", r"^\.well-known/agent-card\.json$"]
    # when the mounts are called over plain HTTP
    responses = requests(server, {})
    # then the exempt ones answer as Django would let an exempt page answer; MCP is still refused
    assert responses["agent card"].status_code == 200
    assert responses["a2a"].status_code == 200, responses["a2a"].text
    assert responses["mcp"].status_code == 403
    from django.middleware.security import SecurityMiddleware
    from django.test import RequestFactory

    django = SecurityMiddleware(lambda r: None)
    assert django.process_request(RequestFactory().post("/bcp/a2a")) is None  # Django agrees: exempt
    assert django.process_request(RequestFactory().post("/bcp/mcp")).status_code == 301


def test_development_plain_http_still_answers(server: LiveServer) -> None:
    # Without SECURE_SSL_REDIRECT (development, tests) nothing is refused; nosniff is always sent.
    responses = requests(server, {})
    for name, response in responses.items():
        assert response.status_code == 200, name
        assert response.headers["x-content-type-options"] == "nosniff", name
        assert "strict-transport-security" not in response.headers, name


def test_storefront_and_admin_carry_a_content_security_policy(server: LiveServer) -> None:
    for path in ("/", "/admin/login/"):
        policy = httpx.get(f"{server.base_url}{path}", timeout=30).headers["content-security-policy"]
        directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
        assert directives["default-src"] == "'self'", path
        assert directives["script-src"].startswith("'self'"), path
        assert directives["object-src"] == "'none'", path
        assert directives["frame-ancestors"] == "'none'", path
