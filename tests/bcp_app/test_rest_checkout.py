"""REST checkout (BCP §4, §13.1) through the real checkout engine; exact JSON where the shop decides it."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.http import HttpRequest
from django.test import Client
from django.urls import resolve
from django.utils import timezone
from ninja import Body, NinjaAPI

from bcp_app.protocol.keys import public_jwk
from bcp_app.protocol.schemas import CheckoutCancelRequest, CheckoutCompleteRequest, CheckoutUpdateRequest
from bcp_app.protocol.signatures import RESPONSE_COMPONENTS, HttpMessage, verify_message
from bcp_app.service.policies import policies_json
from payments.sandbox import services as sandbox
from shop.checkout.selectors import continue_token
from shop.checkout.stock import catalog_cache_bump
from shop.models import Checkout, Product
from shop.store.services import store_row
from tests.bcp_app.bcp_fixtures import VERSION, FakePlatform, agent
from tests.bcp_app.rest_helpers import BUYER, PIX, call, catalog, complete, create, full_update, ready_checkout
from tests.shop.checkout_factories import make_coupon, make_variant

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]
CHECKOUT_CAPS = {
    "br.dev.bcp.shopping.checkout": [{"version": VERSION}],
    "br.dev.bcp.shopping.fulfillment": [{"version": VERSION}],
    "br.dev.bcp.shopping.discount": [{"version": VERSION}],
}
PIX_HANDLERS = {
    "br.dev.bcp.pix": [
        {
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
    ]
}
LINKS = [
    {"type": "terms_of_service", "url": "https://loja.example.com.br/termos", "title": "Termos de uso"},
    {"type": "privacy_policy", "url": "https://loja.example.com.br/privacidade", "title": "Política de privacidade"},
    {"type": "refund_policy", "url": "https://loja.example.com.br/trocas-e-devolucoes", "title": "Trocas e devoluções"},
    {"type": "shipping_policy", "url": "https://loja.example.com.br/entrega", "title": "Política de entrega"},
]


@pytest.fixture
def headers(fake_platform: FakePlatform, settings: Any) -> dict[str, str]:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()
    return agent(fake_platform.publish())


def test_create_returns_201_and_the_exact_checkout_bcp_chk_02_04(client: Client, headers: dict[str, str]) -> None:
    # when the agent creates a checkout like BCP §4.4
    response = create(client, headers)
    body = response.json()
    checkout = Checkout.objects.get()
    line_id = body["line_items"][0]["id"]
    # then: 201 and exactly the shop-decided checkout
    assert response.status_code == 201
    assert body == {
        "ucp": {"version": VERSION, "capabilities": CHECKOUT_CAPS, "payment_handlers": PIX_HANDLERS},
        "id": checkout.public_id,
        "status": "incomplete",
        "currency": "BRL",
        "line_items": [
            {
                "id": line_id,
                "item": {"id": "SKU-CAFE-500G", "title": "Café especial 500 g", "price": 4290},
                "quantity": 2,
                "totals": [{"type": "subtotal", "amount": 8580}, {"type": "total", "amount": 8580}],
            }
        ],
        "buyer": {"email": "ana@example.com.br"},
        "fulfillment": {
            "methods": [],
            "available_methods": [
                {
                    "type": "shipping",
                    "line_item_ids": [line_id],
                    "fulfillable_on": "now",
                    "description": "Entrega no endereço (Correios ou motoboy)",
                }
            ],
        },
        "discounts": {"codes": [], "applied": []},
        "totals": [{"type": "subtotal", "amount": 8580}, {"type": "total", "amount": 8580}],
        "messages": [
            {
                "type": "error",
                "code": "field_required",
                "severity": "recoverable",
                "path": "$.buyer.first_name",
                "content": "Informe o nome.",
            },
            {
                "type": "error",
                "code": "field_required",
                "severity": "recoverable",
                "path": "$.buyer.last_name",
                "content": "Informe o sobrenome.",
            },
            {
                "type": "error",
                "code": "field_required",
                "severity": "recoverable",
                "path": "$.fulfillment",
                "content": "Informe o endereço de entrega ou escolha retirada na loja.",
            },
        ],
        "links": LINKS,
        "policies": policies_json("pt-br"),  # tests/bcp_app/test_policies.py checks their content
        # signed: only this link (not the id alone) opens the storefront page (shop/checkout/selectors.py)
        "continue_url": f"https://loja.example.com.br/checkout/{checkout.public_id}?t={continue_token(checkout)}",
        "expires_at": checkout.expires_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    assert body["id"].startswith("checkout_") and line_id.startswith("li_")


def test_response_only_input_is_ignored_bcp_chk_04_sec_03(client: Client, headers: dict[str, str]) -> None:
    body = {
        "id": "chk_mine",
        "status": "completed",
        "currency": "USD",
        "totals": [{"type": "total", "amount": 1}],
        "line_items": [
            {
                "id": "li_x",
                "item": {"id": "SKU-CAFE-500G", "title": "Grátis", "price": 1},
                "quantity": 1,
                "totals": [{"type": "total", "amount": 1}],
            }
        ],
    }
    data = create(client, headers, body).json()
    assert data["id"] != "chk_mine" and data["status"] == "incomplete" and data["currency"] == "BRL"
    assert data["line_items"][0]["id"] != "li_x"
    assert data["line_items"][0]["item"] == {"id": "SKU-CAFE-500G", "title": "Café especial 500 g", "price": 4290}
    assert data["totals"] == [{"type": "subtotal", "amount": 4290}, {"type": "total", "amount": 4290}]


def test_a_line_taken_off_sale_keeps_its_price_out_of_the_totals_bcp_chk_16_bcp_chk_19(
    client: Client, headers: dict[str, str]
) -> None:
    """QA walk: a product deactivated under an open checkout showed `item.price: 0` (an agent could read it as
    free). The line keeps its last known price with its `item_unavailable` error (BCP-CHK-19); its own totals
    are price × quantity (BCP-CHK-16) and the checkout's totals leave it out: it cannot be bought (§6)."""
    make_variant("SKU-CHA-100G", price=1990, stock=5, title="Chá verde 100 g")
    lines = [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 2}, {"item": {"id": "SKU-CHA-100G"}, "quantity": 1}]
    checkout = create(client, headers, {"line_items": lines}).json()
    Product.objects.filter(variants__sku="SKU-CAFE-500G").update(active=False)
    catalog_cache_bump()  # as the admin's save does
    body = {"line_items": [{"id": li["id"], **line} for li, line in zip(checkout["line_items"], lines, strict=True)]}
    data = call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, body).json()
    coffee = data["line_items"][0]
    assert coffee["item"] == {"id": "SKU-CAFE-500G", "title": "Café especial 500 g", "price": 4290}
    assert coffee["totals"] == [{"type": "subtotal", "amount": 8580}, {"type": "total", "amount": 8580}]
    assert next((m["code"], m["path"]) for m in data["messages"] if m["type"] == "error") == (
        "item_unavailable",
        "$.line_items[0]",
    )
    assert data["totals"] == [{"type": "subtotal", "amount": 1990}, {"type": "total", "amount": 1990}]


