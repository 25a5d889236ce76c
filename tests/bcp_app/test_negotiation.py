"""Negotiation against a local platform-profile server (BCP §3, BCP-NEG-*, BCP-ERR-03, BCP-REST-03)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bcp_app.models import ProfileCacheEntry
from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.names import CART, CHECKOUT, DISCOUNT, FULFILLMENT, ORDER
from bcp_app.service import negotiation
from bcp_app.service.negotiation import negotiate
from shop.models import Checkout
from tests.bcp_app.bcp_fixtures import VERSION, FakePlatform, agent
from tests.shop.checkout_factories import make_variant

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]
CREATE = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]}


def create(client: Client, headers: dict[str, str]) -> Any:
    return client.post(
        "/bcp/v1/checkout-sessions", data=json.dumps(CREATE), content_type="application/json", headers=headers
    )


def assert_protocol_error(response: Any, status: int, code: str) -> None:
    assert response.status_code == status
    assert response["Content-Type"] == "application/json; charset=utf-8"
    body = response.json()
    assert body["code"] == code
    assert set(body) <= {"code", "content", "continue_url"}
    assert Checkout.objects.count() == 0  # nothing created (BCP-NEG-03/04)


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        'profile="ftp://agente.example/p.json"',
        "profile=https://x",
        'perfil="https://agente.example/p"',
        'profile="https://user:pw@agente.example/p"',
        'profile="http://agente.example/p.json"',
        "profile=(",
    ],
)
def test_missing_malformed_or_non_https_profile_url_bcp_neg_01(client: Client, header: str | None) -> None:
    headers = {} if header is None else {"BCP-Agent": header}
    assert_protocol_error(create(client, headers), 400, "invalid_profile_url")


def test_a_good_profile_url_is_checked_once_per_process_bad_ones_every_time_bcp_neg_01(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """Issue 34: each request validated its profile URL twice (agent header, then identity); an https URL that
    passed depends on nothing else, so it passes again without being parsed, and an allow-listed http one while
    the allow-list is the same. A refused one is refused each time."""
    split: list[str] = []
    monkeypatch.setattr(negotiation, "urlsplit", lambda url: split.append(url) or urlsplit(url))
    good, bad = "https://agente.example/perfil-validado-uma-vez.json", "http://agente.example/p.json"
    local = "http://127.0.0.1:8123/perfil-validado.json"
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]
    for url in (good, good, local, local):
        assert negotiation.validate_profile_url(url) == url
    for _ in range(2):
        with pytest.raises(ProtocolError) as refused:
            negotiation.validate_profile_url(bad)
        assert refused.value.code == "invalid_profile_url"
    assert split == [good, local, bad, bad]
    settings.BCP_OUTBOUND_ALLOWLIST = ["agente.example"]  # other settings: the http URL is asked again, refused
    with pytest.raises(ProtocolError):
        negotiation.validate_profile_url(local)
    assert negotiation.validate_profile_url(good) == good
    assert split == [good, local, bad, bad, local]


def test_a_header_that_is_not_a_dictionary_is_said_in_portuguese_bcp_neg_01(client: Client) -> None:
    response = create(client, {"BCP-Agent": "garbage;;;"})
    assert_protocol_error(response, 400, "invalid_profile_url")
    assert response.json()["content"] == 'BCP-Agent não é um dicionário RFC 8941 válido: use profile="https://…".'


def test_good_profile_negotiates_and_is_cached_bcp_neg_02(client: Client, fake_platform: FakePlatform) -> None:
    make_variant("SKU-CAFE-500G")
    url = fake_platform.publish()
    first, second = create(client, agent(url)), create(client, agent(url))
    assert (first.status_code, second.status_code) == (201, 201)
    assert first.json()["ucp"]["capabilities"] == {
        "br.dev.bcp.shopping.checkout": [{"version": VERSION}],
        "br.dev.bcp.shopping.fulfillment": [{"version": VERSION}],
        "br.dev.bcp.shopping.discount": [{"version": VERSION}],
    }
    assert fake_platform.hits == {"/perfil.json": 1}  # the second request used the cache
    entry = ProfileCacheEntry.objects.get(url=url)
    assert 299 <= (entry.expires_at - entry.fetched_at).total_seconds() <= 300  # max-age=300 honoured


def test_cache_ttl_has_a_60_second_floor_bcp_neg_02(client: Client, fake_platform: FakePlatform) -> None:
    make_variant("SKU-CAFE-500G")
    url = fake_platform.serve_json("/p.json", fake_platform.profile(), headers={"Cache-Control": "no-store"})
    create(client, agent(url))
    entry = ProfileCacheEntry.objects.get(url=url)
    assert (entry.expires_at - entry.fetched_at).total_seconds() == 60


def test_expired_cache_entry_is_refetched(client: Client, fake_platform: FakePlatform) -> None:
    make_variant("SKU-CAFE-500G")
    url = fake_platform.publish()
    create(client, agent(url))
    ProfileCacheEntry.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    negotiation.forget_profile(url)  # the cached copies expire at the same moment as the row
    create(client, agent(url))
    assert fake_platform.hits == {"/perfil.json": 2}


def test_fresh_profile_is_served_from_the_process_cache(client: Client, fake_platform: FakePlatform) -> None:
    make_variant("SKU-CAFE-500G")
    url = fake_platform.publish()
    create(client, agent(url))
    with CaptureQueriesContext(connection) as queries:
        assert negotiation.get_platform_profile(url)["ucp"]["version"]
    assert (len(queries), fake_platform.hits) == (0, {"/perfil.json": 1})


def test_unreachable_profile_bcp_neg_03(client: Client) -> None:
    response = create(client, agent("http://127.0.0.1:1/perfil.json"))
    assert_protocol_error(response, 424, "profile_unreachable")
    # said in Portuguese, not as httpx words it ("cannot reach 127.0.0.1: ConnectError")
    assert response.json()["content"] == "Perfil da plataforma inacessível: não foi possível conectar (127.0.0.1)."


def test_profile_http_error_is_unreachable_bcp_neg_03(client: Client, fake_platform: FakePlatform) -> None:
    assert_protocol_error(create(client, agent(fake_platform.url("/missing.json"))), 424, "profile_unreachable")


def test_failures_are_backed_off_bcp_neg_02(client: Client, fake_platform: FakePlatform) -> None:
    url = fake_platform.url("/missing.json")
    create(client, agent(url))
    assert_protocol_error(create(client, agent(url)), 424, "profile_unreachable")
    assert fake_platform.hits == {"/missing.json": 1}  # the second answer came from the failure backoff


def test_malformed_profile_not_json_bcp_neg_03(client: Client, fake_platform: FakePlatform) -> None:
    url = fake_platform.serve_json("/p.json", b"<html>oi</html>")
    assert_protocol_error(create(client, agent(url)), 422, "profile_malformed")


def test_malformed_profile_against_platform_schema_bcp_neg_03(client: Client, fake_platform: FakePlatform) -> None:
    document = fake_platform.profile()
    del document["ucp"]["payment_handlers"]  # required by platform_schema
    response = create(client, agent(fake_platform.serve_json("/p.json", document)))
    assert_protocol_error(response, 422, "profile_malformed")
    assert response.json()["content"] == (
        "Perfil da plataforma inválido em $.ucp: falta o membro obrigatório “payment_handlers”."
    )
    # a member of the wrong type is named with the type expected (not jsonschema's "5 is not of type 'object'")
    response = create(client, agent(fake_platform.serve_json("/q.json", {**fake_platform.profile(), "ucp": 5})))
    assert response.json()["content"] == "Perfil da plataforma inválido em $.ucp: esperado um objeto."


def test_wrong_version_bcp_neg_04(client: Client, fake_platform: FakePlatform) -> None:
    response = create(client, agent(fake_platform.publish(version="2025-01-01")))
    assert_protocol_error(response, 422, "version_unsupported")
    assert response.json()["continue_url"] == "https://loja.example.com.br/.well-known/bcp"


def test_redirecting_profile_is_unreachable_bcp_neg_02(client: Client, fake_platform: FakePlatform) -> None:
    target = fake_platform.publish()
    fake_platform.routes["/old.json"] = (301, {"Location": target}, b"")
    assert_protocol_error(create(client, agent(fake_platform.url("/old.json"))), 424, "profile_unreachable")
    assert fake_platform.hits == {"/old.json": 1}


def test_oversized_profile_is_refused_bcp_neg_02(client: Client, fake_platform: FakePlatform) -> None:
    document = fake_platform.profile()
    document["padding"] = "x" * (300 * 1024)
    assert_protocol_error(
        create(client, agent(fake_platform.serve_json("/big.json", document))), 424, "profile_unreachable"
    )


def test_private_addresses_are_refused_without_allow_list_bcp_neg_02(
    client: Client, fake_platform: FakePlatform, settings: Any
) -> None:
    settings.BCP_OUTBOUND_ALLOWLIST = []
    url = fake_platform.publish().replace("http://", "https://")
    assert_protocol_error(create(client, agent(url)), 424, "profile_unreachable")
    assert fake_platform.hits == {}
    response = create(client, agent("https://10.0.0.7/perfil.json"))
    assert_protocol_error(response, 424, "profile_unreachable")
    assert response.json()["content"] == (
        "Perfil da plataforma inacessível: o endereço aponta para uma rede não pública (10.0.0.7)."
    )


def test_no_shared_capability_is_a_business_outcome_bcp_neg_06(client: Client, fake_platform: FakePlatform) -> None:
    spec, schema = "https://bcp.dev.br/draft/specification", "https://bcp.dev.br/draft/schemas"
    only_order = {
        "br.dev.bcp.shopping.order": [
            {"version": VERSION, "spec": f"{spec}/order", "schema": f"{schema}/shopping/order.json"}
        ]
    }
    response = create(client, agent(fake_platform.publish(capabilities=only_order)))
    assert response.status_code == 200
    assert response.json() == {
        "ucp": {"version": VERSION, "status": "error"},
        "messages": [
            {
                "type": "error",
                "code": "capabilities_incompatible",
                "severity": "unrecoverable",
                "content": "A plataforma não negociou a capacidade necessária (br.dev.bcp.shopping.checkout).",
            }
        ],
    }
    assert Checkout.objects.count() == 0


def _cap(version: str, extends: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"version": version}
    if extends:
        entry["extends"] = extends
    return entry


def test_intersection_keeps_highest_shared_version_and_prunes_orphans_bcp_neg_05() -> None:
    ours = {
        "a.b.checkout": [_cap("2026-01-01"), _cap("2026-07-28")],
        "a.b.fulfillment": [_cap("2026-07-28", "a.b.checkout")],
        "a.b.gift": [_cap("2026-07-28", "a.b.fulfillment")],  # extension of an extension
        "a.b.order": [_cap("2026-07-28")],
    }
    theirs = {
        "ucp": {
            "capabilities": {
                "a.b.checkout": [_cap("2026-01-01"), _cap("2026-07-28"), _cap("2027-01-01")],
                "a.b.fulfillment": [_cap("2026-07-28")],
                "a.b.gift": [_cap("2026-07-28")],
                "a.b.order": [_cap("2025-01-01")],  # no shared version: dropped
            }
        }
    }
    assert negotiate(theirs, ours) == {
        "a.b.checkout": "2026-07-28",
        "a.b.fulfillment": "2026-07-28",
        "a.b.gift": "2026-07-28",
    }
    del theirs["ucp"]["capabilities"]["a.b.checkout"]
    assert negotiate(theirs, ours) == {}  # fulfillment loses its parent, then gift loses fulfillment


def test_inactive_extensions_are_not_shown_and_their_input_ignored_bcp_neg_08(
    client: Client, fake_platform: FakePlatform
) -> None:
    make_variant("SKU-CAFE-500G")
    profile = fake_platform.profile()
    caps = profile["ucp"]["capabilities"]
    del caps["br.dev.bcp.shopping.discount"], caps["br.dev.bcp.shopping.fulfillment"]
    body = {**CREATE, "discounts": {"codes": ["BEMVINDO10"]}}
    response = client.post(
        "/bcp/v1/checkout-sessions",
        data=json.dumps(body),
        content_type="application/json",
        headers=agent(fake_platform.serve_json("/p.json", profile)),
    )
    data = response.json()
    assert response.status_code == 201
    assert data["ucp"]["capabilities"] == {"br.dev.bcp.shopping.checkout": [{"version": VERSION}]}
    assert "discounts" not in data and "fulfillment" not in data
    assert Checkout.objects.get().discount_codes in ([], None)


def test_profile_cache_is_bounded(client: Client, fake_platform: FakePlatform, settings: Any) -> None:
    settings.BCP_PROFILE_CACHE_MAX = 10
    now = timezone.now()
    for n in range(12):
        ProfileCacheEntry.objects.create(
            url_hash=f"{n:064d}", url=f"https://x/{n}", body={}, fetched_at=now, expires_at=now + timedelta(minutes=5)
        )
    make_variant("SKU-CAFE-500G")
    create(client, agent(fake_platform.publish()))
    assert ProfileCacheEntry.objects.count() == 10
    assert ProfileCacheEntry.objects.filter(url=fake_platform.url("/perfil.json")).exists()


def test_a_ucp_2026_01_11_profile_without_checkout_runs_checkout_without_its_extensions() -> None:
    # UCP 2026-01-11 (overview.md "Version Negotiation": a platform version ≤ ours MUST be processed) conditions no
    # operation on the intersection; checkout's extensions need it there (lines 464-465), so they stay off for a
    # checkout, even discount, which the cart keeps active for cart operations, and an extension of an extension
    gift = "a.b.gift"
    ours = {
        CHECKOUT: [_cap("2026-07-28")],
        CART: [_cap("2026-07-28")],
        FULFILLMENT: [_cap("2026-07-28", CHECKOUT)],
        gift: [_cap("2026-07-28", DISCOUNT)],
        DISCOUNT: [{**_cap("2026-07-28"), "extends": [CHECKOUT, CART]}],
        ORDER: [_cap("2026-07-28")],
    }
    negotiated = {CART: "2026-07-28", DISCOUNT: "2026-07-28", gift: "2026-07-28", ORDER: "2026-07-28"}
    profile = {"ucp": {"version": VERSION, "ucp_version": "2026-01-11", "capabilities": {}}}
    served = negotiation.with_core_checkout_2026_01_11(profile, negotiated, ours)
    assert served == {CHECKOUT: "2026-07-28", CART: "2026-07-28", ORDER: "2026-07-28"}
    # a platform that negotiated checkout, a UCP 2026-08-25 one and a BCP one: what negotiation gave
    with_checkout = {**negotiated, CHECKOUT: "2026-07-28"}
    assert negotiation.with_core_checkout_2026_01_11(profile, with_checkout, ours) == with_checkout
    for ucp_version in ("2026-08-25", None):
        other = {"ucp": {"version": VERSION, "ucp_version": ucp_version, "capabilities": {}}}
        assert negotiation.with_core_checkout_2026_01_11(other, negotiated, ours) == negotiated
