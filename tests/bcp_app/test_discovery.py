"""Discovery profile `GET /.well-known/bcp` (BCP §2, BCP-DISC-*)."""

from __future__ import annotations

import io
import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from bcp_app.checks import previous_signing_key_still_needed
from bcp_app.protocol.keys import public_jwk
from bcp_app.protocol.signatures import HttpMessage, sign_message, verify_message
from tests.bcp_app.schema_check import errors

# The Pix handler entry names the merchant from the store settings row: the profile reads the database.
pytestmark = [pytest.mark.usefixtures("bcp_settings"), pytest.mark.django_db]
VERSION = "2026-07-28"


def profile(client: Client) -> dict[str, Any]:
    response = client.get("/.well-known/bcp")
    assert response.status_code == 200
    return response.json()


def test_profile_has_version_services_and_handlers_bcp_disc_01(client: Client) -> None:
    """BCP-DISC-01: 200 JSON with `ucp.version` 2026-07-28, `ucp.services` and `ucp.payment_handlers`."""
    body = profile(client)
    assert body["ucp"]["version"] == VERSION
    assert set(body["ucp"]) == {"version", "services", "capabilities", "payment_handlers"}
    assert errors(body, "profile.json#/$defs/business_schema") == []


def test_capabilities_exact_bcp_disc_02(client: Client) -> None:
    spec, schema = "https://bcp.dev.br/draft/specification", "https://bcp.dev.br/draft/schemas"
    assert profile(client)["ucp"]["capabilities"] == {
        "br.dev.bcp.shopping.checkout": [
            {"version": VERSION, "spec": f"{spec}/shopping/checkout", "schema": f"{schema}/shopping/checkout.json"}
        ],
        "br.dev.bcp.shopping.fulfillment": [
            {
                "version": VERSION,
                "spec": f"{spec}/fulfillment",
                "schema": f"{schema}/shopping/fulfillment.json",
                "extends": "br.dev.bcp.shopping.checkout",
            }
        ],
        "br.dev.bcp.shopping.cart": [
            {"version": VERSION, "spec": f"{spec}/cart", "schema": f"{schema}/shopping/cart.json"}
        ],
        "br.dev.bcp.shopping.discount": [
            {
                "version": VERSION,
                "spec": f"{spec}/discount",
                "schema": f"{schema}/shopping/discount.json",
                "extends": ["br.dev.bcp.shopping.checkout", "br.dev.bcp.shopping.cart"],
            }
        ],
        "br.dev.bcp.shopping.buyer_consent": [
            {
                "version": VERSION,
                "spec": f"{spec}/buyer-consent",
                "schema": f"{schema}/shopping/buyer_consent.json",
                "extends": ["br.dev.bcp.shopping.checkout", "br.dev.bcp.shopping.cart"],
            }
        ],
        "br.dev.bcp.shopping.order": [
            {"version": VERSION, "spec": f"{spec}/order", "schema": f"{schema}/shopping/order.json"}
        ],
        "br.dev.bcp.shopping.fiscal_document": [
            {
                "version": VERSION,
                "spec": f"{spec}/fiscal-document",
                "schema": f"{schema}/shopping/fiscal_document.json",
                "extends": "br.dev.bcp.shopping.order",
            }
        ],
        "br.dev.bcp.shopping.order_actions": [
            {
                "version": VERSION,
                "spec": f"{spec}/order-actions",
                "schema": f"{schema}/shopping/order_actions.json",
                "extends": "br.dev.bcp.shopping.order",
            }
        ],
        "br.dev.bcp.shopping.subscription": [
            {
                "version": VERSION,
                "spec": f"{spec}/subscription",
                "schema": f"{schema}/shopping/subscription.json",
                "extends": ["br.dev.bcp.shopping.checkout", "br.dev.bcp.shopping.order"],
            }
        ],
        "br.dev.bcp.shopping.catalog.search": [
            {"version": VERSION, "spec": f"{spec}/catalog/search", "schema": f"{schema}/shopping/catalog_search.json"}
        ],
        "br.dev.bcp.shopping.catalog.lookup": [
            {"version": VERSION, "spec": f"{spec}/catalog/lookup", "schema": f"{schema}/shopping/catalog_lookup.json"}
        ],
        "br.dev.bcp.shopping.catalog.feed": [
            {
                "version": VERSION,
                "spec": f"{spec}/catalog/feed",
                "schema": f"{schema}/shopping/catalog_feed.json",
                "config": {
                    "endpoint": "https://loja.example.com.br/feeds/catalogo.json",
                    "merchant_feed": "https://loja.example.com.br/feeds/google-merchant.xml",
                    "sitemap": "https://loja.example.com.br/sitemap.xml",
                },
            }
        ],
        "br.dev.bcp.shopping.permalink": [
            {
                "version": VERSION,
                "spec": f"{spec}/permalink",
                "schema": f"{schema}/shopping/permalink.json",
                "config": {"endpoint": "https://loja.example.com.br/comprar"},
            }
        ],
    }