def test_a_store_letting_no_agent_complete_hands_the_checkout_to_the_buyer_before_any_charge_bcp_chk_08(
    client: Client, headers: dict[str, str]
) -> None:
    """QA walk: with "agentes podem finalizar: nenhum agente" an agent still brought a Pix checkout to
    `ready_for_complete` with a QR; its complete was then refused (403) after the buyer could have paid. Now it
    is said before any charge: `requires_escalation` with `continue_url` and a `requires_buyer_review` error
    (BCP-CHK-08), so the buyer finishes on the shop's page; no Pix charge exists."""
    from payments.models import PixCharge

    row = store_row()
    row.agents_complete = "none"
    row.save()
    checkout = create(client, headers).json()
    checkout = call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, full_update(checkout)).json()
    checkout = call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, full_update(checkout)).json()
    assert checkout["status"] == "requires_escalation"
    assert checkout["continue_url"].startswith(f"https://loja.example.com.br/checkout/{checkout['id']}?t=")
    assert [(m["code"], m["severity"]) for m in checkout["messages"] if m["type"] == "error"] == [
        ("agent_complete_forbidden", "requires_buyer_review")
    ]
    assert not PixCharge.objects.filter(reference=checkout["id"]).exists()


def test_impossible_create_is_an_error_response_and_stores_nothing_bcp_chk_05(
    client: Client, headers: dict[str, str]
) -> None:
    response = create(client, headers, {"line_items": [{"item": {"id": "SKU-NAO-EXISTE"}, "quantity": 1}]})
    assert response.status_code == 200
    body = response.json()
    assert body["ucp"] == {
        "version": VERSION,
        "status": "error",
        "capabilities": {"br.dev.bcp.shopping.checkout": [{"version": VERSION}]},
    }
    assert [(m["type"], m["code"], m["severity"]) for m in body["messages"]] == [
        ("error", "item_unavailable", "unrecoverable")
    ]
    assert set(body) == {"ucp", "messages"}
    assert Checkout.objects.count() == 0


def test_unknown_checkout_is_not_found_with_http_200_bcp_chk_13(client: Client, headers: dict[str, str]) -> None:
    response = call(client, "get", "/checkout-sessions/checkout_desconhecido", headers)
    assert response.status_code == 200
    assert response.json() == {
        "ucp": {
            "version": VERSION,
            "status": "error",
            "capabilities": {"br.dev.bcp.shopping.checkout": [{"version": VERSION}]},
        },
        "messages": [
            {"type": "error", "code": "not_found", "severity": "unrecoverable", "content": "Checkout não encontrado."}
        ],
    }


def test_a_write_on_an_unknown_checkout_is_not_found_whatever_the_body_bcp_chk_13(
    client: Client, headers: dict[str, str]
) -> None:
    """BCP-CHK-13 / §4.3: an unknown id is the Error Response `not_found` (HTTP 200 on REST, §13.1) on every
    write too. A complete with `{}` answered the missing `payment` (400) before it, telling the agent to fix a
    body for a checkout that does not exist; a body with problems on a checkout that exists is still 400."""
    keyed = {**headers, "Idempotency-Key": "b0f6f2a4-4c1e-4d7e-9b1a-unknown-complete"}
    unknown = "/checkout-sessions/checkout_desconhecido"

    answers = [
        call(client, "post", f"{unknown}/complete", keyed, {}),
        call(client, "put", unknown, headers, {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 0}]}),
        call(client, "post", f"{unknown}/cancel", keyed, ["not", "an", "object"]),
    ]
    existing = create(client, headers).json()["id"]
    bad_body = call(
        client, "post", f"/checkout-sessions/{existing}/complete", {**keyed, "Idempotency-Key": "b0f6f2a4-known"}, {}
    )

    for answer in answers:
        assert answer.status_code == 200, answer.content
        assert answer.json()["messages"] == [
            {"type": "error", "code": "not_found", "severity": "unrecoverable", "content": "Checkout não encontrado."}
        ]
    assert (bad_body.status_code, bad_body.json()["fields"]) == (400, {"$.payment": "campo obrigatório"})


