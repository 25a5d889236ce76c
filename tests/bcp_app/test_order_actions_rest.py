"""The br.dev.bcp.shopping.order_actions extension over REST (issue 35): Cancel Order and Request Return by the
order's platform, the staff steps after it, a signed full-order webhook per step (BCP §8), the Error Response of
BCP §5.3 in Portuguese for each refusal, idempotent replays (BCP §12) and fixed statement budgets.

BCP ids: BCP-NEG-06/08 (negotiation of the extension), BCP-ORD-02 (only the originating platform), BCP-ERR-01/02/05,
BCP-IDEM-02/03/04, BCP-WH-01..06.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from bcp_app.models import WebhookDelivery
from bcp_app.protocol.keys import public_jwk
from bcp_app.protocol.schemas.order_actions import CancelOrderRequest, RequestReturnRequest
from bcp_app.protocol.signatures import WEBHOOK_COMPONENTS, HttpMessage, verify_message
from bcp_app.service.platforms import NewPlatform, platform_create
from orders.models import Adjustment, Order, OutboxMessage, ReturnRequest
from orders.services import (
    fulfillment_event_create,
    order_ship,
    return_request_approve,
    return_request_receive,
    return_request_refund,
    return_request_refund_offline,
    return_request_refund_retry,
)
from payments.sandbox import services as sandbox
from tests.bcp_app.bcp_fixtures import VERSION, FakePlatform, agent
from tests.bcp_app.rest_helpers import call, catalog, complete, ready_checkout

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]
ORDER = "br.dev.bcp.shopping.order"
ACTIONS = "br.dev.bcp.shopping.order_actions"
SPEC, SCHEMA = "https://bcp.dev.br/draft/specification", "https://bcp.dev.br/draft/schemas"
SCHEMAS = Path(__file__).resolve().parents[2] / "bcp_app" / "jsonschemas"
WEBHOOK_PATH = "/webhooks/bcp/pedidos"
CAPS = {ORDER: [{"version": VERSION}], ACTIONS: [{"version": VERSION}]}


def schema_errors(document: Any) -> list[str]:
    resources = [
        (d["$id"], Resource.from_contents(d)) for d in (json.loads(p.read_text()) for p in SCHEMAS.rglob("*.json"))
    ]
    ref = f"{SCHEMA}/shopping/order_actions.json#/{ORDER}"
    validator = Draft202012Validator({"$ref": ref}, registry=Registry().with_resources(resources))
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def _profile(fake_platform: FakePlatform, *, actions: bool = True, path: str = "/perfil.json") -> str:
    caps = fake_platform.profile()["ucp"]["capabilities"]
    if actions:
        caps[ACTIONS] = [{"version": VERSION, "spec": f"{SPEC}/order-actions",
                          "schema": f"{SCHEMA}/shopping/order_actions.json", "extends": ORDER}]  # fmt: skip
    return fake_platform.publish(path, capabilities=caps)


@pytest.fixture
def platform(fake_platform: FakePlatform, settings: Any) -> NewPlatform:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()
    return platform_create(name="Agente", profile_url=_profile(fake_platform))


def _auth(fake_platform: FakePlatform, platform: NewPlatform, **extra: str) -> dict[str, str]:
    return agent(fake_platform.url("/perfil.json"), Authorization=f"Bearer {platform.api_key}", **extra)


def _paid_order(client: Client, headers: dict[str, str], capture: Any) -> Order:
    headers = {k: v for k, v in headers.items() if k != "Idempotency-Key"}  # the action's key is not the checkout's
    checkout = ready_checkout(client, headers)
    complete(client, checkout["id"], headers, key=f"complete-{checkout['id']}")
    with capture(execute=True):
        sandbox.pay(txid=checkout["payment"]["instruments"][0]["pix"]["txid"], options=sandbox.PayOptions())
    return Order.objects.get(checkout_id=checkout["id"])


def _delivered(order: Order, capture: Any) -> Order:
    with capture(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
        fulfillment_event_create(order_id=order.public_id, type="delivered")
    order.refresh_from_db()
    return order


def invalid(field: str, problem: str) -> dict[str, Any]:
    """The 400 body of a request with one invalid member (BCP §5.4, every member named in `fields`)."""
    return {"code": "invalid_request", "content": f"Campo inválido {field}: {problem}", "fields": {field: problem}}


def _hooks(fake_platform: FakePlatform) -> list[dict[str, Any]]:
    """Every webhook received, verified against our key (BCP-WH-03/04), as JSON."""
    bodies = []
    for received in fake_platform.received:
        if received.method == "POST" and received.path == WEBHOOK_PATH:
            message = HttpMessage(method="POST", authority=f"127.0.0.1:{fake_platform.port}", path=WEBHOOK_PATH,
                                  headers=received.headers)  # fmt: skip
            verify_message(message, received.body, [public_jwk()], required=WEBHOOK_COMPONENTS)
            bodies.append(json.loads(received.body))
    return bodies


def test_profile_advertises_the_extension_of_order(client: Client) -> None:
    capabilities = client.get("/.well-known/bcp").json()["ucp"]["capabilities"]
    assert capabilities[ACTIONS] == [
        {"version": VERSION, "spec": f"{SPEC}/order-actions", "schema": f"{SCHEMA}/shopping/order_actions.json",
         "extends": ORDER}
    ]  # fmt: skip


def test_cancel_before_shipping_refunds_everything_and_a_replay_changes_nothing(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    headers = _auth(fake_platform, platform, **{"Idempotency-Key": "6d0c1f5e-cancel-1"})
    order = _paid_order(client, headers, django_capture_on_commit_callbacks)
    # when the platform cancels it (and sends the same request again)
    with django_capture_on_commit_callbacks(execute=True):
        first = call(client, "post", f"/orders/{order.public_id}/cancel", headers, {"reason": "Cliente desistiu"})
    again = call(client, "post", f"/orders/{order.public_id}/cancel", headers, {"reason": "Cliente desistiu"})
    # then the order comes back canceled with the extension, once; the replay is the same bytes
    body = first.json()
    assert first.status_code == 200 and again.content == first.content
    assert body["ucp"]["capabilities"] == CAPS
    assert [line["status"] for line in body["line_items"]] == ["removed"]
    assert body["order_actions"]["cancel"] == {"available": False, "unavailable_reason": "order_canceled"}
    assert schema_errors(body) == []
    refunds = Adjustment.objects.filter(order=order, type="refund")
    assert [(-a.amount) for a in refunds] == [order.paid_amount]
    # and the platform got the canceled order as a signed webhook (BCP-WH-02: the full order after the change)
    canceled = _hooks(fake_platform)[-1]
    assert canceled["id"] == order.public_id and canceled["order_actions"]["cancel"]["available"] is False


def test_a_cancel_that_asks_for_its_refund_is_one_webhook_of_the_final_order_bcp_wh_02(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    headers = _auth(fake_platform, platform, **{"Idempotency-Key": "6d0c1f5e-cancel-one-hook"})
    order = _paid_order(client, headers, django_capture_on_commit_callbacks)
    earlier = set(WebhookDelivery.objects.values_list("pk", flat=True))
    received = len(_hooks(fake_platform))
    # when the platform cancels the paid order: one transaction cancels it and asks for the refund, but the sandbox
    # PSP's answer (the refund done) is not run yet
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        call(client, "post", f"/orders/{order.public_id}/cancel", headers, {"reason": "Cliente desistiu"})
    # then that change is one order_changed outbox row carrying every event of it and the final order
    [row] = OutboxMessage.objects.filter(kind="order_changed", payload__order_id=order.public_id,
                                         status="pending")  # fmt: skip
    assert (row.payload["event"], row.payload["events"]) == ("canceled", ["refund_requested", "canceled"])
    assert row.payload["snapshot"] == Order.objects.get(pk=order.pk).bcp_json
    # and once it is processed, the platform gets one webhook (BCP-WH-02: one full order per change, never two
    # copies of one change), showing the order canceled with its refund asked
    with django_capture_on_commit_callbacks(execute=True):  # and what those tasks leave for after their commit
        for callback in callbacks:
            callback()
    deliveries = WebhookDelivery.objects.exclude(pk__in=earlier).order_by("id")
    events = [delivery.event for delivery in deliveries]
    # the sandbox settles the refund when payments gets it: its completion is the next change, a webhook of its own
    assert events == ["canceled", "refunded"], events
    hooks = _hooks(fake_platform)[received:]
    assert len(hooks) == 2 and hooks[0] == json.loads(deliveries[0].body)
    assert [line["status"] for line in hooks[0]["line_items"]] == ["removed"]
    assert [(a["type"], a["status"]) for a in hooks[0]["adjustments"]] == [("cancellation", "completed"),
                                                                             ("refund", "pending")]  # fmt: skip
    assert [(a["type"], a["status"]) for a in hooks[1]["adjustments"]][-1] == ("refund", "completed")


def test_cancel_needs_an_idempotency_key(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    headers = _auth(fake_platform, platform)
    order = _paid_order(client, headers, django_capture_on_commit_callbacks)
    response = call(client, "post", f"/orders/{order.public_id}/cancel", headers, {})
    assert response.status_code == 400
    assert response.json() == {"code": "idempotency_key_required",
                                "content": "Idempotency-Key é obrigatório em cancel_order."}  # fmt: skip


def test_cancel_after_shipping_is_the_error_response_in_portuguese(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    headers = _auth(fake_platform, platform, **{"Idempotency-Key": "cancel-late"})
    order = _delivered(_paid_order(client, headers, django_capture_on_commit_callbacks),
                       django_capture_on_commit_callbacks)  # fmt: skip
    response = call(client, "post", f"/orders/{order.public_id}/cancel", headers, {})
    assert response.status_code == 200, response.content
    assert response.json() == {
        "ucp": {"version": VERSION, "status": "error", "capabilities": CAPS},
        "messages": [{"type": "error", "code": "already_shipped", "severity": "unrecoverable",
                      "content": f"O pedido #{order.number} já foi enviado e não pode mais ser cancelado: depois de "
                                 "recebê-lo, solicite a devolução."}],
    }  # fmt: skip
    order.refresh_from_db()
    assert order.status == "delivered" and not Adjustment.objects.filter(order=order).exists()


def test_without_the_extension_the_operations_are_incompatible_bcp_neg_06(
    client: Client, fake_platform: FakePlatform, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()
    plain = platform_create(name="Sem extensão", profile_url=_profile(fake_platform, actions=False, path="/p.json"))
    headers = agent(fake_platform.url("/p.json"), Authorization=f"Bearer {plain.api_key}", **{"Idempotency-Key": "k1"})
    order = _paid_order(client, headers, django_capture_on_commit_callbacks)
    body = call(client, "post", f"/orders/{order.public_id}/cancel", headers, {}).json()
    assert body["ucp"]["status"] == "error" and body["messages"][0]["code"] == "capabilities_incompatible"
    got = call(client, "get", f"/orders/{order.public_id}", headers).json()
    assert "order_actions" not in got and "return_requests" not in got  # BCP-NEG-08
    assert Order.objects.get(pk=order.pk).status == "placed"


def test_another_platform_cannot_act_on_the_order_bcp_ord_02(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    order = _paid_order(client, _auth(fake_platform, platform), django_capture_on_commit_callbacks)
    other = platform_create(name="Outra", profile_url=_profile(fake_platform, path="/outra.json"))
    headers = agent(fake_platform.url("/outra.json"), Authorization=f"Bearer {other.api_key}",
                    **{"Idempotency-Key": "k-outra"})  # fmt: skip
    body = call(client, "post", f"/orders/{order.public_id}/cancel", headers, {}).json()
    assert body["messages"][0]["code"] == "unauthorized"
    assert Order.objects.get(pk=order.pk).status == "placed"


def test_request_return_then_staff_steps_each_send_a_signed_webhook(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    headers = _auth(fake_platform, platform, **{"Idempotency-Key": "ret-1"})
    order = _delivered(_paid_order(client, headers, django_capture_on_commit_callbacks),
                       django_capture_on_commit_callbacks)  # fmt: skip
    line = order.lines.get()
    before = len(_hooks(fake_platform))
    request_body = {"reason_code": "defective", "reason": "Embalagem rasgada",
                    "line_items": [{"id": line.public_id, "quantity": 1}]}  # fmt: skip
    # when the platform asks to return one unit
    with django_capture_on_commit_callbacks(execute=True):
        response = call(client, "post", f"/orders/{order.public_id}/returns", headers, request_body)
    body = response.json()
    assert schema_errors(body) == []
    [asked] = body["return_requests"]
    assert (asked["status"], asked["reason_code"], asked["requested_by"], asked["line_items"]) == (
        "requested",
        "defective",
        "platform",
        [{"id": line.public_id, "quantity": 1}],
    )
    assert body["order_actions"]["return"]["line_items"] == [{"id": line.public_id, "quantity": 1}]
    # a replay of the same request adds nothing (BCP-IDEM-03)
    assert call(client, "post", f"/orders/{order.public_id}/returns", headers, request_body).content == response.content
    assert ReturnRequest.objects.count() == 1
    # and staff approve, receive and refund it: one signed full-order webhook per step
    with django_capture_on_commit_callbacks(execute=True):
        return_request_approve(return_id=asked["id"], actor="maria")
    with django_capture_on_commit_callbacks(execute=True):
        return_request_receive(return_id=asked["id"], actor="maria")
    with django_capture_on_commit_callbacks(execute=True):
        return_request_refund(return_id=asked["id"], actor="maria")
    hooks = _hooks(fake_platform)[before:]
    events = [d.event for d in WebhookDelivery.objects.order_by("id")][-5:]
    # the sandbox PSP settles the refund at once, so its completion is a fifth change
    assert events == ["return_requested", "return_approved", "returned", "refund_requested", "refunded"], events
    statuses = [h["return_requests"][0]["status"] for h in hooks]
    # the refund asked is not the money back: "refunded" only once its adjustment completed
    assert statuses == ["requested", "approved", "received", "refund_pending", "refunded"]
    assert all(h["ucp"]["capabilities"] == CAPS and schema_errors(h) == [] for h in hooks)
    assert [(a["type"], a["status"]) for a in hooks[3]["adjustments"]][-1] == ("refund", "pending")
    assert [(a["type"], a["status"]) for a in hooks[4]["adjustments"]][-1] == ("refund", "completed")
    assert hooks[-1]["return_requests"][0]["refund_amount"] == line.unit_price


def test_get_order_links_each_return_to_its_adjustments_so_the_agent_follows_its_refund_bcp_ord_09(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    """Agent walk (session 46): two returns of one unit each of the same line; the first one received and refunded.
    The order's adjustments held a `return` and a `refund` naming the same line as both requests, and nothing said
    whose they were, so an agent could not tell whether *its* return's money came back (the refund is `pending`
    until the PSP answers, while the return already says `refunded`). Each return names its adjustments now."""
    headers = _auth(fake_platform, platform, **{"Idempotency-Key": "ret-link-0"})
    order = _delivered(_paid_order(client, headers, django_capture_on_commit_callbacks),
                       django_capture_on_commit_callbacks)  # fmt: skip
    line = order.lines.get()
    asked = []
    for key in ("ret-link-1", "ret-link-2"):
        headers["Idempotency-Key"] = key
        ask = {"reason_code": "defective", "line_items": [{"id": line.public_id, "quantity": 1}]}
        asked.append(call(client, "post", f"/orders/{order.public_id}/returns", headers, ask).json()["return_requests"])
    first = asked[-1][0]["id"]
    with django_capture_on_commit_callbacks(execute=True):
        return_request_approve(return_id=first, actor="maria")
        return_request_receive(return_id=first, actor="maria")
        return_request_refund(return_id=first, actor="maria")

    got = call(client, "get", f"/orders/{order.public_id}", headers).json()

    assert schema_errors(got) == []
    refunded, waiting = got["return_requests"]
    adjustments = {a["id"]: a for a in got["adjustments"]}
    assert refunded["id"] == first and refunded["status"] == "refunded"
    assert adjustments[refunded["return_adjustment_id"]]["type"] == "return"
    refund = adjustments[refunded["refund_adjustment_id"]]
    assert (refund["type"], refund["status"], refund["totals"]) == (
        "refund",
        "completed",  # the sandbox PSP answers at once
        [{"type": "total", "amount": -refunded["refund_amount"]}],
    )
    assert waiting["status"] == "requested"
    assert "return_adjustment_id" not in waiting and "refund_adjustment_id" not in waiting


def test_request_return_refusals_name_the_member_in_portuguese(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    headers = _auth(fake_platform, platform, **{"Idempotency-Key": "ret-bad-1"})
    order = _delivered(_paid_order(client, headers, django_capture_on_commit_callbacks),
                       django_capture_on_commit_callbacks)  # fmt: skip
    line = order.lines.get()
    too_many = {"reason_code": "changed_mind", "line_items": [{"id": line.public_id, "quantity": 99}]}
    body = call(client, "post", f"/orders/{order.public_id}/returns", headers, too_many).json()
    assert body["messages"] == [{
        "type": "error", "code": "quantity_exceeded", "severity": "recoverable", "path": "$.line_items[0].quantity",
        "content": f"Não é possível devolver 99 unidades de {line.title}: só {line.quantity_fulfilled} unidades "
                   "recebidas ainda não foram pedidas em devolução.",
    }]  # fmt: skip
    # a body of the wrong shape is a protocol error naming the field (BCP-ERR-05)
    headers["Idempotency-Key"] = "ret-bad-2"
    wrong = call(client, "post", f"/orders/{order.public_id}/returns", headers,
                 {"reason_code": "defective", "line_items": [{"id": line.public_id, "quantity": "1"}]})  # fmt: skip
    assert wrong.status_code == 400 and wrong.json()["code"] == "invalid_request"
    assert "line_items[0].quantity" in wrong.json()["content"]
    headers["Idempotency-Key"] = "ret-bad-3"
    unknown = call(client, "post", f"/orders/{order.public_id}/returns", headers,
                   {"reason_code": "porque", "line_items": [{"id": line.public_id, "quantity": 1}]})  # fmt: skip
    assert unknown.status_code == 400 and "reason_code" in unknown.json()["content"]
    assert not ReturnRequest.objects.exists()


def test_a_return_for_another_reason_without_the_reason_is_field_required_naming_it(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    """QA walk: `reason_code: "other"` without `reason` answered code `required` and "Campo obrigatório."; a missing
    field is `field_required` with a text naming it, as on checkout (BCP §5.1, BCP-CHK-18)."""
    headers = _auth(fake_platform, platform, **{"Idempotency-Key": "ret-other-1"})
    order = _delivered(_paid_order(client, headers, django_capture_on_commit_callbacks),
                       django_capture_on_commit_callbacks)  # fmt: skip
    line = order.lines.get()
    ask = {"reason_code": "other", "line_items": [{"id": line.public_id, "quantity": 1}]}

    body = call(client, "post", f"/orders/{order.public_id}/returns", headers, ask).json()

    assert body["ucp"]["status"] == "error"
    assert body["messages"] == [{
        "type": "error", "code": "field_required", "severity": "recoverable", "path": "$.reason",
        "content": "Informe o motivo da devolução em $.reason: é obrigatório quando reason_code é other.",
    }]  # fmt: skip
    assert not ReturnRequest.objects.exists()


def test_a_return_of_an_order_not_delivered_says_nothing_to_return_as_its_order_actions_do(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    """QA walk (an agent over REST): the refusal said `quantity_exceeded` on the first line while the order's
    `order_actions.return` said `nothing_to_return`; an agent reads one vocabulary."""
    headers = _auth(fake_platform, platform, **{"Idempotency-Key": "ret-undelivered"})
    order = _paid_order(client, headers, django_capture_on_commit_callbacks)
    line = order.lines.get()
    seen = call(client, "get", f"/orders/{order.public_id}", headers).json()
    offered = seen["order_actions"]["return"]
    assert (offered["available"], offered["unavailable_reason"]) == (False, "nothing_to_return")
    ask = {"reason_code": "changed_mind", "line_items": [{"id": line.public_id, "quantity": 1}]}
    body = call(client, "post", f"/orders/{order.public_id}/returns", headers, ask).json()
    assert [m["code"] for m in body["messages"]] == ["nothing_to_return"]
    assert not ReturnRequest.objects.exists()


def test_statement_budgets_of_cancel_and_return(
    client: Client,
    fake_platform: FakePlatform,
    platform: NewPlatform,
    django_capture_on_commit_callbacks: Any,
    django_assert_max_num_queries: Any,
) -> None:
    headers = _auth(fake_platform, platform, **{"Idempotency-Key": "budget-cancel"})
    placed = _paid_order(client, headers, django_capture_on_commit_callbacks)
    call(client, "get", f"/orders/{placed.public_id}", headers)  # the profile is cached, as in steady use
    with django_assert_max_num_queries(42):  # one read of a carrier bring-back the cancel settles
        body = call(client, "post", f"/orders/{placed.public_id}/cancel", headers, {}).json()
    assert body["order_actions"]["cancel"]["available"] is False
    headers["Idempotency-Key"] = "budget-return"
    delivered = _delivered(_paid_order(client, headers, django_capture_on_commit_callbacks),
                           django_capture_on_commit_callbacks)  # fmt: skip
    line = delivered.lines.get()
    headers["Idempotency-Key"] = "budget-return-2"
    with django_assert_max_num_queries(23):  # with the buyer's e-mail row (the request arrived)
        body = call(
            client,
            "post",
            f"/orders/{delivered.public_id}/returns",
            headers,
            {"reason_code": "defective", "line_items": [{"id": line.public_id, "quantity": 1}]},
        ).json()
    assert body["return_requests"][0]["status"] == "requested"


def test_refusals_follow_accept_language(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    headers = _auth(fake_platform, platform, **{"Idempotency-Key": "cancel-en", "Accept-Language": "en"})
    order = _delivered(_paid_order(client, headers, django_capture_on_commit_callbacks),
                       django_capture_on_commit_callbacks)  # fmt: skip
    body = call(client, "post", f"/orders/{order.public_id}/cancel", headers, {}).json()
    assert body["messages"][0]["content"] == (
        f"Order #{order.number} has already shipped and can no longer be canceled: once you receive it, ask for a "
        "return."
    )


def test_the_openapi_documents_the_bodies_of_cancel_and_return(client: Client) -> None:
    """QA walk: both views read their body themselves, so the OpenAPI had no `requestBody` for them. They take
    the request models the MCP tools and the A2A intents validate with (one schema set for every transport)."""
    document = client.get("/bcp/v1/openapi.json").json()
    cancel = document["paths"]["/bcp/v1/orders/{order_id}/cancel"]["post"]["requestBody"]
    ret = document["paths"]["/bcp/v1/orders/{order_id}/returns"]["post"]["requestBody"]

    assert cancel["required"] is False  # no body is a cancel without a reason
    assert {"$ref": "#/components/schemas/CancelOrderRequest"} in cancel["content"]["application/json"]["schema"][
        "anyOf"
    ]
    assert ret["required"] is True
    assert ret["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/RequestReturnRequest"}
    schemas = document["components"]["schemas"]
    assert list(schemas["CancelOrderRequest"]["properties"]) == list(CancelOrderRequest.model_fields)
    assert list(schemas["RequestReturnRequest"]["properties"]) == list(RequestReturnRequest.model_fields)
    assert schemas["RequestReturnRequest"]["required"] == ["reason_code", "line_items"]


def test_bad_bodies_of_cancel_and_return_are_the_same_portuguese_protocol_errors(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    """The bodies are now validated before the view runs: the answers stay BCP-ERR-05's `invalid_request` naming
    the member, and a missing Idempotency-Key is still said first (BCP-IDEM-02)."""
    headers = _auth(fake_platform, platform, **{"Idempotency-Key": "bad-bodies"})
    order = _paid_order(client, headers, django_capture_on_commit_callbacks)
    cancel, returns = f"/orders/{order.public_id}/cancel", f"/orders/{order.public_id}/returns"
    no_key = {k: v for k, v in headers.items() if k != "Idempotency-Key"}
    before = order.status

    answers = [
        call(client, "post", cancel, headers, "{"),
        call(client, "post", cancel, headers, {"reason": 7}),
        call(client, "post", returns, headers, {"reason_code": "defective", "line_items": []}),
        call(client, "post", returns, no_key, {"reason_code": 1}),
        # the views read their bodies themselves (issue 34), as ninja read a declared body: none, or `null`
        call(client, "post", returns, headers, b""),
        call(client, "post", returns, headers, b"null"),
        call(client, "post", cancel, no_key, b"["),
        call(client, "post", cancel, {**headers, "Authorization": "Bearer outra"}, {"reason": 7}),
    ]

    assert [(a.status_code, a.json()) for a in answers] == [
        (400, {"code": "invalid_request", "content": "O corpo não é JSON válido (UTF-8)."}),
        (400, invalid("$.reason", "deve ser um texto")),
        (400, invalid("$.line_items", "precisa de pelo menos 1 item")),
        (400, {"code": "idempotency_key_required", "content": "Idempotency-Key é obrigatório em request_return."}),
        (400, invalid("$", "campo obrigatório")),
        (400, invalid("$", "deve ser um objeto JSON")),
        (400, {"code": "idempotency_key_required", "content": "Idempotency-Key é obrigatório em cancel_order."}),
        (400, invalid("$.reason", "deve ser um texto")),  # the body before the credentials, as before
    ]
    order.refresh_from_db()
    assert order.status == before and not ReturnRequest.objects.exists()


def test_a_return_whose_refund_the_psp_refuses_does_not_say_refunded_bcp_ord_09(
    client: Client,
    fake_platform: FakePlatform,
    platform: NewPlatform,
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Agent walk (session 46): the return said `refunded` as soon as its refund was asked, and still after the
    PSP refused the devolução (the refund adjustment `failed`): the agent told the buyer the money was back.
    The return now says `refund_pending` until the refund completes, `refund_failed` when it fails, and a
    refund done again that completes turns it `refunded`."""
    from orders.models import OrderEvent
    from payments.models import PixRefund

    headers, order, return_id = _return_refund_asked(
        client, fake_platform, platform, settings, django_capture_on_commit_callbacks, key="ret-fail-1"
    )
    line = order.lines.get()

    def the_return() -> tuple[dict[str, Any], dict[str, Any]]:
        got = call(client, "get", f"/orders/{order.public_id}", headers).json()
        assert schema_errors(got) == []
        [ret] = got["return_requests"]
        return ret, {a["id"]: a for a in got["adjustments"]}[ret["refund_adjustment_id"]]

    # while the PSP has not answered, the return says the refund is pending, not done
    ret, refund = the_return()
    assert (ret["status"], refund["status"]) == ("refund_pending", "pending")
    # when the PSP refuses the devolução
    first = PixRefund.objects.get(refund_id=ret["refund_adjustment_id"])
    with django_capture_on_commit_callbacks(execute=True):
        sandbox.refund_settle(e2eid=first.end_to_end_id, refund_id=first.psp_refund_id, status="NAO_REALIZADO")
    # then Get Order says the return's refund failed: the money did not go back
    ret, refund = the_return()
    assert (ret["status"], refund["status"]) == ("refund_failed", "failed")
    assert _hooks(fake_platform)[-1]["return_requests"][0]["status"] == "refund_failed"
    staff_line = OrderEvent.objects.get(order=order, kind="return_refund_failed")
    assert staff_line.internal and staff_line.message == (
        f"Reembolso da devolução {return_id} falhou: R$ {line.unit_price // 100},{line.unit_price % 100:02d} não "
        "voltaram ao comprador; na devolução, use “Tentar de novo” ou, se a loja pagou por outro meio, “Marcar como "
        "pago por fora”."
    )
    # and staff try it again (the same amount): once the PSP pays it, the return is refunded
    with django_capture_on_commit_callbacks(execute=True):
        assert return_request_refund_retry(return_id=return_id, actor="maria").changed
    ret, refund = the_return()
    assert (ret["status"], refund["status"]) == ("refund_pending", "pending")
    again = PixRefund.objects.get(refund_id=ret["refund_adjustment_id"])
    with django_capture_on_commit_callbacks(execute=True):
        sandbox.refund_settle(e2eid=again.end_to_end_id, refund_id=again.psp_refund_id, status="DEVOLVIDO")
    ret, refund = the_return()
    assert (ret["status"], refund["status"], ret["refund_amount"]) == ("refunded", "completed", line.unit_price)
    assert _hooks(fake_platform)[-1]["return_requests"][0]["status"] == "refunded"