def test_bcp_entries_are_versioned_and_on_bcp_dev_br_bcp_disc_02(client: Client) -> None:
    ucp = profile(client)["ucp"]
    for registry in ("services", "capabilities", "payment_handlers"):
        for name, entries in ucp[registry].items():
            for entry in entries:
                if name.startswith("br.dev.bcp."):
                    assert entry["version"] == VERSION, name
                    for key in ("spec", "schema"):
                        if key in entry:
                            assert entry[key].startswith("https://bcp.dev.br/"), (name, key)


def test_services_rest_mcp_a2a_with_absolute_endpoints_bcp_disc_03(client: Client, settings: Any) -> None:
    settings.ASGI_MOUNTS = {"/bcp/mcp": "x", "/bcp/a2a": "y", "/.well-known/agent-card.json": "y"}
    services = profile(client)["ucp"]["services"]["br.dev.bcp.shopping"]
    assert [(s["transport"], s["endpoint"], s.get("schema")) for s in services] == [
        ("rest", "https://loja.example.com.br/bcp/v1", "https://bcp.dev.br/draft/services/shopping/rest.openapi.json"),
        ("mcp", "https://loja.example.com.br/bcp/mcp", "https://bcp.dev.br/draft/services/shopping/mcp.openrpc.json"),
        ("a2a", "https://loja.example.com.br/.well-known/agent-card.json", None),
    ]
    assert all(not s["endpoint"].endswith("/") for s in services)


def test_unmounted_transports_are_not_advertised_bcp_disc_07(client: Client, settings: Any) -> None:
    settings.ASGI_MOUNTS = {}
    services = profile(client)["ucp"]["services"]["br.dev.bcp.shopping"]
    assert [s["transport"] for s in services] == ["rest"]


def test_cache_headers_and_etag_bcp_disc_04(client: Client, django_user_model: Any) -> None:
    """BCP-DISC-04: answered directly (no redirect), `Cache-Control: public, max-age≥60`, never private/no-store/
    no-cache, also to a logged-in merchant and on a 304 (HTTPS itself is the deployment's: BCP-SEC-01)."""
    response = client.get("/.well-known/bcp")
    assert (response.status_code, response["Content-Type"]) == (200, "application/json; charset=utf-8")
    assert response["Cache-Control"] == "public, max-age=300"
    assert re.fullmatch(r'"[0-9a-f]{32}"', response["ETag"])
    again = client.get("/.well-known/bcp", headers={"If-None-Match": response["ETag"]})
    assert again.status_code == 304
    assert again["ETag"] == response["ETag"]
    assert again["Cache-Control"] == "public, max-age=300"
    client.force_login(django_user_model.objects.create_superuser("dona", "dona@example.com.br", "senha-longa-1"))
    logged_in = client.get("/.well-known/bcp", headers={"Accept-Language": "en"})
    assert (logged_in.status_code, logged_in["Cache-Control"]) == (200, "public, max-age=300")
    assert "Cookie" not in logged_in.get("Vary", "") and not logged_in.cookies