def test_update_is_full_replacement_bcp_chk_06(client: Client, headers: dict[str, str]) -> None:
    """BCP-CHK-06: omitted fields cleared, unlisted lines removed."""
    created = create(client, headers).json()
    line = created["line_items"][0]
    body = {"line_items": [{"id": line["id"], "item": {"id": "SKU-CAFE-500G"}, "quantity": 3}]}
    updated = call(client, "put", f"/checkout-sessions/{created['id']}", headers, body).json()
    assert "buyer" not in updated  # omitted writable field cleared
    assert [(li["id"], li["quantity"]) for li in updated["line_items"]] == [(line["id"], 3)]
    assert updated["totals"] == [{"type": "subtotal", "amount": 12870}, {"type": "total", "amount": 12870}]


def test_a_price_the_merchant_changed_since_create_is_said_on_update_bcp_chk_20(
    client: Client, headers: dict[str, str]
) -> None:
    """QA walk: the merchant raised the price between the agent's create and its update; the update answered the
    new price with no message (BCP §4.3 "no silent changes"). Now a warning at the line's price, in Portuguese,
    with both amounts; a second update with nothing new says nothing."""
    from shop.models import Variant

    created = create(client, headers).json()
    variant = Variant.objects.get(sku="SKU-CAFE-500G")
    variant.price = 4590
    variant.save()
    line = created["line_items"][0]
    body = {"line_items": [{"id": line["id"], "item": {"id": "SKU-CAFE-500G"}, "quantity": 2}], "buyer": BUYER}
    updated = call(client, "put", f"/checkout-sessions/{created['id']}", headers, body).json()
    assert updated["line_items"][0]["item"]["price"] == 4590
    assert [m for m in updated["messages"] if m["type"] == "warning"] == [
        {
            "type": "warning",
            "code": "checkout_changed",
            "path": "$.line_items[0].item.price",
            "content": "O preço de Café especial 500 g mudou de R$ 42,90 para R$ 45,90; confira antes de concluir.",
        }
    ]
    again = call(client, "put", f"/checkout-sessions/{created['id']}", headers, body).json()
    assert [m for m in again["messages"] if m["type"] == "warning"] == []


def test_ready_for_complete_shows_the_pix_charge_bcp_chk_07_pay_01(client: Client, headers: dict[str, str]) -> None:
    """BCP-CHK-07: ready with all data and no message."""
    checkout = ready_checkout(client, headers)
    instrument = checkout["payment"]["instruments"][0]
    pix = instrument.pop("pix")
    assert instrument == {**PIX, "display": {"description": "Pix"}}
    assert (pix["status"], pix["amount"], pix["currency"], pix["paid_at"], pix["end_to_end_id"]) == (
        "active",
        10470,
        "BRL",
        None,
        None,
    )
    assert pix["br_code"].startswith("000201") and pix["qr_code"]["data_uri"].startswith("data:image/png;base64,")
    assert checkout["totals"] == [
        {"type": "subtotal", "amount": 8580},
        {"type": "fulfillment", "display_text": "PAC", "amount": 1890},
        {"type": "total", "amount": 10470},
    ]
    assert checkout["ucp"]["payment_handlers"] == PIX_HANDLERS
    assert "messages" not in checkout


def test_delivery_options_say_the_stores_posting_time_as_the_buyers_checkout_bcp_chk_21(
    client: Client, headers: dict[str, str]
) -> None:
    """Closing note 45: with a "prazo de postagem" of 2 business days (Dados da loja → Frete), the buyer's checkout
    says the days count from the posting, and the order dates its arrival 2 + the carrier's days from the payment;
    the options sent to agents said the carrier's days alone. They say both now, with the order's rule for the
    total (orders.arrival.days_from_payment), on every transport (one presenter)."""
    store = store_row()
    store.handling_days = 2
    store.save()
    checkout = create(client, headers).json()
    checkout = call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, full_update(checkout)).json()
    options = checkout["fulfillment"]["methods"][0]["groups"][0]["options"]
    store.handling_days = 0
    store.save()
    again = call(client, "get", f"/checkout-sessions/{checkout['id']}", headers).json()

    described = {o["id"]: o["description"]["plain"] for o in options}
    assert {key: described[key] for key in ("pac", "sedex")} == {
        "pac": "Chega em 3 a 5 dias úteis após a postagem; a loja posta em até 2 dias úteis após o pagamento "
        "(5 a 7 dias úteis desde o pagamento)",
        "sedex": "Chega em 1 a 2 dias úteis após a postagem; a loja posta em até 2 dias úteis após o pagamento "
        "(3 a 4 dias úteis desde o pagamento)",
    }
    assert all("; a loja posta em até 2 dias úteis após o pagamento" in text for text in described.values())
    again_described = {
        o["id"]: o["description"]["plain"] for o in again["fulfillment"]["methods"][0]["groups"][0]["options"]
    }
    assert (again_described["pac"], again_described["sedex"]) == (
        "Chega em 3 a 5 dias úteis",
        "Chega em 1 a 2 dias úteis",
    )


def test_complete_and_cancel_require_an_idempotency_key_bcp_idem_02(client: Client, headers: dict[str, str]) -> None:
    checkout = ready_checkout(client, headers)
    for path in (f"/checkout-sessions/{checkout['id']}/complete", f"/checkout-sessions/{checkout['id']}/cancel"):
        response = call(client, "post", path, headers, {"payment": {"instruments": [PIX]}})
        assert response.status_code == 400
        assert response.json()["code"] == "idempotency_key_required"
    assert Checkout.objects.get().status == "ready_for_complete"


