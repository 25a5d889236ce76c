"""What a QA walk as a plain UCP agent found on the UCP face (`/ucp/v1`), each fixed at the root in
bcp_app/protocol/ucp.py / bcp_app/transports/ucp_rest.py / bcp_app/service/negotiation.py:

* D1: Create/Update read `payment` (2026-01-11: `selected_instrument_id` + `instruments`, `payment_update_req.json`
  at the tag), so the engine prices Pix (the Pix discount) and card installments at update, and one Complete
  completes, as over BCP (BCP-PAY-01, BCP-DSC-04, BCP-CHK-04).
* D2: an oversized body is JSON `request_too_large`, as on BCP REST (BCP-ERR-05), not Django's HTML 400 page.
* D3: an unknown checkout or order is 404 (checkout-rest.md "Status Codes" at v2026-01-11: "404 Not Found — The
  requested resource could not be found"); a protocol error carries `ucp` (overview.md "Negotiation": "Businesses
  MUST include the `ucp` field in every response").
* D4: header errors name `UCP-Agent`, profile errors the platform's own names and paths (BCP-NEG-01).
* D5: Complete's errors name `payment_data`, the member the agent sent.
* D6: adjustments in 2026-01-11's `types/adjustment.json` shape (`amount` ≥ 0, no `totals`).
Responses are parsed with the official UCP SDK's 2026-01-11 models where they have one.
"""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from ucp_sdk.models.schemas.shopping import fulfillment_resp
from ucp_sdk.models.schemas.shopping.order import Order
from ucp_sdk.models.schemas.shopping.payment_resp import PaymentResponse
from ucp_sdk.models.schemas.shopping.types.adjustment import Adjustment

from bcp_app.protocol import ucp
from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.schemas.order_actions import RequestReturnRequest
from bcp_app.protocol.validation import validate
from bcp_app.service.platforms import platform_create
from orders.models import Order as OrderRow
from orders.services import order_cancel
from payments.installments import InstallmentPolicy, plan_for
from payments.models import CardPayment
from payments.sandbox import services as sandbox
from payments.tasks import reconcile_card_payments
from shop.models import StoreSettings
from tests.bcp_app import test_ucp_face
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.rest_helpers import SP, catalog
from tests.bcp_app.test_ucp_face import V, pac_chosen, post, put, ucp_profile
from tests.payments.fake_pagarme import FakePagarmeServer, webhook_authorization

ucp_headers = test_ucp_face.ucp_headers  # the fixture: a registered UCP 2026-01-11 platform with Google Pay

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]
fulfillment_resp.Checkout.model_rebuild(_types_namespace={"PaymentResponse": PaymentResponse})

BUYER = {"email": "ana@example.com.br", "first_name": "Ana", "last_name": "Souza"}
LINE = {"item": {"id": "SKU-CAFE-500G"}, "quantity": 2}  # 2 × R$ 42,90 = R$ 85,80
PIX_INSTRUMENT = {"id": "instr_pix", "handler_id": "pix_recebedor_001", "type": "pix"}
CARD_INSTRUMENT = {"id": "instr_card", "handler_id": "gpay", "type": "card", "brand": "Visa", "last_digits": "1234"}
TOKEN = {"type": "PAYMENT_GATEWAY", "token": "success_token"}


def pix_handler() -> dict[str, Any]:
    """Our Pix handler as a 2026-01-11 platform lists it (`payment.handlers[]`, `payment_handler.json`)."""
    return {
        "id": "pix",
        "name": "br.dev.bcp.pix",
        "version": "2026-07-28",
        "spec": "https://bcp.dev.br/draft/specification/payment/pix",
        "config_schema": "https://bcp.dev.br/draft/schemas/payment/pix.json",
        "instrument_schemas": [],
        "config": {},
    }


@pytest.fixture
def pix_headers(fake_platform: FakePlatform, settings: Any) -> dict[str, str]:
    """A UCP 2026-01-11 platform that lists our Pix handler, in a shop with a 5 % Pix discount."""
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()
    StoreSettings.objects.create(pix_discount_percent=Decimal("5.00"))
    profile = ucp_profile(fake_platform)
    profile["payment"]["handlers"].append(pix_handler())
    url = fake_platform.serve_json("/ucp-pix.json", profile)
    platform = platform_create(name="UCP Pix", profile_url=url)
    return {"UCP-Agent": f'profile="{url}"', "Authorization": f"Bearer {platform.api_key}"}