def test_keys_are_public_es256_jwks_with_unique_kid_bcp_disc_05(client: Client) -> None:
    """BCP-DISC-05: keys only in the top-level `keys[]` (no `keys`/`jwk` member anywhere under `ucp`), public
    JWKs with unique `kid`, and the ES256 key the shop signs with (webhooks, responses)."""
    document = profile(client)

    def members(node: Any) -> set[str]:
        if isinstance(node, dict):
            return set(node).union(*(members(v) for v in node.values()))
        if isinstance(node, list):
            return set().union(*(members(v) for v in node))
        return set()

    assert not members(document["ucp"]) & {"keys", "jwk", "jwks"}
    keys = document["keys"]
    assert len({k["kid"] for k in keys}) == len(keys)
    assert (keys[0]["kty"], keys[0]["crv"], keys[0]["alg"]) == ("EC", "P-256", "ES256")
    assert keys == [public_jwk()]
    assert keys[0]["kid"] == "loja-2026-07"
    assert "d" not in keys[0]


def test_payment_handlers_have_version_and_unique_ids_bcp_disc_08(client: Client) -> None:
    """BCP-DISC-08: every payment handler entry has `version` and an `id` unique in the profile."""
    handlers = profile(client)["ucp"]["payment_handlers"]
    pix = handlers["br.dev.bcp.pix"][0]
    assert pix == {
        "id": "pix_recebedor_001",
        "version": VERSION,
        "spec": "https://bcp.dev.br/draft/specification/payment/pix",
        "schema": "https://bcp.dev.br/draft/schemas/payment/pix.json",
        "available_instruments": [{"type": "pix"}],
        "config": {
            "environment": "sandbox",
            "charge_kind": "cob",
            "key_type": "evp",
            "expiration_seconds": 1800,
            "merchant_name": "LOJA EXEMPLO LTDA",
            "merchant_city": "SAO PAULO",
            "min_amount": 1,
            "max_amount": 10000000,
        },
    }
    card = handlers["com.google.pay"][0]
    assert (card["id"], card["available_instruments"]) == ("gpay", [{"type": "card"}])
    ids = [entry["id"] for entries in handlers.values() for entry in entries]
    assert len(ids) == len(set(ids))
    # each with a version (a vendor's handler keeps its own, e.g. Google Pay's 2026-01-11)
    versions = [entry["version"] for entries in handlers.values() for entry in entries]
    assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) for v in versions) and len(versions) == len(ids)


def test_supported_versions_only_maps_dates_to_profiles_of_that_version_bcp_disc_06(client: Client) -> None:
    """BCP-DISC-06: the shop speaks only 2026-07-28, so its BCP profile names no `supported_versions` (no date
    without a profile of that version, no non-date key); the older UCP versions live on `/.well-known/ucp`."""
    assert "supported_versions" not in profile(client)["ucp"]


def test_the_pix_handler_names_the_merchant_as_the_payers_app_shows_it(client: Client) -> None:
    """PIX.md §1.1 (`merchant_name` / `merchant_city`: ASCII, ≤ 25 / ≤ 15): the store settings as the merchant
    typed them, accents and all, are advertised as the BR Code carries them."""
    from django.core.cache import cache

    from shop.models import StoreSettings

    StoreSettings.objects.create(legal_name="Café & Companhia do Cerrado Ltda", city="São José dos Campos")
    cache.clear()
    config = profile(client)["ucp"]["payment_handlers"]["br.dev.bcp.pix"][0]["config"]
    assert (config["merchant_name"], config["merchant_city"]) == ("CAFE & COMPANHIA DO CERRA", "SAO JOSE DOS CA")


def test_post_is_not_allowed(client: Client) -> None:
    assert client.post("/.well-known/bcp").status_code == 405


def test_the_example_agent_profile_names_handlers_and_capabilities_as_we_serve_them(client: Client) -> None:
    """QA walk: `examples/agent-profile.json` (the README's platform profile) named the Pix handler's spec and
    schema `payment-handlers/pix` and `payment_handlers/pix.json` while `/.well-known/bcp` serves PIX.md §10 D2's
    `payment/pix` and `payment/pix.json`. Every entry the example shares with our profile names the same URLs."""
    example = json.loads((Path(__file__).resolve().parents[2] / "examples" / "agent-profile.json").read_text())
    served = profile(client)["ucp"]

    def urls(registry: dict[str, list[dict[str, Any]]]) -> dict[str, set[tuple[str, str]]]:
        return {name: {(e["spec"], e["schema"]) for e in entries} for name, entries in registry.items()}

    ours = {**urls(served["capabilities"]), **urls(served["payment_handlers"])}
    theirs = {**urls(example["ucp"]["capabilities"]), **urls(example["ucp"]["payment_handlers"])}
    assert "br.dev.bcp.pix" in theirs
    assert {name: entries for name, entries in theirs.items() if name in ours} == {
        name: ours[name] for name in theirs if name in ours
    }
    assert theirs["br.dev.bcp.pix"] == {
        ("https://bcp.dev.br/draft/specification/payment/pix", "https://bcp.dev.br/draft/schemas/payment/pix.json")
    }