def test_pix_complete_is_async_and_the_response_is_signed_bcp_chk_11_sig_06(
    client: Client, headers: dict[str, str]
) -> None:
    """BCP-CHK-11: async → `complete_in_progress` without `order`."""
    checkout = ready_checkout(client, headers)
    response = complete(client, checkout["id"], headers)
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "complete_in_progress"
    assert "order" not in body
    assert [m["code"] for m in body.get("messages", [])] == ["pix_awaiting_payment"]
    message = HttpMessage(status=200, headers=dict(response.headers))
    verified = verify_message(message, response.content, [public_jwk()], required=RESPONSE_COMPONENTS)
    assert verified.components == RESPONSE_COMPONENTS


def test_update_or_complete_during_in_progress_is_recoverable_bcp_chk_12(
    client: Client, headers: dict[str, str]
) -> None:
    checkout = ready_checkout(client, headers)
    in_progress = complete(client, checkout["id"], headers).json()
    updated = call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, full_update(in_progress)).json()
    again = complete(client, checkout["id"], headers, key="k-complete-2").json()
    for body in (updated, again):
        assert body["status"] == "complete_in_progress"
        assert body["messages"][-1]["code"] == "invalid_checkout_status"
        assert body["messages"][-1]["severity"] == "recoverable"


def test_cancel_then_everything_is_refused_unrecoverably_bcp_chk_09_14(client: Client, headers: dict[str, str]) -> None:
    """BCP-CHK-09: no `continue_url` once terminal."""
    checkout = ready_checkout(client, headers)
    complete(client, checkout["id"], headers)
    canceled = call(
        client, "post", f"/checkout-sessions/{checkout['id']}/cancel", {**headers, "Idempotency-Key": "k-cancel"}, {}
    ).json()
    assert canceled["status"] == "canceled"
    assert "continue_url" not in canceled and "expires_at" not in canceled
    refused = [
        call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, full_update(checkout)).json(),
        complete(client, checkout["id"], headers, key="k-complete-3").json(),
        call(
            client, "post", f"/checkout-sessions/{checkout['id']}/cancel", {**headers, "Idempotency-Key": "k-2"}, {}
        ).json(),
    ]
    for body in refused:
        assert body["status"] == "canceled"
        assert (body["messages"][-1]["code"], body["messages"][-1]["severity"]) == (
            "invalid_checkout_status",
            "unrecoverable",
        )


def test_an_expired_checkout_says_so_and_asks_for_nothing_bcp_chk_15(client: Client, headers: dict[str, str]) -> None:
    # BCP-CHK-15 (expired → canceled).
    """An expired checkout kept the errors of its last evaluation ("Informe o e-mail.", recoverable: BCP §5.1 "the
    platform fixes input") and gave no reason for its `canceled`: an agent went on to fix fields it could no longer
    change. It says it expired, in the checkout's language, and asks for no input; so does a canceled one."""
    line = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]}
    pt = call(client, "post", "/checkout-sessions", {**headers, "Idempotency-Key": "k-pt"}, line).json()
    en = call(
        client, "post", "/checkout-sessions", {**headers, "Idempotency-Key": "k-en", "Accept-Language": "en"}, line
    )
    assert pt["messages"][0]["code"] == "field_required"
    Checkout.objects.filter(public_id__in=[pt["id"], en.json()["id"]]).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    read = call(client, "get", f"/checkout-sessions/{pt['id']}", headers).json()
    read_en = call(client, "get", f"/checkout-sessions/{en.json()['id']}", headers).json()
    updated = call(client, "put", f"/checkout-sessions/{pt['id']}", headers, line).json()
    other = call(client, "post", "/checkout-sessions", {**headers, "Idempotency-Key": "k-other"}, line).json()
    canceled = call(
        client, "post", f"/checkout-sessions/{other['id']}/cancel", {**headers, "Idempotency-Key": "k-cancel"}, {}
    ).json()

    assert read["status"] == "canceled"
    assert read["messages"] == [
        {
            "type": "info",
            "code": "checkout_expired",
            "content": "O checkout expirou sem ser concluído; crie um novo para comprar.",
        }
    ]
    assert read_en["messages"][0]["content"] == "The checkout expired before it was completed; create a new one to buy."
    assert [(m["code"], m.get("severity")) for m in updated["messages"]] == [
        ("checkout_expired", None),
        ("invalid_checkout_status", "unrecoverable"),
    ]
    assert canceled["status"] == "canceled"
    assert not [m for m in canceled.get("messages", []) if m.get("severity") == "recoverable"]


def test_paid_pix_completes_with_an_order_bcp_chk_11_ord_05(
    client: Client, headers: dict[str, str], django_capture_on_commit_callbacks: Any
) -> None:
    """BCP-CHK-11 (`completed` has `order{id, permalink_url}`); BCP-CHK-09 (none when terminal)."""
    checkout = ready_checkout(client, headers)
    complete(client, checkout["id"], headers)
    # when the buyer pays in the sandbox PSP and its webhook settles the charge
    with django_capture_on_commit_callbacks(execute=True):
        sandbox.pay(txid=checkout["payment"]["instruments"][0]["pix"]["txid"], options=sandbox.PayOptions())
    body = call(client, "get", f"/checkout-sessions/{checkout['id']}", headers).json()
    assert body["status"] == "completed"
    assert set(body["order"]) == {"id", "permalink_url"}
    assert body["order"]["id"].startswith("order_")
    assert body["order"]["permalink_url"].startswith("https://loja.example.com.br/")
    assert "continue_url" not in body and "expires_at" not in body
    assert body["payment"]["instruments"][0]["pix"]["status"] == "paid"


