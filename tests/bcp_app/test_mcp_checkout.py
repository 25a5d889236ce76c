"""BCP checkout, order and catalog tools over MCP (BCP §13.2) against a live uvicorn with the official
`mcp` client: a full agent purchase paid by Pix in the sandbox PSP, idempotent replays, errors.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from celery.signals import task_prerun

from orders.models import Order
from payments.models import CardPayment
from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.test_mcp_helpers import call, call_error, raw_post, tools_call
from tests.payments.fake_pagarme import FakePagarmeServer
from tests.shop.checkout_factories import make_shipping, make_variant

# Shared fixtures (pytest finds them by name in this module).
live_mcp = test_mcp_helpers.live_mcp

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]

SP = {
    "street_address": "Rua das Flores, 123",
    "extended_address": "Apto 45 - Jardim Paulista",
    "address_locality": "São Paulo",
    "address_region": "SP",
    "postal_code": "01310-100",
    "address_country": "BR",
}
PIX = {"id": "instr_1", "handler_id": "pix_recebedor_001", "type": "pix", "selected": True}


class Shopper:
    """An agent platform talking MCP: its profile (fake platform), API key and the live endpoint."""

    def __init__(self, url: str, profile_url: str, api_key: str) -> None:
        self.url = url
        self.profile_url = profile_url
        self.headers = {"Authorization": f"Bearer {api_key}"}

    def meta(self, key: str | None = None) -> dict[str, Any]:
        meta: dict[str, Any] = {"ucp-agent": {"profile": self.profile_url}}
        if key:
            meta["idempotency-key"] = key
        return meta

    def tool(self, name: str, key: str | None = None, **arguments: Any) -> dict[str, Any]:
        return call(self.url, name, {"meta": self.meta(key), **arguments}, headers=self.headers).structured_content

    def error(self, name: str, key: str | None = None, **arguments: Any) -> Any:
        return call_error(self.url, name, {"meta": self.meta(key), **arguments}, headers=self.headers)


@pytest.fixture
def shopper(live_mcp, fake_platform, bcp_settings, transactional_db) -> Iterator[Shopper]:
    from bcp_app.service.platforms import platform_create
    from config.celery import app as celery_app

    profile_url = fake_platform.publish()
    created = platform_create(name="Agente MCP", profile_url=profile_url)
    make_variant("SKU-CAFE-500G", price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    # Settlement runs as Celery tasks in-process; Celery keeps its own copy of the eager flag, which
    # worker e2e tests elsewhere in the suite may have left off.
    saved = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield Shopper(live_mcp.mcp_url, profile_url, created.api_key)
    celery_app.conf.task_always_eager = saved


def ready_state(checkout: dict[str, Any]) -> dict[str, Any]:
    """The writable state of a ready checkout as `ready_checkout` sent it (line items, buyer, fulfillment)."""
    method = checkout["fulfillment"]["methods"][0]
    destination = {k: v for k, v in method["destinations"][0].items() if k in (*SP, "id")}
    return {
        "line_items": [
            {"id": li["id"], "item": {"id": li["item"]["id"]}, "quantity": li["quantity"]}
            for li in checkout["line_items"]
        ],
        "buyer": {k: checkout["buyer"][k] for k in ("first_name", "last_name", "email")},
        "fulfillment": {
            "methods": [
                {
                    "id": method["id"],
                    "type": "shipping",
                    "destinations": [destination],
                    "selected_destination_id": method["selected_destination_id"],
                    "groups": [
                        {"id": g["id"], "selected_option_id": g["selected_option_id"]} for g in method["groups"]
                    ],
                }
            ]
        },
    }


def ready_checkout(shopper: Shopper) -> dict[str, Any]:
    """create → update (buyer, address) → update (destination, option, Pix): `ready_for_complete`."""
    created = shopper.tool(
        "create_checkout",
        checkout={
            "line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 2}],
            "buyer": {"email": "ana@example.com.br"},
        },
    )
    state = {
        "line_items": [{"id": created["line_items"][0]["id"], "item": {"id": "SKU-CAFE-500G"}, "quantity": 2}],
        "buyer": {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br"},
        "fulfillment": {"methods": [{"type": "shipping", "destinations": [dict(SP)]}]},
    }
    updated = shopper.tool("update_checkout", id=created["id"], checkout=state)
    method = updated["fulfillment"]["methods"][0]
    state["fulfillment"]["methods"][0].update(
        {
            "id": method["id"],
            "selected_destination_id": method["destinations"][0]["id"],
            "groups": [
                {"id": method["groups"][0]["id"], "selected_option_id": method["groups"][0]["options"][0]["id"]}
            ],
        }
    )
    state["fulfillment"]["methods"][0]["destinations"][0]["id"] = method["destinations"][0]["id"]
    state["payment"] = {"instruments": [PIX]}
    return shopper.tool("update_checkout", id=created["id"], checkout=state)


def test_full_agent_purchase_over_mcp_paid_by_pix_bcp_chk_01(shopper: Shopper) -> None:
    # given a shopper that found the coffee by searching the catalog
    from orders.services import order_ship
    from payments.sandbox import services as sandbox
    from payments.selectors import pix_charge_active_for_reference

    found = shopper.tool("search_catalog", catalog={"query": "café"})
    assert [p["title"] for p in found["products"]] == ["Café especial 500 g"]
    checkout = ready_checkout(shopper)
    assert checkout["status"] == "ready_for_complete"
    # when it completes with Pix (key required) and the buyer pays in the sandbox PSP
    key = str(uuid.uuid4())
    completing = shopper.tool(
        "complete_checkout", key=key, id=checkout["id"], checkout={"payment": {"instruments": [PIX]}}
    )
    assert completing["status"] == "complete_in_progress"
    charge = pix_charge_active_for_reference(checkout["id"])
    sandbox.pay(txid=charge.txid, options=sandbox.PayOptions())
    # then the checkout is completed with its order, and get_order shows the order
    completed = shopper.tool("get_checkout", id=checkout["id"])
    assert completed["status"] == "completed"
    order_id = completed["order"]["id"]
    order = shopper.tool("get_order", id=order_id)
    assert order["id"] == order_id
    assert order["checkout_id"] == checkout["id"]
    assert order["permalink_url"] == completed["order"]["permalink_url"]
    assert [(li["item"]["id"], li["quantity"]["total"], li["status"]) for li in order["line_items"]] == [
        ("SKU-CAFE-500G", 2, "processing")
    ]
    assert order["fulfillment"]["events"] == []
    # and later a shipment appears in get_order
    order_ship(order_id=order_id, tracking_number="BR123456785BR")
    shipped = shopper.tool("get_order", id=order_id)
    assert [(e["type"], e["tracking_number"]) for e in shipped["fulfillment"]["events"]] == [
        ("shipped", "BR123456785BR")
    ]


def test_delivery_options_over_mcp_say_the_stores_posting_time(shopper: Shopper) -> None:
    """Closing note 45, over MCP (the REST twin is in test_rest_checkout.py): with a "prazo de postagem" of 1 business
    day the options say the carrier's days count from the posting, as the buyer's checkout says, and the total."""
    from shop.store.services import store_row

    store = store_row()
    store.handling_days = 1
    store.save()
    checkout = ready_checkout(shopper)
    options = {
        o["id"]: o["description"]["plain"] for o in checkout["fulfillment"]["methods"][0]["groups"][0]["options"]
    }
    assert options["pac"] == (
        "Chega em 3 a 5 dias úteis após a postagem; a loja posta em até 1 dia útil após o pagamento "
        "(4 a 6 dias úteis desde o pagamento)"
    )


def test_complete_checkout_replay_returns_the_stored_response_bcp_idem_04(shopper: Shopper) -> None:
    # given a ready checkout completed once with a key
    from payments.models import PixCharge

    checkout = ready_checkout(shopper)
    key = str(uuid.uuid4())
    arguments = {"id": checkout["id"], "checkout": {"payment": {"instruments": [PIX]}}}
    first = shopper.tool("complete_checkout", key=key, **arguments)
    # when the same call is retried (new JSON-RPC id, same name + arguments)
    again = shopper.tool("complete_checkout", key=key, **arguments)
    # then the stored response comes back and nothing runs twice (one charge, BCP-PAY-05)
    assert again == first
    assert PixCharge.objects.filter(reference=checkout["id"]).count() == 1


CARD = {"id": "instr_card", "handler_id": "gpay", "type": "card", "selected": True}


def card_ready(shopper: Shopper, fake_platform: FakePlatform) -> dict[str, Any]:
    """A ready checkout paid by card (the platform lists the card handler, BCP-PAY-03)."""
    fake_platform.publish(handlers=fake_platform.with_card())
    checkout = ready_checkout(shopper)
    state = {**ready_state(checkout), "payment": {"instruments": [CARD]}}
    ready = shopper.tool("update_checkout", id=checkout["id"], checkout=state)
    assert ready["status"] == "ready_for_complete", ready["messages"]
    return ready


def card_complete(shopper: Shopper, checkout_id: str, key: str, token: str) -> httpx.Response:
    """`complete_checkout` by card as a raw JSON-RPC POST (the HTTP body's bytes are compared)."""
    instrument = {**CARD, "credential": {"type": "PAYMENT_GATEWAY", "token": token}}
    arguments = {"meta": shopper.meta(key), "id": checkout_id, "checkout": {"payment": {"instruments": [instrument]}}}
    return raw_post(shopper.url, tools_call("complete_checkout", arguments, request_id=9), headers=shopper.headers)


def test_a_card_complete_commits_its_stored_answer_with_the_order_bcp_idem_04(
    shopper: Shopper, fake_platform: FakePlatform
) -> None:
    """Issue 34, as over REST (tests/bcp_app/test_idempotency.py): the MCP tool's stored answer is written in the
    transaction that places the order, so when the order is committed (its outbox task runs right after that
    commit) the key is already `done` with the very text block the tool sends; the replay is those bytes."""
    from bcp_app.models import IdempotencyRecord

    ready = card_ready(shopper, fake_platform)
    key = str(uuid.uuid4())
    seen_at_commit: list[tuple[str, str | None]] = []

    def at_commit(**_: Any) -> None:  # the placed order's outbox task, run eagerly on the order's commit
        if not seen_at_commit:
            seen_at_commit.extend(IdempotencyRecord.objects.filter(key=key).values_list("state", "response_text"))

    task_prerun.connect(at_commit, weak=False)
    try:
        done = card_complete(shopper, ready["id"], key, "success_token")
    finally:
        task_prerun.disconnect(at_commit)
    result = done.json()["result"]
    assert result["structuredContent"]["status"] == "completed", result["structuredContent"]["messages"]
    assert seen_at_commit == [(IdempotencyRecord.State.DONE, result["content"][0]["text"])]
    again = card_complete(shopper, ready["id"], key, "success_token")
    assert again.content == done.content
    assert Order.objects.filter(checkout_id=ready["id"]).count() == 1


def test_card_completes_sent_side_by_side_over_mcp_charge_once_bcp_idem_06_pay_05(
    shopper: Shopper, fake_platform: FakePlatform, pagarme: FakePagarmeServer, settings: Any
) -> None:
    """While the gateway answers the first complete, the same call again is `idempotency_in_progress` and a
    complete under another key charges nothing (the checkout is `complete_in_progress`); the same call sent the
    moment the order commits (its outbox task runs, the first call not answered yet) is the stored answer, byte
    for byte what the first call gets (issue 34: before, the key was still `in_progress` then). One charge."""
    settings.PAGARME_TIMEOUT_SECONDS = 30  # the calls sent from the gateway's hook answer before the gateway does
    ready = card_ready(shopper, fake_platform)
    key = str(uuid.uuid4())
    meanwhile: dict[str, httpx.Response] = {}

    def while_charging() -> None:  # in the fake gateway, before it answers the first complete's charge
        meanwhile["same key"] = card_complete(shopper, ready["id"], key, "tok_approved")
        meanwhile["other key"] = card_complete(shopper, ready["id"], str(uuid.uuid4()), "tok_approved")

    def at_commit(**_: Any) -> None:  # the placed order's outbox task, run on the order's commit
        if "at commit" not in meanwhile:
            meanwhile["at commit"] = card_complete(shopper, ready["id"], key, "tok_approved")

    pagarme.state.after_create = while_charging
    task_prerun.connect(at_commit, weak=False)
    try:
        done = card_complete(shopper, ready["id"], key, "tok_approved")
    finally:
        task_prerun.disconnect(at_commit)
    assert done.json()["result"]["structuredContent"]["status"] == "completed", done.text
    assert meanwhile["same key"].json()["error"]["data"]["code"] == "idempotency_in_progress"
    other = meanwhile["other key"].json()["result"]["structuredContent"]
    assert other["status"] == "complete_in_progress", other
    assert meanwhile["at commit"].content == done.content
    assert card_complete(shopper, ready["id"], key, "tok_approved").content == done.content
    assert Order.objects.filter(checkout_id=ready["id"]).count() == 1
    assert CardPayment.objects.filter(reference=ready["id"]).count() == 1
    assert [path for method, path, _, _ in pagarme.state.requests if method == "POST"].count("/core/v5/orders") == 1


def test_a_product_renamed_by_the_merchant_before_complete_is_reported_not_ordered_bcp_chk_20(
    shopper: Shopper,
) -> None:
    """QA walk: the merchant renamed the product and the delivery option between the agent's last update and
    its complete, price and total unchanged; the order was placed as "PAC Mini" / "Café comum", names the
    buyer never saw. Now the complete answers the checkout with a `checkout_changed` warning at each changed
    node and no order; completing again (the agent has seen it) waits for the same Pix charge."""
    from orders.models import Order
    from payments.selectors import pix_charge_active_for_reference
    from shop.models import Product, ShippingMethod

    checkout = ready_checkout(shopper)
    charge = pix_charge_active_for_reference(checkout["id"])
    product = Product.objects.get(variants__sku="SKU-CAFE-500G")
    product.title = "Café comum 500 g"
    product.save()
    pac = ShippingMethod.objects.get(code="pac")
    pac.title = "PAC Mini"
    pac.save()
    arguments = {"id": checkout["id"], "checkout": {"payment": {"instruments": [PIX]}}}
    refused = shopper.tool("complete_checkout", key=str(uuid.uuid4()), **arguments)
    assert refused["status"] == "ready_for_complete"
    assert [(m["code"], m["path"]) for m in refused["messages"]] == [
        ("checkout_changed", "$.line_items[0].item.title"),
        ("checkout_changed", "$.fulfillment.methods[0].groups[0].options[0]"),
    ]
    assert refused["line_items"][0]["item"]["title"] == "Café comum 500 g"
    assert refused["fulfillment"]["methods"][0]["groups"][0]["options"][0]["title"] == "PAC Mini"
    assert not Order.objects.filter(checkout_id=checkout["id"]).exists()
    again = shopper.tool("complete_checkout", key=str(uuid.uuid4()), **arguments)
    assert again["status"] == "complete_in_progress"
    assert pix_charge_active_for_reference(checkout["id"]).txid == charge.txid


def test_complete_with_a_handler_the_profile_does_not_list_says_it_once_bcp_pay_03(shopper: Shopper) -> None:
    """QA walk: update and then complete with the card handler a Pix-only platform profile does not list
    answered two `payment_failed` messages at the same node ("não lista o meio de pagamento" and "não
    oferecido"). BCP-PAY-03 refuses it; now with one message, the one that names the handlers to use."""
    from orders.models import Order

    checkout = ready_checkout(shopper)
    card = {"id": "instr_c", "handler_id": "gpay", "type": "card", "credential": {"type": "PAYMENT_GATEWAY",
            "token": "success_token"}}  # fmt: skip
    state = ready_state(checkout)
    updated = shopper.tool("update_checkout", id=checkout["id"], checkout={**state, "payment": {"instruments": [card]}})
    assert [m["code"] for m in updated["messages"] if m["type"] == "error"].count("payment_failed") == 1
    refused = shopper.tool(
        "complete_checkout", key=str(uuid.uuid4()), id=checkout["id"], checkout={"payment": {"instruments": [card]}}
    )
    failed = [(m["path"], m["content"]) for m in refused["messages"] if m["code"] == "payment_failed"]
    assert failed == [
        (
            "$.payment.instruments[0].handler_id",
            "O perfil da plataforma não lista o meio de pagamento gpay; use um destes: pix_recebedor_001.",
        )
    ]
    assert refused["status"] == "incomplete"
    assert not Order.objects.filter(checkout_id=checkout["id"]).exists()


def test_complete_checkout_key_rules_bcp_idem_02_05(shopper: Shopper) -> None:
    # given
    checkout = ready_checkout(shopper)
    arguments = {"id": checkout["id"], "checkout": {"payment": {"instruments": [PIX]}}}
    key = str(uuid.uuid4())
    shopper.tool("complete_checkout", key=key, **arguments)
    # when without a key, and with the same key for another request
    missing = shopper.error("complete_checkout", **arguments)
    conflict = shopper.error(
        "complete_checkout",
        key=key,
        id=checkout["id"],
        checkout={"payment": {"instruments": [{**PIX, "id": "instr_2"}]}},
    )
    # then
    assert (missing.code, missing.data["code"]) == (-32602, "idempotency_key_required")
    assert (conflict.code, conflict.data["code"]) == (-32000, "idempotency_conflict")


def test_cancel_checkout_requires_a_key_and_cancels(shopper: Shopper) -> None:
    # given
    created = shopper.tool(
        "create_checkout", checkout={"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]}
    )
    # when
    missing = shopper.error("cancel_checkout", id=created["id"])
    # BCP-IDEM-02: no key is said before a bad body (here an unknown argument)
    missing_bad = shopper.error("complete_checkout", id=created["id"], checkout={"payment": 1})
    canceled = shopper.tool("cancel_checkout", key=str(uuid.uuid4()), id=created["id"])
    # then
    assert (missing.code, missing.data["code"]) == (-32602, "idempotency_key_required")
    assert (missing_bad.code, missing_bad.data["code"]) == (-32602, "idempotency_key_required")
    assert canceled["status"] == "canceled"
    assert "continue_url" not in canceled


def test_create_checkout_is_replayed_by_key_and_strict_on_arguments_bcp_mcp_05(shopper: Shopper) -> None:
    # given
    from shop.models import Checkout

    key = str(uuid.uuid4())
    body = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]}
    # when
    first = shopper.tool("create_checkout", key=key, checkout=body)
    again = shopper.tool("create_checkout", key=key, checkout=body)
    typo = shopper.error("create_checkout", chekout=body)
    wrong = shopper.error(
        "create_checkout", checkout={"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": "1"}]}
    )
    # then
    assert again == first
    assert Checkout.objects.count() == 1
    assert typo.code == -32602
    assert set(typo.data["fields"]) == {"$.chekout", "$.checkout"}
    assert wrong.code == -32602
    assert list(wrong.data["fields"]) == ["$.checkout.line_items[0].quantity"]


