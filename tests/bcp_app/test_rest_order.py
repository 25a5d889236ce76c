"""Get Order over REST (BCP §7, BCP-ORD-*) and signed order webhooks (BCP §8, BCP-WH-*)."""

from __future__ import annotations

import importlib
import json
import re
import uuid
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.apps import apps as django_apps
from django.db import connection
from django.db.models.signals import post_init
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bcp_app.models import WebhookAttempt, WebhookDelivery
from bcp_app.protocol.keys import public_jwk
from bcp_app.protocol.signatures import WEBHOOK_COMPONENTS, HttpMessage, verify_message
from bcp_app.service.platforms import NewPlatform, platform_create
from bcp_app.service.policies import policies_json
from bcp_app.tasks import retry_order_webhooks
from orders.models import Order
from orders.services.adjustments import order_cancel, order_refund
from orders.services.expectations import expectation_split
from orders.services.fulfillment import fulfillment_event_create, order_mark_delivered, order_ship
from orders.types import LineQuantity
from payments.sandbox import services as sandbox
from shop.models import StoreSettings
from tests.bcp_app.bcp_fixtures import VERSION, FakePlatform, agent
from tests.bcp_app.rest_helpers import call, catalog, complete, create, full_update, ready_checkout
from tests.bcp_app.schema_check import errors
from tests.shop.checkout_factories import make_coupon