def test_other_platforms_cannot_see_a_platforms_checkout(
    client: Client, headers: dict[str, str], fake_platform: FakePlatform
) -> None:
    from bcp_app.service.platforms import platform_create

    owner = platform_create(name="Agente A", profile_url=fake_platform.url("/perfil.json"))
    created = create(client, {**headers, "Authorization": f"Bearer {owner.api_key}"}).json()
    other = call(client, "get", f"/checkout-sessions/{created['id']}", headers).json()
    mine = call(
        client, "get", f"/checkout-sessions/{created['id']}", {**headers, "Authorization": f"Bearer {owner.api_key}"}
    ).json()
    assert other["messages"][0]["code"] == "not_found"
    assert mine["id"] == created["id"]


def test_request_id_is_echoed_and_optional_bcp_rest_05(client: Client, headers: dict[str, str]) -> None:
    with_id = create(client, {**headers, "Request-Id": "req-123"})
    without = create(client, headers)
    assert with_id["Request-Id"] == "req-123"
    assert "Request-Id" not in without
    error = call(client, "get", "/checkout-sessions/x", {"Request-Id": "req-9"})
    assert (error.status_code, error["Request-Id"]) == (400, "req-9")


def test_no_trailing_slash_redirects_bcp_rest_01(client: Client, headers: dict[str, str]) -> None:
    response = client.post("/bcp/v1/checkout-sessions/", data="{}", content_type="application/json", headers=headers)
    assert (response.status_code, response.json()["code"]) == (404, "not_found")
    assert Checkout.objects.count() == 0


def test_buyer_given_on_update_is_echoed(client: Client, headers: dict[str, str]) -> None:
    created = create(client, headers).json()
    updated = call(client, "put", f"/checkout-sessions/{created['id']}", headers, full_update(created, pix=False))
    assert updated.json()["buyer"] == BUYER


def test_credentials_are_never_echoed_bcp_chk_22_pay_04(client: Client, headers: dict[str, str]) -> None:
    """BCP-CHK-22: no payment credentials in responses; the instrument returned is display-only."""
    created = create(client, headers).json()
    body = full_update(created, pix=False)
    body["payment"] = {
        "instruments": [
            {
                "id": "instr_card",
                "handler_id": "gpay",
                "type": "card",
                "selected": True,
                "credential": {"type": "PAYMENT_GATEWAY", "token": "tok_segredo_123"},
            }
        ]
    }
    response = call(client, "put", f"/checkout-sessions/{created['id']}", headers, body)
    assert b"tok_segredo_123" not in response.content
    instrument = response.json()["payment"]["instruments"][0]
    assert instrument == {
        "id": "instr_card",
        "handler_id": "gpay",
        "type": "card",
        "selected": True,
        "installments": 1,
        "display": {"description": "Cartão à vista"},
    }
    assert "tok_segredo_123" not in str(Checkout.objects.values().get())


def test_the_openapi_documents_the_body_of_cancel_checkout(client: Client, headers: dict[str, str]) -> None:
    """The view read its body itself, so the OpenAPI had no `requestBody` for it (as the order actions' cancel and
    returns before). It takes the request model `operations.cancel_checkout` validates for MCP and A2A too; bad
    bodies stay BCP-ERR-05's Portuguese `invalid_request`, and a missing Idempotency-Key is said first."""
    document = client.get("/bcp/v1/openapi.json").json()
    body = document["paths"]["/bcp/v1/checkout-sessions/{checkout_id}/cancel"]["post"]["requestBody"]
    assert body["required"] is False  # no body is a cancel
    assert {"$ref": "#/components/schemas/CheckoutCancelRequest"} in body["content"]["application/json"]["schema"][
        "anyOf"
    ]
    assert document["components"]["schemas"]["CheckoutCancelRequest"]["type"] == "object"

    checkout = ready_checkout(client, headers)
    path = f"/checkout-sessions/{checkout['id']}/cancel"
    answers = [
        call(client, "post", path, {**headers, "Idempotency-Key": "k-bad-1"}, "{"),
        call(client, "post", path, headers, "{"),
        call(client, "post", path, {**headers, "Idempotency-Key": "k-bad-2"}, [1]),
    ]
    assert [(a.status_code, a.json()["code"]) for a in answers] == [
        (400, "invalid_request"),
        (400, "idempotency_key_required"),
        (400, "invalid_request"),
    ]
    assert answers[0].json()["content"] == "O corpo não é JSON válido (UTF-8)."
    assert answers[2].json()["content"] == "Campo inválido $: deve ser um objeto JSON"
    assert Checkout.objects.get(public_id=checkout["id"]).status != "canceled"
    canceled = call(client, "post", path, {**headers, "Idempotency-Key": "k-ok"}, {"reason": "ignorado"})
    assert canceled.json()["status"] == "canceled"


CANCEL_BODY = Body(None, description="Opcional: sem corpo ou `{}`.")  # as BCP REST's cancel declared it