def test_update_checkout_ignores_an_id_inside_checkout_bcp_mcp_04(shopper: Shopper) -> None:
    # given two checkouts
    one = shopper.tool("create_checkout", checkout={"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]})
    two = shopper.tool("create_checkout", checkout={"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]})
    # when the update names `two` inside checkout but targets `one`
    updated = shopper.tool(
        "update_checkout",
        id=one["id"],
        checkout={
            "id": two["id"],
            "line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 3}],
        },
    )
    # then the target comes from the `id` argument
    assert updated["id"] == one["id"]
    assert updated["line_items"][0]["quantity"] == 3
    assert shopper.tool("get_checkout", id=two["id"])["line_items"][0]["quantity"] == 1


def test_get_checkout_unknown_is_an_error_response_bcp_chk_13(shopper: Shopper) -> None:
    # when
    body = shopper.tool("get_checkout", id="checkout_nope")
    # then a business outcome, not a JSON-RPC error
    assert body["ucp"]["status"] == "error"
    assert body["messages"][0]["code"] == "not_found"


def test_catalog_lookup_and_get_product_bcp_cat_02_05(shopper: Shopper) -> None:
    """BCP-CAT-02, BCP-CAT-03 (the unknown id leaves fewer products), BCP-CAT-04 (-32602 `request_too_large` above
    the limit) and BCP-CAT-05 over MCP."""
    # when
    lookup = shopper.tool("lookup_catalog", catalog={"ids": ["SKU-CAFE-500G", "nope"]})
    product = shopper.tool("get_product", catalog={"id": "SKU-CAFE-500G"})
    missing = shopper.tool("get_product", catalog={"id": "nope"})
    too_many = shopper.error("lookup_catalog", catalog={"ids": [f"id-{i}" for i in range(51)]})
    empty = shopper.error("search_catalog", catalog={})
    bad_cursor = shopper.error("search_catalog", catalog={"query": "café", "pagination": {"cursor": "zzz"}})
    # then
    assert [v["id"] for p in lookup["products"] for v in p["variants"]] == ["SKU-CAFE-500G"]
    assert product["product"]["variants"][0]["id"] == "SKU-CAFE-500G"
    assert missing["messages"][0]["code"] == "not_found"
    assert (too_many.code, too_many.data["code"]) == (-32602, "request_too_large")
    assert (empty.code, empty.data["code"]) == (-32602, "invalid_request")
    assert "catalog.query" in empty.message and "BCP-" not in empty.message  # the field, no spec id (BCP-CAT-01)
    # The field as a JSONPath in the tool's arguments, like every other invalid_request (README "Language").
    assert (bad_cursor.code, bad_cursor.message) == (
        -32602,
        "Campo inválido $.catalog.pagination.cursor: cursor desconhecido.",
    )


def test_an_unexpected_failure_is_32603_without_internals_and_changes_nothing_bcp_err_06(shopper: Shopper) -> None:
    """BCP-ERR-06 over MCP: the database refuses the checkout's write for a reason the shop did not foresee (a
    trigger stands in for any server fault); the agent gets -32603 with HTTP 500, no internals, nothing stored."""
    from django.db import connection

    from shop.models import Checkout

    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION err06_refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'segredo interno: /srv/app/settings.py'; END $$"
        )
        cursor.execute(
            "CREATE TRIGGER err06_refuse BEFORE INSERT ON shop_checkout FOR EACH ROW EXECUTE FUNCTION err06_refuse()"
        )
    try:
        arguments = {
            "meta": shopper.meta(),
            "checkout": {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]},
        }
        response = raw_post(shopper.url, tools_call("create_checkout", arguments), headers=shopper.headers)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER err06_refuse ON shop_checkout")
            cursor.execute("DROP FUNCTION err06_refuse()")
    assert response.status_code == 500
    error = response.json()["error"]
    assert error["code"] == -32603
    assert "segredo" not in response.text and "settings.py" not in response.text
    assert error["data"]["code"] == "internal_error"
    assert not Checkout.objects.exists()