def test_get_order_is_routed_past_ninja_and_answers_as_it_did_bcp_ord_01_03(
    client: Client,
    fake_platform: FakePlatform,
    platform: NewPlatform,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Issue 34: `GET /bcp/v1/orders/{id}` resolves to its view directly, not through ninja's operation (a throwaway
    response and a path model per call); every answer is the one ninja's route gave: the order, `not_found`, a bad
    credential's 401, a control character in the id, ninja's 405 for another method, the unknown-path 404 for a
    trailing slash."""
    from django.urls import resolve

    headers = auth(fake_platform, platform)
    order = place_order(client, headers, django_capture_on_commit_callbacks)
    path = f"/bcp/v1/orders/{order.public_id}"
    assert resolve(path).func.__name__ == "get_order_direct"
    assert resolve(f"{path}/cancel").func.__name__ != "get_order_direct"
    response = client.get(path, headers=headers)
    assert response.status_code == 200 and response.json()["id"] == order.public_id
    assert response["Content-Type"] == "application/json; charset=utf-8"
    missing = client.get("/bcp/v1/orders/ord_nao_existe", headers=headers)
    assert missing.status_code == 200 and [m["code"] for m in missing.json()["messages"]] == ["not_found"]
    wrong = client.get(path, headers={**headers, "Authorization": "Basic abc"})
    assert (wrong.status_code, wrong.json()["code"]) == (401, "unauthenticated")
    control = client.get("/bcp/v1/orders/ord%01x", headers=headers)
    assert (control.status_code, control.json()["code"]) == (400, "invalid_request")
    for method in (client.post, client.put, client.delete):
        refused = method(path, headers=headers)
        assert (refused.status_code, refused["Allow"], refused.json()["code"]) == (405, "GET", "method_not_allowed")
    slash = client.get(f"{path}/", headers=headers)
    assert (slash.status_code, slash.json()["code"]) == (404, "not_found")


FORGET_STALE_BODIES = importlib.import_module("orders.migrations.0025_forget_bodies_of_cancelled_orders")
FORGET_SHIPPED_BODIES = importlib.import_module("orders.migrations.0026_forget_bodies_of_shipped_orders")

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]
ORDER_CAPS = {"br.dev.bcp.shopping.order": [{"version": VERSION}]}
WEBHOOK_PATH = "/webhooks/bcp/pedidos"
SP_TZ = ZoneInfo("America/Sao_Paulo")


@pytest.fixture
def platform(fake_platform: FakePlatform, settings: Any) -> NewPlatform:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()
    return platform_create(name="Agente", profile_url=fake_platform.publish())


def auth(fake_platform: FakePlatform, platform: NewPlatform) -> dict[str, str]:
    return agent(fake_platform.url("/perfil.json"), Authorization=f"Bearer {platform.api_key}")


def place_order(client: Client, headers: dict[str, str], capture: Any) -> Order:
    checkout = ready_checkout(client, headers)
    complete(client, checkout["id"], headers)
    with capture(execute=True):
        sandbox.pay(txid=checkout["payment"]["instruments"][0]["pix"]["txid"], options=sandbox.PayOptions())
    return Order.objects.get(checkout_id=checkout["id"])


def test_originating_platform_reads_the_full_order_bcp_ord_01_04_05(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    headers = auth(fake_platform, platform)
    order = place_order(client, headers, django_capture_on_commit_callbacks)
    response = call(client, "get", f"/orders/{order.public_id}", headers)
    body = response.json()
    line = order.lines.get()
    expectation = order.expectations.get()
    assert response.status_code == 200
    assert body == {
        "ucp": {"version": VERSION, "capabilities": ORDER_CAPS},
        "id": order.public_id,
        "label": f"#{order.number}",
        "checkout_id": order.checkout_id,
        "permalink_url": order.permalink_url,
        "currency": "BRL",
        "line_items": [
            {
                "id": line.public_id,
                "item": {"id": "SKU-CAFE-500G", "title": "Café especial 500 g", "price": 4290},
                "quantity": {"total": 2, "fulfilled": 0},
                "totals": [{"type": "subtotal", "amount": 8580}, {"type": "total", "amount": 8580}],
                "status": "processing",
            }
        ],
        "fulfillment": {
            "expectations": [
                {
                    "id": expectation.public_id,
                    "line_items": [{"id": line.public_id, "quantity": 2}],
                    "method_type": "shipping",
                    "destination": {
                        "street_address": "Rua das Flores, 123",
                        "extended_address": "Apto 45 - Jardim Paulista",
                        "address_locality": "São Paulo",
                        "address_region": "SP",
                        "address_country": "BR",
                        "postal_code": "01310-100",
                        "first_name": "Ana",
                        "last_name": "Souza",
                    },
                    "description": expectation.description,
                    "fulfillable_on": "now",
                }
            ],
            "events": [],
        },
        "adjustments": [],
        "totals": [
            {"type": "subtotal", "amount": 8580},
            {"type": "fulfillment", "display_text": "PAC", "amount": 1890},
            {"type": "total", "amount": 10470},
        ],
        "updated_at": order.bcp_json_at.isoformat(timespec="microseconds").replace("+00:00", "Z"),  # when placed
        "policies": policies_json("pt-br"),
    }
    checkout = call(client, "get", f"/checkout-sessions/{order.checkout_id}", headers).json()
    assert checkout["order"] == {"id": body["id"], "permalink_url": body["permalink_url"]}  # BCP-ORD-05
    assert errors(body, "shopping/order.json") == []


def test_anonymous_caller_is_unauthorized_like_seed_000_bcp_ord_02(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    order = place_order(client, auth(fake_platform, platform), django_capture_on_commit_callbacks)
    response = call(
        client,
        "get",
        f"/orders/{order.public_id}",
        agent(fake_platform.url("/perfil.json"), **{"Accept-Language": "en"}),
    )
    assert response.status_code == 200
    assert response.json() == {
        "ucp": {"version": VERSION, "status": "error", "capabilities": ORDER_CAPS},
        "messages": [
            {
                "type": "error",
                "code": "unauthorized",
                "severity": "unrecoverable",
                "content": "Not authorized to access this order.",
            }
        ],
    }


def test_another_platform_is_unauthorized_bcp_ord_02(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    order = place_order(client, auth(fake_platform, platform), django_capture_on_commit_callbacks)
    other = platform_create(name="Outro agente")
    body = call(client, "get", f"/orders/{order.public_id}", auth(fake_platform, other)).json()
    assert body["messages"][0]["code"] == "unauthorized"
    assert body["messages"][0]["content"] == "Sem autorização para acessar este pedido."


def test_unknown_order_is_not_found_like_seed_000_bcp_ord_03(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform
) -> None:
    response = call(client, "get", "/orders/order_abc123", {**auth(fake_platform, platform), "Accept-Language": "en"})
    assert response.status_code == 200
    assert response.json() == {
        "ucp": {"version": VERSION, "status": "error", "capabilities": ORDER_CAPS},
        "messages": [
            {"type": "error", "code": "not_found", "severity": "unrecoverable", "content": "Order not found."}
        ],
    }


def _verify_webhook(received: Any, port: int) -> dict[str, Any]:
    message = HttpMessage(method="POST", authority=f"127.0.0.1:{port}", path=WEBHOOK_PATH, headers=received.headers)
    verify_message(message, received.body, [public_jwk()], required=WEBHOOK_COMPONENTS)
    return json.loads(received.body)


def test_placed_and_shipped_orders_are_sent_signed_to_the_platform_bcp_wh_01_06(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    order = place_order(client, auth(fake_platform, platform), django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
    hooks = [r for r in fake_platform.received if r.method == "POST" and r.path == WEBHOOK_PATH]
    assert [d.event for d in WebhookDelivery.objects.order_by("id")] == ["placed", "shipped"]
    assert len(hooks) == 2
    for received, delivery in zip(hooks, WebhookDelivery.objects.order_by("id"), strict=True):
        headers = received.headers
        assert headers["content-type"] == "application/json"
        assert headers["bcp-agent"] == 'profile="https://loja.example.com.br/.well-known/bcp"'
        assert headers["webhook-id"] == str(delivery.webhook_id)
        assert uuid.UUID(headers["webhook-id"]).version == 4
        assert headers["webhook-timestamp"].isdigit()
        assert 'keyid="loja-2026-07"' in headers["signature-input"]
        body = _verify_webhook(received, fake_platform.port)
        assert body["ucp"] == {"version": VERSION, "capabilities": ORDER_CAPS}  # BCP-WH-06
        assert body["id"] == order.public_id
        assert errors(body, "shopping/order.json") == []
        assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("delivered", 1, 200)
    shipped = json.loads(hooks[1].body)
    assert shipped["fulfillment"]["events"][0]["type"] == "shipped"  # full snapshot after the change (WH-02)
    assert shipped["fulfillment"]["events"][0]["tracking_number"] == "BR123456785BR"


def test_failed_deliveries_are_retried_with_the_same_webhook_id_bcp_wh_03_05(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    fake_platform.post_statuses = [500]
    order = place_order(client, auth(fake_platform, platform), django_capture_on_commit_callbacks)
    delivery = WebhookDelivery.objects.get(order_id=order.public_id)
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("pending", 1, 500)
    assert timedelta(seconds=29) < delivery.next_attempt_at - timezone.now() <= timedelta(seconds=30)
    WebhookDelivery.objects.update(next_attempt_at=timezone.now())
    assert retry_order_webhooks() == 1
    delivery.refresh_from_db()
    hooks = [r for r in fake_platform.received if r.method == "POST"]
    assert (delivery.status, delivery.attempts) == ("delivered", 2)
    assert hooks[0].headers["webhook-id"] == hooks[1].headers["webhook-id"] == str(delivery.webhook_id)
    assert hooks[0].body == hooks[1].body
    assert list(WebhookAttempt.objects.values_list("number", "status_code")) == [(1, 500), (2, 200)]


def test_deliveries_give_up_only_after_more_than_24_hours_bcp_wh_05(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    fake_platform.post_statuses = [503, 503, 503]
    place_order(client, auth(fake_platform, platform), django_capture_on_commit_callbacks)
    WebhookDelivery.objects.update(created_at=timezone.now() - timedelta(hours=23), next_attempt_at=timezone.now())
    retry_order_webhooks()
    assert WebhookDelivery.objects.get().status == "pending"
    WebhookDelivery.objects.update(created_at=timezone.now() - timedelta(hours=27), next_attempt_at=timezone.now())
    retry_order_webhooks()
    assert (WebhookDelivery.objects.get().status, WebhookDelivery.objects.get().attempts) == ("failed", 3)


def test_no_webhook_without_negotiated_order_capability_bcp_wh_01(
    client: Client, fake_platform: FakePlatform, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()
    document = fake_platform.profile()
    del document["ucp"]["capabilities"]["br.dev.bcp.shopping.order"]
    url = fake_platform.serve_json("/perfil.json", document)
    created = platform_create(name="Sem pedidos", profile_url=url)
    place_order(client, agent(url, Authorization=f"Bearer {created.api_key}"), django_capture_on_commit_callbacks)
    assert WebhookDelivery.objects.count() == 0
    assert [r for r in fake_platform.received if r.method == "POST"] == []


def test_anonymous_checkouts_send_no_webhooks_bcp_wh_01(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    place_order(client, agent(fake_platform.url("/perfil.json")), django_capture_on_commit_callbacks)
    assert WebhookDelivery.objects.count() == 0


def test_admin_retries_a_failed_delivery_with_the_same_webhook_id(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    from django.contrib.auth.models import User

    fake_platform.post_statuses = [500]
    place_order(client, auth(fake_platform, platform), django_capture_on_commit_callbacks)
    delivery = WebhookDelivery.objects.get()
    WebhookDelivery.objects.update(status="failed", next_attempt_at=None)
    client.force_login(User.objects.create_superuser("admin", "admin@example.com", "senha-forte-123"))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/admin/bcp_app/webhookdelivery/", {"action": "retry_now", "_selected_action": [delivery.pk]}
        )
    assert response.status_code == 302
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("delivered", 2)
    hooks = [r for r in fake_platform.received if r.method == "POST"]
    assert {r.headers["webhook-id"] for r in hooks} == {str(delivery.webhook_id)}


def test_a_remembered_order_body_follows_every_change_of_the_stored_order(
    client: Client,
    fake_platform: FakePlatform,
    platform: NewPlatform,
    django_capture_on_commit_callbacks: Any,
    settings: Any,
) -> None:
    """Get Order keeps the rendered body per process (bcp_app/service/operations/order_body.py); a shipped order, a
    new public URL or a memo that was full must still answer what a fresh rendering gives."""
    from bcp_app.protocol.results import body_bytes
    from bcp_app.protocol.schemas.order import OrderResponse
    from bcp_app.service import presenters
    from bcp_app.service.operations import order_body
    from orders.selectors import order_presented

    headers = auth(fake_platform, platform)
    order = place_order(client, headers, django_capture_on_commit_callbacks)
    assert order.policies  # the snapshot makes the body cacheable

    def fresh() -> bytes:
        return body_bytes(OrderResponse.validated(presenters.order(order_presented(order.public_id), None)))

    first = call(client, "get", f"/orders/{order.public_id}", headers).content
    assert call(client, "get", f"/orders/{order.public_id}", headers).content == first == fresh()
    order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
    shipped = call(client, "get", f"/orders/{order.public_id}", headers)
    assert shipped.content != first and shipped.content == fresh()
    assert shipped.json()["fulfillment"]["events"][-1]["tracking_number"] == "BR123456785BR"
    settings.BCP_PUBLIC_URL = "https://outra.example.com.br"
    moved = call(client, "get", f"/orders/{order.public_id}", headers).json()
    assert moved["permalink_url"].startswith("https://outra.example.com.br/")
    order_body._memo.clear()
    order_body._by_order.clear()
    for number in range(order_body.MEMO_SIZE):  # a full memo is emptied, never grown
        order_body._memo[("filler", number)] = b"{}"
        order_body._by_order[(f"order_{number}", "v")] = (("filler", number), b"{}")
    assert call(client, "get", f"/orders/{order.public_id}", headers).content == fresh()
    assert len(order_body._memo) <= order_body.MEMO_SIZE and len(order_body._by_order) <= order_body.MEMO_SIZE


def test_a_remembered_order_body_is_answered_without_building_the_order_bcp_ord_01(
    client: Client,
    fake_platform: FakePlatform,
    platform: NewPlatform,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Issue 34: Get Order reads the order's row and answers its remembered body without building the model (one
    statement, no `Order` instance); a change of the policy snapshot alone still gives a fresh body."""
    from bcp_app.protocol.results import body_bytes
    from bcp_app.protocol.schemas.order import OrderResponse
    from bcp_app.service import presenters
    from bcp_app.service.operations import order_body
    from orders.selectors import order_presented

    headers = auth(fake_platform, platform)
    order = place_order(client, headers, django_capture_on_commit_callbacks)
    order_body._memo.clear()
    built: list[Order] = []

    def count(sender: Any, instance: Order, **kwargs: Any) -> None:
        built.append(instance)

    def fresh() -> bytes:
        return body_bytes(OrderResponse.validated(presenters.order(order_presented(order.public_id), None)))

    post_init.connect(count, sender=Order)
    try:
        first = call(client, "get", f"/orders/{order.public_id}", headers).content
        assert len(built) == 1  # the first answer renders the body from the model
        built.clear()
        with CaptureQueriesContext(connection) as queries:
            again = call(client, "get", f"/orders/{order.public_id}", headers).content
        assert again == first and built == []
        assert [q["sql"] for q in queries if "orders_order" in q["sql"]] == [queries[-1]["sql"]]
        Order.objects.filter(pk=order.pk).update(policies=[*order.policies[:1], {**order.policies[0], "title": "X"}])
        changed = call(client, "get", f"/orders/{order.public_id}", headers).content
    finally:
        post_init.disconnect(count, sender=Order)
    assert changed != first and changed == fresh()


