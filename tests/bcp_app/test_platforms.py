"""Platform identity: API keys (hashed, revocable), signatures as the second way, admin (BCP §3 step 7, §14)."""

from __future__ import annotations

import hashlib
import json
import re
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from bcp_app.models import Platform
from bcp_app.protocol.signatures import HttpMessage, content_digest, sign_message
from bcp_app.service.platforms import platform_create, platform_for_api_key
from shop.models import Checkout
from tests.bcp_app.bcp_fixtures import PLATFORM_KID, FakePlatform, agent
from tests.bcp_app.rest_helpers import catalog

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]
BODY = b'{"line_items":[{"item":{"id":"SKU-CAFE-500G"},"quantity":1}]}'


def test_command_adds_lists_and_revokes_platforms() -> None:
    out = StringIO()
    call_command("bcp_platform", "add", "Agente Exemplo", "--profile", "https://agente.example/perfil.json", stdout=out)
    platform_id = re.search(r"platform: (plat_\w+)", out.getvalue()).group(1)  # type: ignore[union-attr]
    api_key = re.search(r"api key \(shown once\): (\S+)", out.getvalue()).group(1)  # type: ignore[union-attr]
    platform = Platform.objects.get(public_id=platform_id)
    assert platform.key_hash == hashlib.sha256(api_key.encode()).hexdigest()
    assert api_key not in json.dumps(list(Platform.objects.values()), default=str)  # stored hashed only
    assert platform_for_api_key(api_key) == platform
    listing = StringIO()
    call_command("bcp_platform", "list", stdout=listing)
    assert listing.getvalue() == f"{platform_id}\tactive\tAgente Exemplo\thttps://agente.example/perfil.json\n"
    call_command("bcp_platform", "revoke", platform_id, stdout=StringIO())
    assert platform_for_api_key(api_key) is None


def test_bearer_key_identifies_the_platform(client: Client, fake_platform: FakePlatform) -> None:
    catalog()
    created = platform_create(name="Agente", profile_url=fake_platform.url("/perfil.json"))
    fake_platform.publish()
    response = client.post(
        "/bcp/v1/checkout-sessions",
        data=BODY,
        content_type="application/json",
        headers=agent(fake_platform.url("/perfil.json"), Authorization=f"Bearer {created.api_key}"),
    )
    assert response.status_code == 201
    assert Checkout.objects.get().platform_id == created.platform.public_id


@pytest.mark.parametrize("authorization", ["Bearer bcp_000000000000_" + "x" * 43, "Basic abc", "Bearer "])
def test_bad_credentials_are_401_with_www_authenticate(
    client: Client, fake_platform: FakePlatform, authorization: str
) -> None:
    response = client.post(
        "/bcp/v1/checkout-sessions",
        data=BODY,
        content_type="application/json",
        headers=agent(fake_platform.publish(), Authorization=authorization),
    )
    assert response.status_code == 401
    assert response.json()["code"] == "unauthenticated"
    assert response["WWW-Authenticate"] == 'Bearer realm="bcp"'


def test_revoked_key_is_refused(client: Client, fake_platform: FakePlatform) -> None:
    created = platform_create(name="Agente", profile_url=fake_platform.url("/perfil.json"))
    call_command("bcp_platform", "revoke", created.platform.public_id, stdout=StringIO())
    response = client.post(
        "/bcp/v1/checkout-sessions",
        data=BODY,
        content_type="application/json",
        headers=agent(fake_platform.publish(), Authorization=f"Bearer {created.api_key}"),
    )
    assert response.status_code == 401


def test_key_used_with_another_profile_is_not_trusted_bcp_neg_09(client: Client, fake_platform: FakePlatform) -> None:
    created = platform_create(name="Agente", profile_url="https://agente.example/perfil.json")
    response = client.post(
        "/bcp/v1/checkout-sessions",
        data=BODY,
        content_type="application/json",
        headers=agent(fake_platform.publish(), Authorization=f"Bearer {created.api_key}"),
    )
    assert response.status_code == 403
    assert response.json()["code"] == "profile_not_trusted"


def test_anonymous_agents_are_refused_when_the_shop_disallows_them(
    client: Client, fake_platform: FakePlatform, settings: Any
) -> None:
    settings.BCP_ALLOW_ANONYMOUS = False
    response = client.post(
        "/bcp/v1/checkout-sessions", data=BODY, content_type="application/json", headers=agent(fake_platform.publish())
    )
    assert response.status_code == 401


def _signed_headers(
    fake_platform: FakePlatform, profile_url: str, *, kid: str = PLATFORM_KID, body: bytes = BODY
) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "BCP-Agent": f'profile="{profile_url}"',
        "Content-Digest": content_digest(body),
    }
    message = HttpMessage(method="POST", authority="testserver", path="/bcp/v1/checkout-sessions", headers=headers)
    components = ["@method", "@authority", "@path", "content-digest", "content-type", "bcp-agent"]
    return {**headers, **sign_message(message, components, key=fake_platform.key, keyid=kid)}


def test_rfc9421_signature_identifies_the_registered_platform_bcp_sig_01(
    client: Client, fake_platform: FakePlatform
) -> None:
    catalog()
    url = fake_platform.publish()
    registered = platform_create(name="Agente assinado", profile_url=url)
    headers = _signed_headers(fake_platform, url)
    response = client.post("/bcp/v1/checkout-sessions", data=BODY, content_type="application/json", headers=headers)
    assert response.status_code == 201, response.json()
    assert Checkout.objects.get().platform_id == registered.platform.public_id