def addressed(client: Client, headers: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """create → update with the SP address → the state with PAC chosen (no instrument yet)."""
    created = post(client, "/checkout-sessions", headers, {"line_items": [LINE], "buyer": BUYER}, key="w-create")
    assert created.status_code == 201, created.content
    body = created.json()
    state: dict[str, Any] = {
        "line_items": [{**LINE, "id": body["line_items"][0]["id"]}],
        "buyer": BUYER,
        "fulfillment": {"methods": [{"type": "shipping", "destinations": [SP]}]},
    }
    method = put(client, f"/checkout-sessions/{body['id']}", headers, state).json()["fulfillment"]["methods"][0]
    state["fulfillment"]["methods"][0] = pac_chosen(method, SP)
    return body["id"], state


# --- D1: payment on Create/Update ------------------------------------------------------------------------------


def test_choosing_pix_at_update_prices_the_pix_discount_and_one_complete_completes(
    client: Client, pix_headers: dict[str, str], django_capture_on_commit_callbacks: Any
) -> None:
    checkout_id, state = addressed(client, pix_headers)
    # when the agent chooses Pix as 2026-01-11 says: the instrument and the id of the selected one
    state["payment"] = {"selected_instrument_id": "instr_pix", "instruments": [PIX_INSTRUMENT]}
    answer = put(client, f"/checkout-sessions/{checkout_id}", pix_headers, state)
    ready = fulfillment_resp.Checkout(**answer.json())
    # then the 5 % Pix discount is in the totals (R$ 85,80 − 4,29 + PAC 18,90), the choice is echoed and the charge
    # for that total is our extension member of `payment`
    assert ready.status == "ready_for_complete", answer.json().get("messages")
    assert [(t.type, t.amount) for t in ready.totals] == [
        ("subtotal", 8580),
        ("discount", 429),
        ("fulfillment", 1890),
        ("total", 10041),
    ]
    assert ready.payment.selected_instrument_id == "instr_pix"
    charge = answer.json()["payment"]["br.dev.bcp.pix"]["pix"]
    assert (charge["amount"], charge["status"]) == (10041, "active")
    # an agent that writes our answer's `payment` back keeps the choice (the charge is not replaced)
    echoed = put(
        client, f"/checkout-sessions/{checkout_id}", pix_headers, {**state, "payment": answer.json()["payment"]}
    )
    assert echoed.json()["totals"][-1] == {"type": "total", "amount": 10041}
    assert echoed.json()["payment"]["br.dev.bcp.pix"]["pix"]["txid"] == charge["txid"]
    # when it completes with Pix once
    done = post(client, f"/checkout-sessions/{checkout_id}/complete", pix_headers,
                {"payment_data": PIX_INSTRUMENT}, key="w-complete").json()  # fmt: skip
    # then the first complete is the Pix charge awaiting payment, not a replaced charge to complete again
    assert done["status"] == "complete_in_progress", done.get("messages")
    assert not [m for m in done.get("messages") or [] if m.get("type") == "error"]
    assert done["payment"]["br.dev.bcp.pix"]["pix"]["txid"] == charge["txid"]
    with django_capture_on_commit_callbacks(execute=True):
        sandbox.pay(txid=charge["txid"], options=sandbox.PayOptions())
    order = OrderRow.objects.get(checkout_id=checkout_id)
    assert (order.total_amount, order.paid_amount) == (10041, 10041)


def test_choosing_card_installments_at_update_adds_the_interest_and_one_complete_completes(
    client: Client, ucp_headers: dict[str, str]
) -> None:
    StoreSettings.objects.create(card_interest_free_installments=3, card_monthly_interest_bp=199)
    checkout_id, state = addressed(client, ucp_headers)
    # when the agent chooses the card in 6 installments at update
    state["payment"] = {
        "selected_instrument_id": "instr_card",
        "instruments": [{**CARD_INSTRUMENT, "installments": 6}],
    }
    answer = put(client, f"/checkout-sessions/{checkout_id}", ucp_headers, state).json()
    ready = fulfillment_resp.Checkout(**answer)
    # then the interest above the 3 interest-free installments is a fee and the total is the card charge
    plan = plan_for(8580 + 1890, 6, InstallmentPolicy(12, 3, 199, 500))
    assert ready.status == "ready_for_complete", answer.get("messages")
    assert [(t.type, t.amount) for t in ready.totals] == [
        ("subtotal", 8580),
        ("fulfillment", 1890),
        ("fee", plan.interest),
        ("total", plan.total),
    ]
    assert ready.payment.selected_instrument_id == "instr_card"
    # when it completes with the same card once, then the order is placed for that total in 6 installments
    card = {**CARD_INSTRUMENT, "installments": 6, "credential": TOKEN}
    done = post(client, f"/checkout-sessions/{checkout_id}/complete", ucp_headers, {"payment_data": card}, key="w-6x")
    assert done.json()["status"] == "completed", done.json().get("messages")
    order = OrderRow.objects.get(checkout_id=checkout_id)
    assert (order.installments, order.paid_amount, order.total_amount) == (6, plan.total, plan.total)


def test_a_selected_instrument_id_naming_no_instrument_chooses_none_and_says_so(
    client: Client, ucp_headers: dict[str, str]
) -> None:
    checkout_id, state = addressed(client, ucp_headers)
    # the conformance suite's Create sends this (selected_instrument_id "instr_1", no instruments) and `USD`
    state["payment"] = {"selected_instrument_id": "instr_nope", "instruments": [CARD_INSTRUMENT]}
    state["currency"] = "USD"
    answer = put(client, f"/checkout-sessions/{checkout_id}", ucp_headers, state)
    assert answer.status_code == 200
    body = fulfillment_resp.Checkout(**answer.json())
    assert body.payment.selected_instrument_id is None  # not the card listed first
    assert body.currency == "BRL"
    warnings = [m for m in answer.json()["messages"] if m["type"] == "warning"]
    assert [(m["code"], m["path"]) for m in warnings] == [
        ("currency_unsupported", "$.currency"),
        ("instrument_not_found", "$.payment.selected_instrument_id"),
    ]
    assert warnings[0]["content"] == (
        "Moeda 'USD' não aceita em currency: esta loja vende só em reais (BRL); os valores estão em centavos de real."
    )
    assert warnings[1]["content"] == (
        "'instr_nope' não é o id de nenhum instrumento de payment.instruments: nenhum instrumento foi escolhido."
    )


def test_payment_maps_both_versions_shapes() -> None:
    # 2026-01-11: the id names the selected instrument; display members (brand, last_digits) are not BCP input
    assert ucp.checkout_request_to_bcp(
        {"line_items": [], "payment": {"selected_instrument_id": "b", "instruments": [
            {**CARD_INSTRUMENT, "id": "a"}, {**PIX_INSTRUMENT, "id": "b"}], "handlers": []}}
    )["payment"] == {"instruments": [
        {"id": "a", "handler_id": "gpay", "type": "card", "selected": False},
        {"id": "b", "handler_id": "pix_recebedor_001", "type": "pix", "selected": True},
    ]}  # fmt: skip
    # 2026-08-25 (BCP's shape): each instrument says `selected`
    assert ucp.checkout_request_to_bcp({"payment": {"instruments": [{**PIX_INSTRUMENT, "selected": True}]}}) == {
        "payment": {"instruments": [{**PIX_INSTRUMENT, "selected": True}]}
    }


def test_a_2026_08_25_platform_chooses_pix_at_update(
    client: Client, fake_platform: FakePlatform, settings: Any
) -> None:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()
    StoreSettings.objects.create(pix_discount_percent=Decimal("5.00"))
    late = "2026-08-25"
    cap = {"version": late, "spec": "https://ucp.dev/specification/checkout",
           "schema": "https://ucp.dev/schemas/shopping/checkout.json"}  # fmt: skip
    handler = {"id": "pix", "version": "2026-07-28", "spec": "https://bcp.dev.br/draft/specification/payment/pix",
               "schema": "https://bcp.dev.br/draft/schemas/payment/pix.json"}  # fmt: skip
    profile = {"ucp": {"version": late, "services": {}, "capabilities": {"dev.ucp.shopping.checkout": [cap]},
                       "payment_handlers": {"br.dev.bcp.pix": [handler]}}}  # fmt: skip
    headers = {"UCP-Agent": f'profile="{fake_platform.serve_json("/late-pix.json", profile)}"'}
    body = {"line_items": [LINE], "payment": {"instruments": [{**PIX_INSTRUMENT, "selected": True}]}}
    created = post(client, "/checkout-sessions", headers, body).json()
    # 2026-08-25's signed totals: the Pix discount of 5 % of R$ 85,80 is −429
    assert created["totals"] == [
        {"type": "subtotal", "amount": 8580},
        {"type": "discount", "display_text": "Desconto Pix (5%)", "amount": -429},
        {"type": "total", "amount": 8151},
    ]
    assert created["payment"]["instruments"][0]["id"] == "instr_pix"


# --- D2: oversized bodies --------------------------------------------------------------------------------------


def test_an_oversized_body_is_json_request_too_large(
    client: Client, ucp_headers: dict[str, str], settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 20_000
    big = {"line_items": [LINE], "attribution": {"x": "a" * 30_000}}
    for method, path in (
        (client.post, "/ucp/v1/checkout-sessions"),
        (client.put, "/ucp/v1/checkout-sessions/chk_x"),
        (client.post, "/ucp/v1/orders/order_x/cancel"),
    ):
        answer = method(path, data=json.dumps(big), content_type="application/json", headers=ucp_headers)
        assert answer.status_code == 400, path
        assert answer["Content-Type"].startswith("application/json"), path
        assert answer.json() == {
            "ucp": {"version": V, "capabilities": []},
            "code": "request_too_large",
            "content": "O corpo da requisição é grande demais.",
        }


# --- D3: 404 and the ucp member --------------------------------------------------------------------------------


def test_an_unknown_checkout_or_order_is_404_in_ucps_shape(client: Client, ucp_headers: dict[str, str]) -> None:
    for answer in (
        client.get("/ucp/v1/checkout-sessions/chk_unknown", headers=ucp_headers),
        put(client, "/ucp/v1/checkout-sessions/chk_unknown"[len("/ucp/v1") :], ucp_headers, {"line_items": [LINE]}),
        client.get("/ucp/v1/orders/order_unknown", headers=ucp_headers),
    ):
        assert answer.status_code == 404, answer.content
        body = answer.json()
        assert body["ucp"]["version"] == V
        assert [m["code"] for m in body["messages"]] == ["not_found"]


def test_an_order_read_refused_or_unknown_is_unrecoverable_as_on_bcp_bcp_ord_02_03(
    client: Client, ucp_headers: dict[str, str]
) -> None:
    """BCP-ORD-02/03, BCP §7: `unauthorized` and `not_found` are `unrecoverable` (QA walk: the UCP face said
    `requires_buyer_input`, a hand-off to a buyer who cannot fix it either). 2026-01-11 has no Error Response;
    UCP's, from 2026-04-08 on, has `unrecoverable` for "no valid resource exists to act on"."""
    anonymous = {"UCP-Agent": ucp_headers["UCP-Agent"]}  # no API key: no order may be read
    refused = client.get("/ucp/v1/orders/order_x", headers=anonymous).json()
    unknown = client.get("/ucp/v1/orders/order_unknown", headers=ucp_headers).json()
    checkout = client.get("/ucp/v1/checkout-sessions/chk_unknown", headers=ucp_headers).json()
    assert [(m["code"], m["severity"]) for m in refused["messages"]] == [("unauthorized", "unrecoverable")]
    assert [(m["code"], m["severity"]) for m in unknown["messages"]] == [("not_found", "unrecoverable")]
    assert [(m["code"], m["severity"]) for m in checkout["messages"]] == [("not_found", "unrecoverable")]
    assert refused["ucp"]["status"] == "error"


def test_a_protocol_error_carries_the_ucp_member(client: Client) -> None:
    answer = client.get("/ucp/v1/checkout-sessions/chk_x")
    assert answer.status_code == 400
    assert answer.json()["ucp"] == {"version": V, "capabilities": []}
    assert answer.json()["code"] == "invalid_profile_url"


# --- D4: header and profile errors in the face's names ---------------------------------------------------------


def test_header_errors_name_ucp_agent(client: Client, ucp_headers: dict[str, str], fake_platform: FakePlatform) -> None:
    def content(headers: dict[str, str]) -> str:
        answer = post(client, "/checkout-sessions", headers, {"line_items": [LINE]})
        assert answer.json()["ucp"]["version"] == V
        return str(answer.json()["content"])

    assert content({}) == 'O cabeçalho UCP-Agent com profile="https://…" é obrigatório.'
    assert content({"UCP-Agent": "profile=(((("}) == (
        'UCP-Agent não é um dicionário RFC 8941 válido: use profile="https://…".'
    )
    long_url = "https://plataforma.example/" + "p" * 2100
    assert content({"UCP-Agent": f'profile="{long_url}"'}) == (
        f"A URL do perfil da plataforma é longa demais: {len(long_url)} caracteres, o máximo é 2048."
    )
    other = fake_platform.serve_json("/other.json", ucp_profile(fake_platform))
    key_of_another = {**ucp_headers, "UCP-Agent": f'profile="{other}"'}
    assert content(key_of_another) == "Esta credencial não pode usar o perfil informado em UCP-Agent."
    # the BCP face still names its own header
    bcp = client.post("/bcp/v1/checkout-sessions", data="{}", content_type="application/json")
    assert "BCP-Agent" in bcp.json()["content"]


def test_a_malformed_ucp_profile_is_named_in_its_own_names_and_paths(
    client: Client, fake_platform: FakePlatform, settings: Any
) -> None:
    catalog()
    profile = ucp_profile(fake_platform)
    profile["ucp"]["capabilities"][3]["spec"] = 5  # dev.ucp.shopping.order
    url = fake_platform.serve_json("/bad-order.json", profile)
    body = post(client, "/checkout-sessions", {"UCP-Agent": f'profile="{url}"'}, {"line_items": [LINE]}).json()
    assert body["code"] == "profile_malformed"
    assert body["content"] == "Perfil da plataforma inválido em $.ucp.capabilities[3].spec: esperado um texto."
    # a 2026-08-25 map keeps the platform's key
    late = {"ucp": {"version": "2026-08-25", "services": {}, "payment_handlers": {},
                    "capabilities": {"dev.ucp.shopping.order": [{"version": "2026-08-25", "spec": 5}]}}}  # fmt: skip
    url = fake_platform.serve_json("/bad-late.json", late)
    body = post(client, "/checkout-sessions", {"UCP-Agent": f'profile="{url}"'}, {"line_items": [LINE]}).json()
    assert body["content"].startswith("Perfil da plataforma inválido em $.ucp.capabilities.dev.ucp.shopping.order[0]")


# --- D5: Complete's errors name payment_data -------------------------------------------------------------------


def test_complete_errors_name_payment_data(client: Client, ucp_headers: dict[str, str]) -> None:
    checkout_id, state = addressed(client, ucp_headers)
    put(client, f"/checkout-sessions/{checkout_id}", ucp_headers, state)
    wrong = post(client, f"/checkout-sessions/{checkout_id}/complete", ucp_headers, {"payment_data": "x"}, key="w-x")
    assert wrong.status_code == 400
    assert wrong.json()["content"].startswith("Campo inválido $.payment_data: ")
    declined = {**CARD_INSTRUMENT, "credential": {"type": "PAYMENT_GATEWAY", "token": "fail_token"}}
    answer = post(client, f"/checkout-sessions/{checkout_id}/complete", ucp_headers, {"payment_data": declined},
                  key="w-declined").json()  # fmt: skip
    errors = [m for m in answer["messages"] if m["type"] == "error"]
    assert errors and {m.get("path") for m in errors} == {"$.payment_data"}, errors
    assert not any("instruments" in m["content"] for m in errors)


# --- D6: adjustments in 2026-01-11's shape ---------------------------------------------------------------------


def test_order_adjustments_follow_2026_01_11_adjustment_json() -> None:
    refund = {"id": "adj_2", "type": "refund", "occurred_at": "2026-12-01T10:00:00Z", "status": "pending",
              "line_items": [{"id": "li_1", "quantity": -2}, {"id": "li_2", "quantity": 0}],
              "totals": [{"type": "total", "amount": -9962}], "description": "Cancelado"}  # fmt: skip
    canceled = {"id": "adj_1", "type": "cancellation", "occurred_at": "2026-12-01T10:00:00Z", "status": "completed",
                "line_items": [{"id": "li_1", "quantity": -2}], "totals": None}  # fmt: skip
    out = ucp.order_to_ucp({"ucp": {}, "adjustments": [canceled, refund]})["adjustments"]
    assert out == [
        {"id": "adj_1", "type": "cancellation", "occurred_at": "2026-12-01T10:00:00Z", "status": "completed",
         "line_items": [{"id": "li_1", "quantity": 2}]},
        {"id": "adj_2", "type": "refund", "occurred_at": "2026-12-01T10:00:00Z", "status": "pending",
         "line_items": [{"id": "li_1", "quantity": 2}], "description": "Cancelado", "amount": 9962},
    ]  # fmt: skip
    for item in out:
        Adjustment(**item)


def test_a_canceled_card_orders_adjustments_parse_as_2026_01_11(client: Client, ucp_headers: dict[str, str]) -> None:
    checkout_id, state = addressed(client, ucp_headers)
    put(client, f"/checkout-sessions/{checkout_id}", ucp_headers, state)
    card = {**CARD_INSTRUMENT, "credential": TOKEN}
    done = post(client, f"/checkout-sessions/{checkout_id}/complete", ucp_headers, {"payment_data": card}, key="w-c")
    order_id = done.json()["order"]["id"]
    order = OrderRow.objects.get(public_id=order_id)
    order_cancel(order_id=order.public_id, reason="Cliente desistiu", actor="staff")  # the admin's cancel
    body = client.get(f"/ucp/v1/orders/{order_id}", headers=ucp_headers).json()
    Order(**body)
    assert body["adjustments"], body
    assert all("totals" not in a for a in body["adjustments"])
    refunds = [a for a in body["adjustments"] if a["type"] == "refund"]
    assert refunds and all(a["amount"] == order.paid_amount for a in refunds)


# --- minor: discovery method, enum wording ---------------------------------------------------------------------


def test_posting_to_the_ucp_discovery_document_is_405_not_a_csrf_page() -> None:
    answer = Client(enforce_csrf_checks=True).post("/.well-known/ucp", data="{}", content_type="application/json")
    assert answer.status_code == 405
    assert answer["Allow"] == "GET, HEAD"
    assert b"CSRF" not in answer.content


def test_a_return_reason_code_outside_the_list_is_refused_in_portuguese() -> None:
    with pytest.raises(ProtocolError) as refused:
        validate(RequestReturnRequest, {"reason_code": "broken", "line_items": [{"id": "li_1", "quantity": 1}]})
    assert refused.value.content == (
        "Campo inválido $.reason_code: deve ser um destes: changed_mind, defective, damaged, wrong_item ou other"
    )


# --- the card used, listed in 2026-01-11's payment.instruments -------------------------------------------------


def test_a_charged_card_is_listed_with_the_gateways_brand_and_last_digits(
    client: Client, ucp_headers: dict[str, str]
) -> None:
    """2026-01-11's only instrument schema is the card (`types/card_payment_instrument.json`: `brand` and
    `last_digits` required); a card checkout listed none. Once charged, the card used is listed with the brand and
    last four digits the gateway gave (the sandbox: visa, 1111 for success_token), not what the agent claimed
    (Visa, 1234), never the number; BCP's own answer names them in the card instrument's `display`."""
    checkout_id, state = addressed(client, ucp_headers)
    chosen = {"selected_instrument_id": "instr_card", "instruments": [CARD_INSTRUMENT]}
    ready = put(client, f"/checkout-sessions/{checkout_id}", ucp_headers, {**state, "payment": chosen})
    assert "instruments" not in ready.json()["payment"]  # not charged yet: no brand nor digits to show
    assert ready.json()["payment"]["selected_instrument_id"] == "instr_card"
    card = {**CARD_INSTRUMENT, "credential": TOKEN}
    done = post(client, f"/checkout-sessions/{checkout_id}/complete", ucp_headers, {"payment_data": card}, key="w-k")
    read = client.get(f"/ucp/v1/checkout-sessions/{checkout_id}", headers=ucp_headers)
    bcp = client.get(f"/bcp/v1/checkout-sessions/{checkout_id}", headers=ucp_headers).json()

    listed = {"id": "instr_card", "handler_id": "gpay", "type": "card", "brand": "visa", "last_digits": "1111"}
    for answer in (done, read):
        body = answer.json()
        assert body["status"] == "completed"
        assert body["payment"]["instruments"] == [listed]
        assert body["payment"]["selected_instrument_id"] == "instr_card"
        instrument = fulfillment_resp.Checkout(**body).payment.instruments[0].root
        assert (instrument.brand, instrument.last_digits) == ("visa", "1111")
        assert "4111" not in answer.content.decode() and "success_token" not in answer.content.decode()
    assert bcp["payment"]["instruments"][0]["display"] == {
        "description": "Cartão à vista",
        "brand": "visa",
        "last_digits": "1111",
    }


@pytest.mark.parametrize("approval", ["webhook", "sweep"])
def test_a_card_approved_after_complete_is_listed_with_the_gateways_brand_and_last_digits(
    client: Client,
    ucp_headers: dict[str, str],
    pagarme: FakePagarmeServer,
    django_capture_on_commit_callbacks: Any,
    approval: str,
) -> None:
    """The same listing when complete could not hear the gateway (Pagar.me's adapter against its fake on loopback:
    the capture happens, every answer is lost) and the card is approved later, by the gateway's `charge.paid`
    webhook or by the pending sweep asking the gateway: the order is placed outside complete, so the brand and last
    digits come from the card payment the gateway's answer wrote, not from complete's instrument."""
    checkout_id, state = addressed(client, ucp_headers)
    chosen = {"selected_instrument_id": "instr_card", "instruments": [CARD_INSTRUMENT]}
    put(client, f"/checkout-sessions/{checkout_id}", ucp_headers, {**state, "payment": chosen})
    pagarme.state.die_after_capture = 3
    card = {**CARD_INSTRUMENT, "credential": {"type": "PAYMENT_GATEWAY", "token": "tok_approved"}}
    pending = post(client, f"/checkout-sessions/{checkout_id}/complete", ucp_headers, {"payment_data": card}, key="p")
    assert pending.json()["status"] == "complete_in_progress", pending.content

    with django_capture_on_commit_callbacks(execute=True):
        if approval == "webhook":
            charge_id = CardPayment.objects.get(reference=checkout_id).gateway_reference
            hook = client.post(
                "/payments/card/webhook",
                data=json.dumps(pagarme.webhook("charge.paid", charge_id)),
                content_type="application/json",
                HTTP_AUTHORIZATION=webhook_authorization(),
            )
            assert hook.status_code == 200, hook.content
        else:
            earlier = timezone.now() - timedelta(minutes=10)
            CardPayment.objects.filter(reference=checkout_id).update(updated_at=earlier)
            assert reconcile_card_payments() == 1  # the sweep asks the gateway by order code
    read = client.get(f"/ucp/v1/checkout-sessions/{checkout_id}", headers=ucp_headers)

    body = read.json()
    assert body["status"] == "completed", body
    assert body["payment"]["instruments"] == [
        {"id": "instr_card", "handler_id": "gpay", "type": "card", "brand": "Visa", "last_digits": "1111"}
    ]
    instrument = fulfillment_resp.Checkout(**body).payment.instruments[0].root
    assert (instrument.brand, instrument.last_digits) == ("Visa", "1111")
    assert "411111" not in read.content.decode() and "tok_approved" not in read.content.decode()