def test_a_platforms_key_and_profile_are_hashed_once_per_process_bcp_ord_02(
    client: Client,
    fake_platform: FakePlatform,
    platform: NewPlatform,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 34: a platform sends the same key and profile on every call; each Get Order hashed them five times
    (rate-limit caller, platform cache key, platform lookup, profile tokens). Remembered per process, a repeated
    call hashes neither, and still answers only the originating platform (BCP-ORD-02)."""
    import hashlib

    headers = auth(fake_platform, platform)
    order = place_order(client, headers, django_capture_on_commit_callbacks)
    assert call(client, "get", f"/orders/{order.public_id}", headers).status_code == 200
    hashed: list[bytes] = []
    original = hashlib.sha256

    def spy(data: bytes = b"", **kwargs: Any) -> Any:
        hashed.append(data)
        return original(data, **kwargs)

    monkeypatch.setattr(hashlib, "sha256", spy)
    again = call(client, "get", f"/orders/{order.public_id}", headers)
    secrets = (platform.api_key.encode(), fake_platform.url("/perfil.json").encode())
    assert again.json()["id"] == order.public_id
    assert [data for data in hashed if any(secret in data for secret in secrets)] == []
    other = platform_create(name="Outra", profile_url="")
    refused = call(client, "get", f"/orders/{order.public_id}", {**headers, "Authorization": f"Bearer {other.api_key}"})
    assert refused.json()["messages"][0]["code"] == "unauthorized"


def test_the_read_views_document_bcp_agent_without_validating_a_header_model_bcp_rest_03(client: Client) -> None:
    """Issue 34: the reads take `BCP-Agent` from the request in `_run` (BCP-REST-03); ninja validates no header model
    on each call for it, and the OpenAPI still documents the header on each of them, as ninja wrote it."""
    from bcp_app.transports.rest import api

    document = client.get("/bcp/v1/openapi.json").json()
    reads = {
        ("get", "/orders/{order_id}"),
        ("get", "/checkout-sessions/{checkout_id}"),
        ("get", "/carts/{cart_id}"),
        ("get", "/subscriptions/{subscription_id}"),
        ("post", "/catalog/search"),
        ("post", "/catalog/lookup"),
        ("post", "/catalog/product"),
    }
    checked = set()
    for router in api._get_bound_routers():
        for path, path_view in router.path_operations.items():
            for operation in path_view.operations:
                for method in operation.methods:
                    if (method.lower(), path) in reads:
                        checked.add((method.lower(), path))
                        assert [m for m in operation.models if m.__ninja_param_source__ == "header"] == [], path
    assert checked == reads
    for method, path in reads:
        parameters = document["paths"][f"/bcp/v1{path}"][method]["parameters"]
        assert [p for p in parameters if p["in"] == "header"] == [
            {
                "in": "header",
                "name": "BCP-Agent",
                "required": False,
                "description": 'Perfil da plataforma: profile="https://…" (RFC 8941).',
                "schema": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "description": 'Perfil da plataforma: profile="https://…" (RFC 8941).',
                    "title": "Bcp-Agent",
                },
            }
        ]


def test_get_order_reads_its_few_headers_without_building_the_request_headers_mapping_bcp_ord_01(
    client: Client,
    fake_platform: FakePlatform,
    platform: NewPlatform,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Issue 34: `_run` reads BCP-Agent, the key and Request-Id from `META`; Django's `request.headers` (a mapping
    of every header, built on first use) is never built for a Get Order, and the answer is the same."""
    headers = auth(fake_platform, platform)
    order = place_order(client, headers, django_capture_on_commit_callbacks)
    response = client.get(f"/bcp/v1/orders/{order.public_id}", headers={**headers, "Request-Id": "req-1"})
    assert response.status_code == 200 and response.json()["id"] == order.public_id
    assert response["Request-Id"] == "req-1"
    assert "headers" not in response.wsgi_request.__dict__


def test_the_write_views_document_their_headers_without_validating_a_header_model_bcp_rest_03(client: Client) -> None:
    """Issue 34: the writes take `BCP-Agent` and `Idempotency-Key` from the request in `_run` (BCP-REST-03,
    BCP-IDEM-01); ninja builds no mapping of every header and validates no header model on each call for them,
    and the OpenAPI still documents both headers on each of them, as ninja wrote them."""
    from bcp_app.transports.rest import api

    document = client.get("/bcp/v1/openapi.json").json()
    writes = {
        ("post", "/checkout-sessions"),
        ("put", "/checkout-sessions/{checkout_id}"),
        ("post", "/checkout-sessions/{checkout_id}/complete"),
        ("post", "/checkout-sessions/{checkout_id}/cancel"),
        ("post", "/carts"),
        ("put", "/carts/{cart_id}"),
        ("post", "/carts/{cart_id}/cancel"),
        ("post", "/orders/{order_id}/cancel"),
        ("post", "/orders/{order_id}/returns"),
        ("post", "/subscriptions"),
        ("post", "/subscriptions/{subscription_id}/cancel"),
    }
    checked = set()
    for router in api._get_bound_routers():
        for path, path_view in router.path_operations.items():
            for operation in path_view.operations:
                for method in operation.methods:
                    if (method.lower(), path) in writes:
                        checked.add((method.lower(), path))
                        assert [m for m in operation.models if m.__ninja_param_source__ == "header"] == [], path
    assert checked == writes

    def documented(name: str, description: str) -> dict[str, Any]:
        schema = {"anyOf": [{"type": "string"}, {"type": "null"}], "description": description, "title": name}
        return {"in": "header", "name": name, "schema": schema, "required": False, "description": description}

    agent = documented("BCP-Agent", 'Perfil da plataforma: profile="https://…" (RFC 8941).')
    agent["schema"]["title"] = "Bcp-Agent"
    key = documented("Idempotency-Key", "Chave de idempotência (UUID).")
    for method, path in writes:
        parameters = document["paths"][f"/bcp/v1{path}"][method]["parameters"]
        assert [p for p in parameters if p["in"] == "header"] == [agent, key], path


def test_a_retry_is_not_sent_after_a_later_webhook_of_the_same_order_bcp_wh_02(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    # The placed webhook fails; the shipped one (the whole newer order) is delivered before the placed retry is due.
    fake_platform.post_statuses = [500]
    order = place_order(client, auth(fake_platform, platform), django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
    placed, shipped = WebhookDelivery.objects.order_by("id")
    assert [(d.event, d.status) for d in (placed, shipped)] == [("placed", "pending"), ("shipped", "delivered")]
    WebhookDelivery.objects.filter(pk=placed.pk).update(next_attempt_at=timezone.now())

    assert retry_order_webhooks() == 1

    placed.refresh_from_db()
    assert (placed.status, placed.attempts, placed.next_attempt_at) == ("superseded", 1, None)
    hooks = [r for r in fake_platform.received if r.method == "POST" and r.path == WEBHOOK_PATH]
    assert [r.headers["webhook-id"] for r in hooks] == [str(placed.webhook_id), str(shipped.webhook_id)]
    assert json.loads(hooks[-1].body)["fulfillment"]["events"][0]["type"] == "shipped"  # the platform's last word


def test_the_latest_webhook_of_an_order_is_retried_whatever_came_before_bcp_wh_05(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    order = place_order(client, auth(fake_platform, platform), django_capture_on_commit_callbacks)
    fake_platform.post_statuses = [500]
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
    shipped = WebhookDelivery.objects.get(event="shipped")
    assert shipped.status == "pending"
    WebhookDelivery.objects.filter(pk=shipped.pk).update(next_attempt_at=timezone.now())

    assert retry_order_webhooks() == 1

    shipped.refresh_from_db()
    assert (shipped.status, shipped.attempts) == ("delivered", 2)


def test_expectations_after_a_partial_cancel_promise_only_what_is_left_bcp_ord_06_07_wh_02(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    """BCP §7: an expectation lists what is still to be fulfilled (BCP-ORD-07, quantities >= 1), so a cancel takes
    its units off (an expectation left empty is gone); the line keeps original/total/fulfilled (BCP-ORD-06); the
    webhook after the cancel carries the same snapshot (BCP-WH-02). They listed the plan as placed."""
    headers = auth(fake_platform, platform)
    order = place_order(client, headers, django_capture_on_commit_callbacks)
    line = order.lines.get()
    first = order.expectations.get()
    with django_capture_on_commit_callbacks(execute=True):
        later = expectation_split(
            order_id=order.public_id, expectation_id=first.public_id, lines=[LineQuantity(line.public_id, 1)]
        )
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", lines=[LineQuantity(line.public_id, 1)])
        order_cancel(order_id=order.public_id, reason="Sem estoque")

    body = call(client, "get", f"/orders/{order.public_id}", headers).json()

    assert [(e["id"], e["line_items"]) for e in body["fulfillment"]["expectations"]] == [
        (first.public_id, [{"id": line.public_id, "quantity": 1}])
    ]
    assert later.public_id not in json.dumps(body["fulfillment"])
    assert [(i["quantity"], i["status"]) for i in body["line_items"]] == [
        ({"original": 2, "total": 1, "fulfilled": 1}, "fulfilled")
    ]
    assert body["adjustments"][0]["line_items"] == [{"id": line.public_id, "quantity": -1}]
    assert errors(body, "shopping/order.json") == []
    hooks = [r for r in fake_platform.received if r.method == "POST" and r.path == WEBHOOK_PATH]
    last = json.loads(hooks[-1].body)
    assert last["fulfillment"]["expectations"] == body["fulfillment"]["expectations"]
    assert last["line_items"] == body["line_items"]
    # an order cancelled before this rule kept the body it stored then: the data migration has it rendered again
    stored = json.loads(Order.objects.get(pk=order.pk).bcp_json)
    Order.objects.filter(pk=order.pk).update(bcp_json=json.dumps({**stored, "stale": 1}))
    FORGET_STALE_BODIES.forget_stale_bodies(django_apps, None)
    again = call(client, "get", f"/orders/{order.public_id}", headers).json()
    assert "stale" not in again and again["fulfillment"] == body["fulfillment"]


@pytest.mark.parametrize("kept_days", [True, False], ids=["quote-days", "placed-before-days-were-kept"])
def test_expectations_say_what_left_once_units_shipped_like_seed_000_bcp_ord_06_07_wh_02(
    client: Client,
    fake_platform: FakePlatform,
    platform: NewPlatform,
    django_capture_on_commit_callbacks: Any,
    kept_days: bool,
) -> None:
    """Seed 000: a delivered expectation still lists the units it promised and says "Entregue". Shipped units stay in
    `line_items` (BCP-ORD-07: quantities >= 1) and the description says where they are, step by step; the line
    counts them as fulfilled (BCP-ORD-06) and the webhook carries the same body (BCP-WH-02). The description was
    the checkout's promise ("Chega em …") whatever had shipped or arrived. What travels has its arrival dated from
    the quote's business days (PAC to SP: 3 to 5) counted from its shipment; an order placed before the shop kept
    those days says what it said before (BCP §7 has no member for a dated window: the description says it)."""
    headers = auth(fake_platform, platform)
    order = place_order(client, headers, django_capture_on_commit_callbacks)
    line = order.lines.get()
    expectation = order.expectations.get()
    promise = expectation.description
    assert promise == "Chega em 3 a 5 dias úteis"
    assert (expectation.days_min, expectation.days_max, expectation.days_from) == (3, 5, "shipping")
    if not kept_days:
        order.expectations.update(days_min=None, days_max=None, days_from="")

    def read() -> dict[str, Any]:
        body = call(client, "get", f"/orders/{order.public_id}", headers).json()
        assert errors(body, "shopping/order.json") == []
        hooks = [r for r in fake_platform.received if r.method == "POST" and r.path == WEBHOOK_PATH]
        assert json.loads(hooks[-1].body)["fulfillment"] == body["fulfillment"]
        [shown] = body["fulfillment"]["expectations"]
        assert (shown["id"], shown["line_items"]) == (expectation.public_id, [{"id": line.public_id, "quantity": 2}])
        return {
            "description": shown["description"],
            "line": (body["line_items"][0]["quantity"], body["line_items"][0]["status"]),
        }

    def ship(when: datetime, code: str, lines: list[LineQuantity] | None = None) -> None:
        with django_capture_on_commit_callbacks(execute=True):
            fulfillment_event_create(order_id=order.public_id, type="shipped", tracking_number=code,
                                     carrier="Correios", lines=lines, occurred_at=when)  # fmt: skip

    one = [LineQuantity(line.public_id, 1)]
    ship(datetime(2026, 11, 13, 16, 0, tzinfo=SP_TZ), "BR123456785BR", one)  # a Friday; Fri 20 Nov is a holiday
    first = " (previsão de entrega entre 18/11 e 23/11)" if kept_days else ""
    assert read() == {
        "description": f"1 de 2 unidades enviadas{first}; falta enviar 1× Café especial 500 g ({promise})",
        "line": ({"total": 2, "fulfilled": 1}, "partial"),
    }
    ship(datetime(2026, 12, 4, 10, 0, tzinfo=SP_TZ), "BR123456799BR")  # the rest, on Friday 4 Dec
    then = "; previsão de entrega entre 09/12 e 11/12" if kept_days else ""
    assert read() == {"description": f"Enviado{then}", "line": ({"total": 2, "fulfilled": 2}, "fulfilled")}
    with django_capture_on_commit_callbacks(execute=True):
        order_mark_delivered(order_id=order.public_id, lines=one)
    assert read()["description"] == f"Enviado; 1 de 2 unidades entregues{then}"
    with django_capture_on_commit_callbacks(execute=True):
        order_mark_delivered(order_id=order.public_id)
    assert read()["description"] == "Entregue"
    # an order shipped before this rule kept the promise it stored then: the data migration has it rendered again
    stored = json.loads(Order.objects.get(pk=order.pk).bcp_json)
    Order.objects.filter(pk=order.pk).update(bcp_json=json.dumps({**stored, "stale": 1}))
    FORGET_SHIPPED_BODIES.forget_stale_bodies(django_apps, None)
    assert "stale" not in call(client, "get", f"/orders/{order.public_id}", headers).json()


def test_each_webhook_says_when_its_order_changed_so_a_late_one_can_be_dropped_bcp_wh_02_06(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    """BCP §8 gives webhooks no order (a retry gets a new `Webhook-Timestamp`) and a newer delivery supersedes an
    older one only before its first attempt: two already in flight may arrive swapped. Each body (signed, the
    Get Order snapshot of its change) carries `updated_at` in microseconds, later for every later change even
    within one second, so the platform keeps the greatest. The body had nothing to order them by."""
    headers = auth(fake_platform, platform)
    order = place_order(client, headers, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR", carrier="Correios")
        order_mark_delivered(order_id=order.public_id)
    hooks = [r for r in fake_platform.received if r.method == "POST" and r.path == WEBHOOK_PATH]
    bodies = [_verify_webhook(received, fake_platform.port) for received in hooks]  # signed bytes (BCP-WH-04)
    assert [d.event for d in WebhookDelivery.objects.order_by("id")] == ["placed", "shipped", "delivered"]
    stamps = [body["updated_at"] for body in bodies]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", stamp) for stamp in stamps), stamps
    assert stamps == sorted(set(stamps))  # strictly later for each change, in the order they happened
    for body in bodies:
        assert errors(body, "shopping/order.json") == []  # an extra member: the schema is open (BCP §1)
    # Get Order says the same moment as the last webhook, and the order row keeps it
    got = call(client, "get", f"/orders/{order.public_id}", headers).json()
    assert got["updated_at"] == stamps[-1]
    order.refresh_from_db()
    assert order.bcp_json_at.isoformat(timespec="microseconds").replace("+00:00", "Z") == stamps[-1]


def test_order_totals_follow_section_6_with_a_coupon_the_pix_discount_freight_and_a_refund_bcp_ord_10(
    client: Client, fake_platform: FakePlatform, platform: NewPlatform, django_capture_on_commit_callbacks: Any
) -> None:
    """BCP §6 on the order: one `subtotal`, one `total` equal to the sum of the others, discounts negative,
    freight non-negative, each line's totals its price × quantity; a refund is an adjustment (negative amount),
    the placed totals stay what the buyer paid."""
    StoreSettings.objects.create(pix_discount_percent=Decimal("5.00"))
    make_coupon("DEZ")
    headers = auth(fake_platform, platform)
    created = create(client, headers).json()
    body = full_update(created)
    body["discounts"] = {"codes": ["dez"]}
    addressed = call(client, "put", f"/checkout-sessions/{created['id']}", headers, body).json()
    body = {**full_update(addressed), "discounts": {"codes": ["dez"]}}
    ready = call(client, "put", f"/checkout-sessions/{created['id']}", headers, body).json()
    assert ready["status"] == "ready_for_complete", ready.get("messages")
    complete(client, ready["id"], headers)
    with django_capture_on_commit_callbacks(execute=True):
        sandbox.pay(txid=ready["payment"]["instruments"][0]["pix"]["txid"], options=sandbox.PayOptions())
    order = Order.objects.get(checkout_id=ready["id"])
    order_refund(order_id=order.public_id, amount=1000, reason="Produto com avaria", actor="lojista")

    got = call(client, "get", f"/orders/{order.public_id}", headers).json()

    # 2 × 42,90 = 85,80; DEZ −8,58; Pix 5 % of 77,22 = −3,86; PAC 18,90 → 92,18
    assert got["totals"] == [
        {"type": "subtotal", "amount": 8580},
        {"type": "discount", "display_text": "Cupom DEZ", "amount": -858},
        {"type": "discount", "display_text": "Desconto Pix (5%)", "amount": -386},
        {"type": "fulfillment", "display_text": "PAC", "amount": 1890},
        {"type": "total", "amount": 9226},
    ]
    kinds = [t["type"] for t in got["totals"]]
    assert (kinds.count("subtotal"), kinds.count("total"), kinds[-1]) == (1, 1, "total")
    assert got["totals"][-1]["amount"] == sum(t["amount"] for t in got["totals"][:-1]) == order.total_amount
    for line in got["line_items"]:
        line_totals = {t["type"]: t["amount"] for t in line["totals"]}
        assert line_totals["subtotal"] == line["item"]["price"] * line["quantity"]["total"]
    (refund,) = got["adjustments"]
    assert (refund["type"], refund["status"]) == ("refund", "pending")
    assert [t for t in refund["totals"] if t["type"] == "total"] == [{"type": "total", "amount": -1000}]  # BCP-ORD-09
    assert errors(got, "shopping/order.json") == []