def test_the_openapi_declares_the_bodies_of_the_checkout_writes_as_ninja_writes_a_declared_body(
    client: Client,
) -> None:
    """Update, complete and cancel read their body themselves and the operation validates it, answering not_found
    first (BCP-CHK-13), so ninja declares no body model for them; the OpenAPI still says each body (and every model
    it refers to) exactly as ninja writes it for a declared one, which the schemathesis tests read."""
    reference = NinjaAPI(urls_namespace="reference_checkout_bodies")

    @reference.put("/update")
    def update(request: HttpRequest, payload: CheckoutUpdateRequest) -> None: ...

    @reference.post("/complete")
    def complete(request: HttpRequest, payload: CheckoutCompleteRequest) -> None: ...

    @reference.post("/cancel")
    def cancel(request: HttpRequest, payload: CheckoutCancelRequest | None = CANCEL_BODY) -> None: ...

    expected = reference.get_openapi_schema(path_prefix="")
    document = client.get("/bcp/v1/openapi.json").json()

    checkout = "/bcp/v1/checkout-sessions/{checkout_id}"
    for (path, method), name in (
        ((checkout, "put"), "/update"),
        ((f"{checkout}/complete", "post"), "/complete"),
        ((f"{checkout}/cancel", "post"), "/cancel"),
    ):
        written = document["paths"][path][method]
        assert written["requestBody"] == next(iter(expected["paths"][name].values()))["requestBody"], path
        assert [p["name"] for p in written["parameters"]] == ["checkout_id", "BCP-Agent", "Idempotency-Key"]
    assert len(expected["components"]["schemas"]) > 3  # the three models and those they refer to
    for model, schema in expected["components"]["schemas"].items():
        assert document["components"]["schemas"][model] == schema, model


def test_the_buyers_preferred_payment_handler_comes_first_and_is_open_on_the_buyers_page_bcp_pay_08(
    client: Client, fake_platform: FakePlatform, settings: Any
) -> None:
    """`context.payment` names the buyer's preferred handlers, most preferred first (UCP `context.json`: the
    business SHOULD use it to preselect or prioritize; unrecognized values ignored without error). The handlers
    come in that order, and the page the `continue_url` opens has that method open; entries the shop does not
    know change nothing."""
    settings.BCP_PIX_SANDBOX = True
    catalog()
    headers = agent(fake_platform.publish(handlers=fake_platform.with_card()))
    preference = [
        {"handler": "br.dev.unknown.wallet"},
        "not an object",
        {"handler": "com.google.pay", "types": ["card"]},
    ]
    body = {
        "line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}],
        "context": {"postal_code": "01310-100", "payment": preference},
    }

    preferred = create(client, headers, body)
    plain = create(client, headers, {**body, "context": {"postal_code": "01310-100"}}).json()

    assert preferred.status_code == 201
    checkout = preferred.json()
    assert list(checkout["ucp"]["payment_handlers"]) == ["com.google.pay", "br.dev.bcp.pix"]
    assert list(plain["ucp"]["payment_handlers"]) == ["br.dev.bcp.pix", "com.google.pay"]
    assert "messages" not in checkout or not [m for m in checkout["messages"] if "payment" in m.get("path", "")]
    # the preference as understood (unknown entries dropped), so a full-replacement update can send it back
    assert checkout["context"] == {"postal_code": "01310-100", "payment": [{"handler": "com.google.pay"}]}
    assert plain["context"] == {"postal_code": "01310-100"}
    # the buyer's page opens on the card (the Pix panel stays one tap away)
    page = client.get(checkout["continue_url"].removeprefix("https://loja.example.com.br")).content.decode()
    assert re.search(r'value="card"[^>]*checked', page)
    assert not re.search(r'value="pix"[^>]*checked', page)
    other = client.get(plain["continue_url"].removeprefix("https://loja.example.com.br")).content.decode()
    assert re.search(r'value="pix"[^>]*checked', other)


def test_a_completed_checkout_has_its_order_and_never_changes_bcp_chk_03_chk_09_chk_11(
    client: Client, headers: dict[str, str], django_capture_on_commit_callbacks: Any
) -> None:
    """BCP-CHK-03 (six statuses, moves per §4.2, `completed` never changes), BCP-CHK-09 (`continue_url` in every
    non-terminal answer, none in terminal ones), BCP-CHK-11 (async → `complete_in_progress` without `order`;
    `completed` always with `order{id, permalink_url}`), as an agent sees them over REST."""
    statuses = []
    created = create(client, headers).json()
    statuses.append(created["status"])
    ready = ready_checkout(client, headers)
    statuses.append(ready["status"])
    in_progress = complete(client, ready["id"], headers).json()
    statuses.append(in_progress["status"])
    for body in (created, ready, in_progress):
        assert body["continue_url"].startswith("https://loja.example.com.br/checkout/" + body["id"])
        assert "order" not in body
    with django_capture_on_commit_callbacks(execute=True):
        sandbox.pay(txid=ready["payment"]["instruments"][0]["pix"]["txid"], options=sandbox.PayOptions())
    path = f"/checkout-sessions/{ready['id']}"
    completed = call(client, "get", path, headers).json()
    statuses.append(completed["status"])
    assert statuses == ["incomplete", "ready_for_complete", "complete_in_progress", "completed"]
    assert set(completed["order"]) == {"id", "permalink_url"} and "continue_url" not in completed

    refused = [
        call(client, "put", path, headers, full_update(ready)).json(),
        complete(client, ready["id"], headers, key="k-complete-again").json(),
        call(client, "post", f"{path}/cancel", {**headers, "Idempotency-Key": "k-cancel-done"}, {}).json(),
    ]
    for body in refused:
        assert (body["status"], body["order"]) == ("completed", completed["order"])
        assert "continue_url" not in body
        assert (body["messages"][-1]["code"], body["messages"][-1]["severity"]) == (
            "invalid_checkout_status",
            "unrecoverable",
        )
    assert call(client, "get", path, headers).json() == completed