def test_posting_to_the_discovery_document_is_405_not_a_csrf_page() -> None:
    # BCP §2: discovery is a GET; an agent that POSTs is told the method, not shown the CSRF page meant for people
    answer = Client(enforce_csrf_checks=True).post("/.well-known/bcp", data="{}", content_type="application/json")
    assert answer.status_code == 405
    assert answer["Allow"] == "GET, HEAD"
    assert b"CSRF" not in answer.content


def _rotate(tmp_path: Path, settings: Any, *args: str) -> list[str]:
    """`manage.py new_signing_key`, then its printed settings applied as an operator would (and a restart)."""
    out = io.StringIO()
    call_command("new_signing_key", "--kid", "loja-2027-01", "--out", str(tmp_path / "nova.pem"), *args, stdout=out)
    printed = out.getvalue().splitlines()
    for line in printed:
        name, _, value = line.strip().partition("=")
        if name.startswith("BCP_") and _:
            setattr(settings, name, value)
    return printed


def test_a_replaced_key_stays_in_keys_seven_days_and_a_compromised_one_leaves_at_once_bcp_sig_07(
    client: Client, settings: Any, tmp_path: Path
) -> None:
    """BCP §14: "keep a replaced key ≥ 7 days; remove compromised keys at once". A webhook signed just before the
    rotation (or retried later) still verifies against our profile during those days; after them the old key is
    gone and `check --deploy` says its settings can go."""
    old = public_jwk()
    signed_before = HttpMessage(
        method="POST", authority="agente.example", path="/webhooks", headers={"content-type": "application/json"}
    )
    signed_before.headers.update(sign_message(signed_before, ("@method", "@authority", "@path", "content-type")))

    printed = _rotate(tmp_path, settings)

    keys = profile(client)["keys"]
    assert [k["kid"] for k in keys] == ["loja-2027-01", "loja-2026-07"]
    assert keys[1] == old and all("d" not in k for k in keys)
    assert verify_message(signed_before, b"", keys, required=("@method", "@authority", "@path")).keyid == "loja-2026-07"
    assert any("stays in keys[] until" in line for line in printed)
    # a new signature is made with the new key
    signed_after = HttpMessage(method="POST", authority="agente.example", path="/webhooks", headers={})
    signed_after.headers.update(sign_message(signed_after, ("@method", "@authority", "@path")))
    assert verify_message(signed_after, b"", keys, required=("@path",)).keyid == "loja-2027-01"
    # seven days after the retirement the old key is gone, and the deploy check names its leftover settings
    settings.BCP_PREVIOUS_SIGNING_KEY_RETIRED_AT = (timezone.now() - timedelta(days=7, seconds=1)).isoformat()
    assert [k["kid"] for k in profile(client)["keys"]] == ["loja-2027-01"]
    assert [w.id for w in previous_signing_key_still_needed()] == ["bcp_app.W001"]


def test_a_compromised_key_is_not_kept_bcp_sig_07(client: Client, settings: Any, tmp_path: Path) -> None:
    printed = _rotate(tmp_path, settings, "--compromised")

    assert [k["kid"] for k in profile(client)["keys"]] == ["loja-2027-01"]
    assert "  BCP_PREVIOUS_SIGNING_KEY_FILE=" in printed
    with pytest.raises(CommandError, match="already in use"):
        call_command("new_signing_key", "--kid", "loja-2027-01", "--out", str(tmp_path / "outra.pem"))
    with pytest.raises(CommandError, match="never overwritten"):
        call_command("new_signing_key", "--kid", "loja-2027-02", "--out", str(tmp_path / "nova.pem"))