def test_bad_signature_is_401_and_tampered_body_400_bcp_sig_03_04(client: Client, fake_platform: FakePlatform) -> None:
    url = fake_platform.publish()
    headers = _signed_headers(fake_platform, url)
    tampered = client.post(
        "/bcp/v1/checkout-sessions", data=BODY.replace(b"1}", b"9}"), content_type="application/json", headers=headers
    )
    assert (tampered.status_code, tampered.json()["code"]) == (400, "digest_mismatch")
    other = dict(headers, **{"Signature": "sig1=:" + "A" * 86 + "==:"})
    invalid = client.post("/bcp/v1/checkout-sessions", data=BODY, content_type="application/json", headers=other)
    assert (invalid.status_code, invalid.json()["code"]) == (401, "signature_invalid")
    assert Checkout.objects.count() == 0


def test_signature_refusals_say_in_portuguese_which_header_and_why_bcp_sig_03_04(
    client: Client, fake_platform: FakePlatform
) -> None:
    """Agent walk: every signature refusal reached the platform in English ("signature does not verify",
    "Content-Digest does not match the body (sha-256)") while every other protocol error is Portuguese and names
    the field (BCP §5.1: content in pt-BR). Now each names the header or key at fault, in Portuguese."""
    url = fake_platform.publish()
    headers = _signed_headers(fake_platform, url)

    def refused(body: bytes, sent: dict[str, str]) -> tuple[int, str, str]:
        response = client.post("/bcp/v1/checkout-sessions", data=body, content_type="application/json", headers=sent)
        return response.status_code, response.json()["code"], response.json()["content"]

    forged = dict(headers, **{"Signature": "sig1=:" + "A" * 86 + "==:"})
    rsa = dict(headers, **{"Signature-Input": headers["Signature-Input"] + ';alg="rsa-pss-sha512"'})
    unsigned_digest = {k: v for k, v in headers.items() if k != "Content-Digest"}
    assert refused(BODY.replace(b"1}", b"9}"), headers) == (
        400,
        "digest_mismatch",
        "Content-Digest não corresponde ao corpo: envie o sha-256 do corpo exato.",
    )
    assert refused(BODY, unsigned_digest) == (
        400,
        "digest_mismatch",
        "Content-Digest (sha-256) é obrigatório numa requisição assinada com corpo.",
    )
    assert refused(BODY, forged) == (
        401,
        "signature_invalid",
        f"A assinatura não confere com a chave '{PLATFORM_KID}' do perfil da plataforma.",
    )
    assert refused(BODY, _signed_headers(fake_platform, url, kid="outra")) == (
        401,
        "key_not_found",
        "Nenhuma chave de assinatura com kid 'outra' em keys[] do perfil da plataforma.",
    )
    assert refused(BODY, rsa) == (
        400,
        "algorithm_unsupported",
        "Algoritmo 'rsa-pss-sha512' não suportado: use ecdsa-p256-sha256 (ES256).",
    )
    assert Checkout.objects.count() == 0


def test_unknown_kid_refreshes_the_profile_at_most_once_a_minute_bcp_sig_05(
    client: Client, fake_platform: FakePlatform
) -> None:
    url = fake_platform.publish()
    headers = _signed_headers(fake_platform, url, kid="rotated-key")
    first = client.post("/bcp/v1/checkout-sessions", data=BODY, content_type="application/json", headers=headers)
    second = client.post("/bcp/v1/checkout-sessions", data=BODY, content_type="application/json", headers=headers)
    assert (first.status_code, first.json()["code"]) == (401, "key_not_found")
    assert second.status_code == 401
    assert fake_platform.hits == {"/perfil.json": 1}  # the cached profile is younger than 60 s


def test_admin_lists_platforms_deliveries_and_records(client: Client) -> None:
    created = platform_create(name="Agente", profile_url="https://agente.example/perfil.json")
    admin = User.objects.create_superuser("admin", "admin@example.com", "senha-forte-123")
    client.force_login(admin)
    for path in (
        "/admin/bcp_app/platform/",
        "/admin/bcp_app/webhookdelivery/",
        "/admin/bcp_app/idempotencyrecord/",
        f"/admin/bcp_app/platform/{created.platform.pk}/change/",
    ):
        assert client.get(path).status_code == 200, path
    assert client.get("/admin/bcp_app/idempotencyrecord/add/").status_code == 403
    response = client.post("/admin/bcp_app/platform/", {"action": "revoke", "_selected_action": [created.platform.pk]})
    assert response.status_code == 302
    assert Platform.objects.get().active is False


def test_rotated_key_is_found_after_one_profile_refresh_bcp_sig_05(client: Client, fake_platform: FakePlatform) -> None:
    from datetime import timedelta

    from cryptography.hazmat.primitives.asymmetric import ec
    from django.utils import timezone

    from bcp_app.models import ProfileCacheEntry
    from bcp_app.protocol.keys import public_jwk

    catalog()
    url = fake_platform.publish()
    registered = platform_create(name="Agente", profile_url=url)
    client.get("/bcp/v1/checkout-sessions/x", headers=agent(url))  # profile cached with the old key
    # the platform rotates: a new key in its profile, requests signed with it
    fake_platform.key = ec.generate_private_key(ec.SECP256R1())
    document = fake_platform.profile()
    document["keys"] = [public_jwk(fake_platform.key.public_key(), kid="plataforma-2027")]
    fake_platform.serve_json("/perfil.json", document)
    ProfileCacheEntry.objects.update(fetched_at=timezone.now() - timedelta(seconds=61))
    headers = _signed_headers(fake_platform, url, kid="plataforma-2027")
    response = client.post("/bcp/v1/checkout-sessions", data=BODY, content_type="application/json", headers=headers)
    assert response.status_code == 201
    assert Checkout.objects.get().platform_id == registered.platform.public_id
    assert fake_platform.hits == {"/perfil.json": 2}