def test_complete_needs_ready_for_complete_and_exactly_one_instrument_bcp_chk_10(
    client: Client, headers: dict[str, str]
) -> None:
    """BCP-CHK-10: complete from `incomplete` answers the errors that block it; from `ready_for_complete` with zero
    or two instruments it answers `payment_failed` at `$.payment.instruments`; no order either way."""
    from orders.models import Order

    created = create(client, headers).json()
    early = complete(client, created["id"], headers, key="k-early").json()
    assert early["status"] == "incomplete"
    assert ("field_required", "recoverable") in [(m["code"], m["severity"]) for m in early["messages"]]
    ready = ready_checkout(client, headers)
    for n, instruments in enumerate(([], [PIX, {**PIX, "id": "instr_2"}])):
        body = call(
            client,
            "post",
            f"/checkout-sessions/{ready['id']}/complete",
            {**headers, "Idempotency-Key": f"k-instruments-{n}"},
            {"payment": {"instruments": instruments}},
        ).json()
        assert body["status"] not in ("complete_in_progress", "completed") and "order" not in body
        assert [(m["code"], m["severity"], m["path"]) for m in body["messages"] if m["type"] == "error"] == [
            ("payment_failed", "recoverable", "$.payment.instruments")
        ]
    assert not Order.objects.exists()
    assert Checkout.objects.get(public_id=ready["id"]).status == "ready_for_complete"


def test_update_from_ready_clears_every_omitted_writable_field_bcp_chk_06(
    client: Client, headers: dict[str, str]
) -> None:
    """BCP-CHK-06 from a ready checkout: an update with only the lines clears buyer, fulfillment choice and
    payment (full replacement), and the checkout is `incomplete` again."""
    ready = ready_checkout(client, headers)
    line = ready["line_items"][0]
    body = call(
        client,
        "put",
        f"/checkout-sessions/{ready['id']}",
        headers,
        {"line_items": [{"id": line["id"], "item": {"id": "SKU-CAFE-500G"}, "quantity": 2}]},
    ).json()
    assert body["status"] == "incomplete"
    assert "buyer" not in body and "payment" not in body
    assert body["fulfillment"]["methods"] == []
    assert body["totals"] == [{"type": "subtotal", "amount": 8580}, {"type": "total", "amount": 8580}]


def test_the_same_state_and_input_give_the_same_answer_bcp_chk_23(client: Client, headers: dict[str, str]) -> None:
    """BCP-CHK-23: deterministic logic; the same full update sent three times answers the same checkout."""
    ready = ready_checkout(client, headers)
    body = full_update(ready)
    answers = [call(client, "put", f"/checkout-sessions/{ready['id']}", headers, body).json() for _ in range(3)]
    assert answers[0] == answers[1] == answers[2]
    assert answers[0]["status"] == "ready_for_complete"


def test_money_stays_integer_centavos_within_2_53_bcp_chk_17(client: Client, headers: dict[str, str]) -> None:
    """BCP-CHK-17: the largest quantity JSON carries exactly (2^53 − 1) of a made-to-order item is capped and said
    (integer centavos, exact); one more is refused as invalid input, and nothing is created."""
    variant = make_variant("SKU-ENCOMENDA", price=999999, stock=0, title="Mesa sob encomenda")
    variant.allow_backorder = True
    variant.save()
    largest = create(client, headers, {"line_items": [{"item": {"id": "SKU-ENCOMENDA"}, "quantity": 2**53 - 1}]})
    body = largest.json()
    quantity = body["line_items"][0]["quantity"]
    assert largest.status_code == 201 and quantity < 2**53 - 1
    assert body["line_items"][0]["totals"][-1] == {"type": "total", "amount": 999999 * quantity}
    assert all(isinstance(t["amount"], int) and abs(t["amount"]) <= 2**53 - 1 for t in body["totals"])
    assert ("quantity_adjusted", "$.line_items[0].quantity") in [(m["code"], m.get("path")) for m in body["messages"]]
    beyond = create(client, headers, {"line_items": [{"item": {"id": "SKU-ENCOMENDA"}, "quantity": 2**53}]})
    assert (beyond.status_code, beyond.json()["code"]) == (400, "invalid_request")
    assert Checkout.objects.count() == 1


def test_a_new_checkout_expires_six_hours_after_creation_bcp_chk_15(client: Client, headers: dict[str, str]) -> None:
    """BCP-CHK-15: `expires_at` on every non-terminal checkout, by default creation + 6 h (RFC 3339 UTC)."""
    before = timezone.now().replace(microsecond=0)
    body = create(client, headers).json()
    after = timezone.now()
    expires = datetime.fromisoformat(body["expires_at"].replace("Z", "+00:00"))
    assert body["expires_at"].endswith("Z")
    assert before + timedelta(hours=6) <= expires <= after + timedelta(hours=6)


