"""Caller identity over MCP as in the BCP core: bearer API keys and RFC 9421 HTTP Message Signatures
(keys from the platform profile named in `meta["ucp-agent"]`), with §5.4 codes and HTTP statuses.
BCP-SIG-01/03/04, BCP-NEG-09, BCP-ERR-04.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.bcp_fixtures import PLATFORM_KID
from tests.bcp_app.test_mcp_get_order import place_seed_order
from tests.bcp_app.test_mcp_helpers import raw_post, tools_call

# Shared fixtures (pytest finds them by name in this module).
live_mcp = test_mcp_helpers.live_mcp

pytestmark = [pytest.mark.postgres, pytest.mark.e2e, pytest.mark.usefixtures("bcp_settings")]


def signed_headers(url: str, body: bytes, platform: Any, *, key: Any = None) -> dict[str, str]:
    from bcp_app.protocol.signatures import HttpMessage, content_digest, sign_message

    authority = url.split("/")[2]
    headers = {"content-type": "application/json", "content-digest": content_digest(body)}
    message = HttpMessage(method="POST", authority=authority, path="/bcp/mcp", headers=headers)
    components = ("@method", "@authority", "@path", "content-digest", "content-type")
    return {**headers, **sign_message(message, components, key=key or platform.key, keyid=PLATFORM_KID)}


def get_order_body(profile_url: str, order_id: str) -> bytes:
    arguments = {"meta": {"ucp-agent": {"profile": profile_url}}, "id": order_id}
    return json.dumps(tools_call("get_order", arguments)).encode()


def test_signed_request_identifies_the_platform_without_api_key_bcp_sig_01(
    live_mcp,
    fake_platform,
    transactional_db,
) -> None:
    # given a platform known by its profile URL and an order it created
    from bcp_app.service.platforms import platform_create

    profile_url = fake_platform.publish()
    platform = platform_create(name="Assinante", profile_url=profile_url).platform
    order = place_seed_order(platform.public_id)
    body = get_order_body(profile_url, order.public_id)
    # when the request is signed with the key of that profile
    response = raw_post(live_mcp.mcp_url, body, headers=signed_headers(live_mcp.mcp_url, body, fake_platform))
    # then the order is returned
    assert response.status_code == 200
    assert response.json()["result"]["structuredContent"]["id"] == order.public_id


def test_tampered_body_and_wrong_key_are_refused_bcp_sig_03_04(
    live_mcp,
    fake_platform,
    transactional_db,
) -> None:
    # given
    from cryptography.hazmat.primitives.asymmetric import ec

    profile_url = fake_platform.publish()
    body = get_order_body(profile_url, "order_abc123")
    headers = signed_headers(live_mcp.mcp_url, body, fake_platform)
    forged = signed_headers(live_mcp.mcp_url, body, fake_platform, key=ec.generate_private_key(ec.SECP256R1()))
    # when the body changes after signing, and when another key signs
    tampered = raw_post(live_mcp.mcp_url, body.replace(b"order_abc123", b"order_abc124"), headers=headers)
    wrong_key = raw_post(live_mcp.mcp_url, body, headers=forged)
    # then
    assert (tampered.status_code, tampered.json()["error"]["code"]) == (400, -32600)
    assert tampered.json()["error"]["data"]["code"] == "digest_mismatch"
    assert (wrong_key.status_code, wrong_key.json()["error"]["code"]) == (401, -32000)
    assert wrong_key.json()["error"]["data"]["code"] == "signature_invalid"


def test_unknown_api_key_is_unauthenticated_401(live_mcp, fake_platform, transactional_db) -> None:
    # when
    profile_url = fake_platform.publish()
    response = raw_post(
        live_mcp.mcp_url,
        get_order_body(profile_url, "order_abc123"),
        headers={"authorization": "Bearer bcp_000000000000_not-a-real-key-at-all"},
    )
    # then
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="bcp"'
    assert response.json()["error"]["code"] == -32000
    assert response.json()["error"]["data"]["code"] == "unauthenticated"


def test_api_key_bound_to_another_profile_is_not_trusted_bcp_neg_09(
    live_mcp,
    fake_platform,
    transactional_db,
) -> None:
    # given a key registered for one profile
    from bcp_app.service.platforms import platform_create

    created = platform_create(name="Outra", profile_url="https://outra.example/.well-known/bcp")
    # when it is used with a different profile
    response = raw_post(
        live_mcp.mcp_url,
        get_order_body(fake_platform.publish(), "order_abc123"),
        headers={"authorization": f"Bearer {created.api_key}"},
    )
    # then
    assert response.status_code == 403
    assert response.json()["error"]["data"]["code"] == "profile_not_trusted"
    # and the refusal names where an MCP call names its profile, not REST's header it never sent
    assert response.json()["error"]["data"]["content"] == (
        'Esta credencial não pode usar o perfil informado em meta["ucp-agent"].profile.'
    )


def test_unreachable_and_outdated_profiles_bcp_neg_03_04(live_mcp, fake_platform, transactional_db) -> None:
    # when the profile cannot be fetched, or speaks another protocol version
    missing = raw_post(live_mcp.mcp_url, get_order_body(fake_platform.url("/nao-existe.json"), "order_abc123"))
    old = raw_post(
        live_mcp.mcp_url, get_order_body(fake_platform.publish("/velho.json", version="2025-01-01"), "order_abc123")
    )
    # then -32001 with the §5.4 statuses
    assert (missing.status_code, missing.json()["error"]["code"]) == (424, -32001)
    assert missing.json()["error"]["data"]["code"] == "profile_unreachable"
    assert (old.status_code, old.json()["error"]["data"]["code"]) == (422, "version_unsupported")