def test_a_return_whose_refund_the_psp_refused_paid_by_the_shop_outside_it_says_refunded_bcp_ord_09(
    client: Client,
    fake_platform: FakePlatform,
    platform: NewPlatform,
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Merchant gap (closing note, session 46): a `refund_failed` return the shop pays back by transfer or cash
    ("Marcar como pago por fora") is `refunded` in Get Order and in the order webhook, its refund
    adjustment `completed`; nothing is sent to the PSP again."""
    from payments.models import PixRefund

    headers, order, return_id = _return_refund_asked(
        client, fake_platform, platform, settings, django_capture_on_commit_callbacks, key="ret-fora-1"
    )
    line = order.lines.get()
    failed = PixRefund.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        sandbox.refund_settle(e2eid=failed.end_to_end_id, refund_id=failed.psp_refund_id, status="NAO_REALIZADO")
    # when staff record that the shop paid it by bank transfer
    with django_capture_on_commit_callbacks(execute=True):
        assert return_request_refund_offline(return_id=return_id, means="transferencia", actor="maria").changed
    # then Get Order says the return is refunded, through a completed refund of the same amount
    got = call(client, "get", f"/orders/{order.public_id}", headers).json()
    assert schema_errors(got) == []
    [ret] = got["return_requests"]
    refund = {a["id"]: a for a in got["adjustments"]}[ret["refund_adjustment_id"]]
    assert (ret["status"], refund["status"], ret["refund_amount"]) == ("refunded", "completed", line.unit_price)
    assert refund["id"] != failed.refund_id and PixRefund.objects.count() == 1
    # and so does the platform's last order webhook
    assert _hooks(fake_platform)[-1]["return_requests"][0]["status"] == "refunded"
    # and a second time changes nothing
    assert not return_request_refund_offline(return_id=return_id, means="transferencia", actor="maria").changed


def _return_refund_asked(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, settings: Any, capture: Any, *, key: str
) -> tuple[dict[str, str], Any, str]:
    """An agent's paid order delivered, a return of one unit asked over REST, approved, received and its Pix refund
    asked of a sandbox PSP that answers only when told to: (headers, order, return id)."""
    headers = _auth(fake_platform, platform, **{"Idempotency-Key": key})
    order = _delivered(_paid_order(client, headers, capture), capture)
    line = order.lines.get()
    ask = {"reason_code": "defective", "line_items": [{"id": line.public_id, "quantity": 1}]}
    return_id = call(client, "post", f"/orders/{order.public_id}/returns", headers, ask).json()["return_requests"][0]
    settings.PIX_SANDBOX_REFUND_AUTOSETTLE = False
    with capture(execute=True):
        return_request_approve(return_id=return_id["id"], actor="maria")
        return_request_receive(return_id=return_id["id"], actor="maria")
    with capture(execute=True):
        return_request_refund(return_id=return_id["id"], actor="maria")
    return headers, order, return_id["id"]