def test_discount_codes_replace_clear_and_echo_case_insensitively_bcp_dsc_01_dsc_03(
    client: Client, headers: dict[str, str]
) -> None:
    """BCP-DSC-01: `codes` replace the earlier ones, are matched case-insensitively and echoed as sent; omitted
    or `[]` clears them. BCP-DSC-03: a rejected code stays in `codes`, is not applied, and a `discount_code_*`
    warning points at `$.discounts.codes[i]`."""
    make_coupon("BEMVINDO10", percent=10)
    created = create(
        client,
        headers,
        {
            "line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 2}],
            "discounts": {"codes": ["nada", "bemvindo10"]},
        },
    ).json()
    path = f"/checkout-sessions/{created['id']}"
    lines = [{"id": created["line_items"][0]["id"], "item": {"id": "SKU-CAFE-500G"}, "quantity": 2}]

    def update(discounts: dict[str, Any] | None) -> dict[str, Any]:
        body: dict[str, Any] = {"line_items": lines}
        if discounts is not None:
            body["discounts"] = discounts
        return call(client, "put", path, headers, body).json()

    assert created["discounts"]["codes"] == ["nada", "bemvindo10"]
    assert [a["code"] for a in created["discounts"]["applied"]] == ["BEMVINDO10"]
    assert [(m["code"], m["path"]) for m in created["messages"] if m["type"] == "warning"] == [
        ("discount_code_invalid", "$.discounts.codes[0]")
    ]
    replaced = update({"codes": ["BemVindo10"]})
    assert (replaced["discounts"]["codes"], [a["code"] for a in replaced["discounts"]["applied"]]) == (
        ["BemVindo10"],
        ["BEMVINDO10"],
    )
    assert not [m for m in replaced["messages"] if m["type"] == "warning"]
    for cleared in (update({"codes": []}), update(None)):
        assert cleared["discounts"] == {"codes": [], "applied": []}
        assert [t["type"] for t in cleared["totals"]] == ["subtotal", "total"]


def test_eligibility_claims_the_shop_does_not_verify_change_nothing_bcp_dsc_05(
    client: Client, headers: dict[str, str]
) -> None:
    """BCP-DSC-05: the shop grants no price effect for `context.eligibility` claims, so none is provisional and
    none can be unresolved at completion: the claim is ignored (BCP §4.1) and the checkout completes as without."""
    ready = ready_checkout(client, headers)
    body = {**full_update(ready), "context": {"eligibility": ["br.dev.bcp.estudante", "com.example.loyalty_gold"]}}
    claimed = call(client, "put", f"/checkout-sessions/{ready['id']}", headers, body).json()
    assert claimed["status"] == "ready_for_complete"
    assert claimed["totals"] == ready["totals"] and claimed["discounts"] == {"codes": [], "applied": []}
    assert "messages" not in claimed
    assert complete(client, ready["id"], headers).json()["status"] == "complete_in_progress"


def test_the_cancel_answer_shows_no_payable_pix_charge_bcp_chk_14(client: Client, headers: dict[str, str]) -> None:
    """PIX.md §2.4: a canceled checkout's charge is revoked. The revoke runs after the cancel commits, and the
    cancel's own answer showed the charge still `active` with its BR Code: an agent relaying it could have had the
    buyer pay a canceled checkout. Now neither the answer nor a later read shows a payable charge."""
    checkout = ready_checkout(client, headers)
    br_code = checkout["payment"]["instruments"][0]["pix"]["br_code"]
    path = f"/checkout-sessions/{checkout['id']}"

    canceled = call(client, "post", f"{path}/cancel", {**headers, "Idempotency-Key": "k-cancel-pix"}, {})

    assert canceled.json()["status"] == "canceled"
    for body in (canceled.content, call(client, "get", path, headers).content):
        assert br_code.encode() not in body and b'"active"' not in body


def test_a_purchases_checkout_routes_go_past_ninja_and_answer_as_they_did(
    client: Client, headers: dict[str, str]
) -> None:
    """Issue 34: Get, Update and Complete Checkout resolve to their views directly, not through ninja's operations
    (a throwaway response and a path model per call), as Get Order does; every answer is the one ninja's route
    gave: the checkout, ninja's 405 for another method, the unknown-path 404 for a trailing slash, a control
    character in the id refused (BCP-CHK-13's not_found for an unknown one), a non-JSON body after the headers."""
    checkout = ready_checkout(client, headers)
    path = f"/bcp/v1/checkout-sessions/{checkout['id']}"
    assert resolve(path).func.__name__ == "checkout_direct"
    assert resolve(f"{path}/complete").func.__name__ == "complete_direct"
    assert resolve(f"{path}/cancel").func.__name__ not in ("checkout_direct", "complete_direct")
    got = client.get(path, headers=headers)
    assert got.status_code == 200 and got.json()["status"] == "ready_for_complete"
    assert got["Content-Type"] == "application/json; charset=utf-8"
    for refused in (client.post(path, headers=headers), client.delete(path, headers=headers)):
        assert (refused.status_code, refused.json()["code"]) == (405, "method_not_allowed")
        assert set(refused["Allow"].split(", ")) == {"GET", "PUT"}
    refused = client.get(f"{path}/complete", headers=headers)
    assert (refused.status_code, refused["Allow"], refused.json()["code"]) == (405, "POST", "method_not_allowed")
    for slash in (client.get(f"{path}/", headers=headers), client.post(f"{path}/complete/", headers=headers)):
        assert (slash.status_code, slash.json()["code"]) == (404, "not_found")
    control = client.get("/bcp/v1/checkout-sessions/chk%01x", headers=headers)
    assert (control.status_code, control.json()["code"]) == (400, "invalid_request")
    unknown = call(client, "put", "/checkout-sessions/chk_nao_existe", headers, {"buyer": 1})
    assert [m["code"] for m in unknown.json()["messages"]] == ["not_found"]
    no_key = client.post(f"{path}/complete", data="{", content_type="application/json", headers=headers)
    assert (no_key.status_code, no_key.json()["code"]) == (400, "idempotency_key_required")
    done = complete(client, checkout["id"], headers)
    assert done.status_code == 200 and done.json()["id"] == checkout["id"]
    assert done["Signature"] and done["Content-Digest"]  # the complete's answer is still signed (BCP-SIG-06)
