"""Merchant back-office API `/api/v1/` (DRF): token auth, permissions, each endpoint, validation errors."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.core import mail
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from orders.models import Adjustment, FulfillmentEvent, OrderEvent
from orders.selectors import api_actor

pytestmark = pytest.mark.django_db


def _client_for(*codenames: str, staff: bool = True) -> APIClient:
    user = User.objects.create_user(f"erp-{'-'.join(codenames) or 'none'}-{staff}", is_staff=staff)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="orders", codename__in=codenames))
    token = Token.objects.create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def erp() -> APIClient:
    return _client_for("view_order", "ship_order", "refund_order", "change_order")


def test_auth_is_required(client, place_order):
    order = place_order()
    assert client.get("/api/v1/orders/").status_code == 401
    assert client.get(f"/api/v1/orders/{order.public_id}/").status_code == 401
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert bad.get("/api/v1/orders/").status_code == 401


def test_non_staff_and_missing_permission_are_forbidden(place_order):
    order = place_order()
    assert _client_for("view_order", staff=False).get("/api/v1/orders/").status_code == 403
    assert _client_for().get("/api/v1/orders/").status_code == 403
    viewer = _client_for("view_order")
    assert viewer.get("/api/v1/orders/").status_code == 200
    url = f"/api/v1/orders/{order.public_id}"
    assert viewer.post(f"{url}/fulfillment-events/", {"type": "processing"}, format="json").status_code == 403
    assert viewer.post(f"{url}/adjustments/", {"type": "refund"}, format="json").status_code == 403
    assert viewer.post(f"{url}/notes/", {"text": "x"}, format="json").status_code == 403


def test_list_with_filters(erp, place_order):
    paid = place_order()
    pending = place_order(paid=False, email="bruno@example.com.br")
    body = erp.get("/api/v1/orders/").json()
    assert [row["number"] for row in body["results"]] == [pending.number, paid.number]
    body = erp.get("/api/v1/orders/", {"payment_status": "paid"}).json()
    assert [row["id"] for row in body["results"]] == [paid.public_id]
    assert body["results"][0]["total"] == 3800
    body = erp.get("/api/v1/orders/", {"q": "bruno@example.com.br"}).json()
    assert [row["id"] for row in body["results"]] == [pending.public_id]
    response = erp.get("/api/v1/orders/", {"status": "lost"})
    assert response.status_code == 400
    assert "status" in response.json()


def test_detail_has_bcp_shape_and_404(erp, place_order):
    order = place_order()
    body = erp.get(f"/api/v1/orders/{order.public_id}/").json()
    assert body["id"] == order.public_id
    assert body["bcp"]["permalink_url"] == order.permalink_url
    assert body["payment"]["txid"] == order.payment_txid
    assert body["bcp"]["line_items"][0]["status"] == "processing"
    assert erp.get("/api/v1/orders/order_nope/").status_code == 404


def test_create_fulfillment_event(erp, place_order):
    order = place_order(lines=[("CAM", 3000, 2)])
    line = order.lines.get()
    response = erp.post(
        f"/api/v1/orders/{order.public_id}/fulfillment-events/",
        {"type": "shipped", "tracking_number": "BR123456785BR", "line_items": [{"id": line.public_id, "quantity": 2}]},
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    assert body["type"] == "shipped"
    assert body["tracking_url"] == "https://rastreamento.correios.com.br/app/index.php?objeto=BR123456785BR"
    assert body["line_items"] == [{"id": line.public_id, "quantity": 2}]
    assert FulfillmentEvent.objects.get(order=order).public_id == body["id"]


def test_a_tracking_code_already_on_another_order_is_accepted_with_a_warning_naming_it(erp, place_order):
    """Closing note: tracking-code reuse warned in the admin only; an ERP posting the same code on two orders got no
    word. Not refused (one parcel may carry two orders of a buyer); the response carries a BCP §5 `warning`."""
    first, second = place_order(lines=[("CAM", 3000, 1)]), place_order(lines=[("CAM", 3000, 1)])
    shipped = [
        erp.post(
            f"/api/v1/orders/{order.public_id}/fulfillment-events/",
            {"type": "shipped", "tracking_number": code, "carrier": "Correios"},
            format="json",
        )
        for order, code in ((first, "BR123456785BR"), (second, "br 123456785 br"))
    ]

    assert [response.status_code for response in shipped] == [201, 201]
    assert "messages" not in shipped[0].json()
    assert shipped[1].json()["messages"] == [
        {
            "type": "warning",
            "code": "tracking_number_shared",
            "path": "$.tracking_number",
            "content": f"Atenção: o código de rastreio BR123456785BR também está no pedido #{first.number}. "
            "Confira se o código está certo; se for outro, corrija-o com "
            f"POST /api/v1/orders/{second.public_id}/tracking-corrections/ e event_id {shipped[1].json()['id']}.",
        }
    ]
    assert FulfillmentEvent.objects.filter(order=second, type="shipped", tracking_number="BR123456785BR").exists()


def test_a_wrong_tracking_code_is_corrected_through_the_api_once_as_the_admin_does(
    erp, place_order, django_capture_on_commit_callbacks
):
    """Closing note: the API had no way to correct a code posted wrong (its own warning said "confira" and nothing
    more). Following the warning: one `tracking_corrected` event naming the shipment, the timeline entry, the
    buyer's correction e-mail (the admin's “Corrigir rastreio” sends it); sent again — a retry without a key, or
    with the same key — it changes nothing and e-mails no one."""
    first, second = place_order(lines=[("CAM", 3000, 1)]), place_order(lines=[("CAM", 3000, 1)])
    for order in (first, second):
        with django_capture_on_commit_callbacks(execute=True):
            shipped = erp.post(
                f"/api/v1/orders/{order.public_id}/fulfillment-events/",
                {"type": "shipped", "tracking_number": "BR123456785BR", "carrier": "Correios"},
                format="json",
            )
    warning = shipped.json()["messages"][0]["content"]
    url = f"/api/v1/orders/{second.public_id}/tracking-corrections/"
    shipment_id = shipped.json()["id"]
    assert f"POST {url} e event_id {shipment_id}." in warning
    mail.outbox.clear()

    body = {"event_id": shipment_id, "tracking_number": "AA473124829GB"}
    with django_capture_on_commit_callbacks(execute=True):
        created = erp.post(url, body, format="json")
    with django_capture_on_commit_callbacks(execute=True):
        again = erp.post(url, body, format="json")  # a retry without an Idempotency-Key
    with django_capture_on_commit_callbacks(execute=True):
        keyed = [erp.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="fix-1") for _ in range(2)]

    correction = FulfillmentEvent.objects.get(order=second, type="tracking_corrected")
    assert created.status_code == 201
    assert created.json() == {
        "id": correction.public_id,
        "occurred_at": created.json()["occurred_at"],
        "type": "tracking_corrected",
        "line_items": [{"id": second.lines.get().public_id, "quantity": 1}],
        "tracking_number": "AA473124829GB",
        "tracking_url": "https://rastreamento.correios.com.br/app/index.php?objeto=AA473124829GB",
        "carrier": "Correios",
        "description": "Código de rastreio corrigido (era BR123456785BR)",
        "corrects": shipment_id,
    }
    assert (again.status_code, again.json()) == (200, created.json())
    assert [(r.status_code, r.json()) for r in keyed] == [(200, created.json())] * 2
    assert keyed[1]["Idempotent-Replayed"] == "true"
    assert correction.corrects.public_id == shipment_id
    timeline = OrderEvent.objects.filter(order=second, kind="tracking_corrected")
    assert [e.message for e in timeline] == ["Código de rastreio corrigido: BR123456785BR → AA473124829GB (Correios)"]
    assert timeline.get().actor == api_actor(User.objects.get(username__startswith="erp-").get_username())
    assert [m.subject for m in mail.outbox] == [f"Loja Exemplo: Código de rastreio corrigido: pedido #{second.number}"]
    # the first order's code is now its own: no warning on the second any more
    assert "messages" not in created.json()


def test_tracking_correction_errors_name_the_field_in_portuguese(erp, place_order):
    order = place_order(lines=[("CAM", 3000, 1)])
    shipment = erp.post(
        f"/api/v1/orders/{order.public_id}/fulfillment-events/",
        {"type": "shipped", "tracking_number": "BR123456785BR", "carrier": "Correios"},
        format="json",
    ).json()
    url = f"/api/v1/orders/{order.public_id}/tracking-corrections/"
    missing = erp.post(url, {"event_id": shipment["id"]}, format="json")
    bad_code = erp.post(url, {"event_id": shipment["id"], "tracking_number": "BR1"}, format="json")
    unknown = erp.post(url, {"event_id": "evt_nope", "tracking_number": "AA473124829GB"}, format="json")
    same = erp.post(url, {"event_id": shipment["id"], "tracking_number": "BR123456785BR"}, format="json")
    assert (missing.status_code, list(missing.json())) == (400, ["tracking_number"])
    assert bad_code.status_code == 400 and "Código dos Correios inválido" in bad_code.json()["tracking_number"][0]
    assert (unknown.status_code, unknown.json()) == (400, {"event_id": ["Envio não encontrado neste pedido."]})
    assert (same.status_code, same.json()) == (
        400,
        {"tracking_number": ["Este já é o código do envio, com a mesma transportadora."]},
    )
    assert _client_for("view_order").post(url, {}, format="json").status_code == 403
    assert erp.post("/api/v1/orders/order_nope/tracking-corrections/", {}, format="json").status_code == 404
    assert FulfillmentEvent.objects.filter(type="tracking_corrected").count() == 0


def test_fulfillment_event_validation_errors_name_the_field(erp, place_order):
    order = place_order(lines=[("CAM", 3000, 1)])
    line = order.lines.get()
    url = f"/api/v1/orders/{order.public_id}/fulfillment-events/"
    response = erp.post(url, {"type": "Shipped!"}, format="json")
    assert response.status_code == 400 and "type" in response.json()
    response = erp.post(url, {"type": "shipped", "line_items": [{"id": line.public_id, "quantity": 0}]}, format="json")
    assert response.status_code == 400 and "line_items" in response.json()
    response = erp.post(
        url,
        {"type": "shipped", "tracking_number": "BR123456785BR", "line_items": [{"id": line.public_id, "quantity": 2}]},
        format="json",
    )
    assert response.status_code == 400
    assert list(response.json()) == ["line_items[0].quantity"]
    assert (
        erp.post("/api/v1/orders/order_nope/fulfillment-events/", {"type": "shipped"}, format="json").status_code == 404
    )
    assert FulfillmentEvent.objects.count() == 0


def test_create_refund_adjustment_and_guard(erp, place_order):
    order = place_order(lines=[("CAM", 3000, 1)], freight=800)
    url = f"/api/v1/orders/{order.public_id}/adjustments/"
    response = erp.post(url, {"type": "refund", "amount": 1000, "reason": "Avaria"}, format="json")
    assert response.status_code == 201
    assert response.json()["totals"] == [{"type": "total", "amount": -1000}]
    assert response.json()["status"] == "pending"
    response = erp.post(url, {"type": "refund", "amount": 2801, "reason": "Demais"}, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["amount"]
    response = erp.post(url, {"type": "refund", "reason": "Sem valor"}, format="json")
    assert response.status_code == 400 and list(response.json()) == ["amount"]
    response = erp.post(url, {"type": "gift", "reason": "x"}, format="json")
    assert response.status_code == 400 and "type" in response.json()
    assert Adjustment.objects.filter(order=order).count() == 1


def test_create_cancellation_adjustment(erp, place_order):
    order = place_order()
    response = erp.post(
        f"/api/v1/orders/{order.public_id}/adjustments/", {"type": "cancellation", "reason": "ERP"}, format="json"
    )
    assert response.status_code == 201
    assert response.json()["type"] == "cancellation"
    order.refresh_from_db()
    assert order.status == "canceled"


def test_add_note(erp, place_order):
    order = place_order()
    url = f"/api/v1/orders/{order.public_id}/notes/"
    response = erp.post(url, {"text": "Separado no galpão 2"}, format="json")
    assert response.status_code == 201
    note = OrderEvent.objects.get(order=order, kind="note")
    assert (note.message, note.internal, note.actor) == ("Separado no galpão 2", True, note.actor)
    assert note.actor.startswith("api:erp-")
    response = erp.post(url, {"text": ""}, format="json")
    assert response.status_code == 400 and "text" in response.json()


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("linha 1\nlinha 2\tcoluna", 201),
        ("tab\x0bvertical", 400),
        ("uni\x1fdade", 400),
        ("nul\x00", 400),
        ("del\x7f", 201),
    ],
)
def test_a_note_refuses_control_characters_but_line_feed_and_tab(erp, place_order, text, status):
    """A note keeps its line feeds and tabs; any other character below U+0020 is refused, naming the field."""
    order = place_order()
    response = erp.post(f"/api/v1/orders/{order.public_id}/notes/", {"text": text}, format="json")
    assert response.status_code == status
    if status == 400:
        assert "text" in response.json()
    else:
        assert OrderEvent.objects.get(order=order, kind="note").message == text


def test_api_is_browsable_for_staff_sessions(admin_client, place_order):
    place_order()
    response = admin_client.get("/api/v1/orders/", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    assert "text/html" in response["Content-Type"]


def test_idempotency_key_replays_never_double(erp, place_order):
    order = place_order(lines=[("CAM", 3000, 1)], freight=800)
    url = f"/api/v1/orders/{order.public_id}/adjustments/"
    body = {"type": "refund", "amount": 1000, "reason": "Avaria"}
    first = erp.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="erp-42")
    again = erp.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="erp-42")
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert Adjustment.objects.filter(order=order).count() == 1
    conflict = erp.post(url, {**body, "amount": 999}, format="json", HTTP_IDEMPOTENCY_KEY="erp-42")
    assert conflict.status_code == 409
    assert list(conflict.json()) == ["Idempotency-Key"]
    assert Adjustment.objects.filter(order=order).count() == 1


def test_failed_request_under_a_key_is_not_stored(erp, place_order):
    order = place_order(lines=[("CAM", 3000, 1)], freight=800)
    url = f"/api/v1/orders/{order.public_id}/adjustments/"
    too_much = erp.post(
        url, {"type": "refund", "amount": 9999, "reason": "x"}, format="json", HTTP_IDEMPOTENCY_KEY="k1"
    )
    assert too_much.status_code == 400
    fixed = erp.post(url, {"type": "refund", "amount": 100, "reason": "x"}, format="json", HTTP_IDEMPOTENCY_KEY="k2")
    assert fixed.status_code == 201


def test_staff_tokens_are_managed_in_the_admin(admin_client):
    assert admin_client.get("/admin/authtoken/tokenproxy/").status_code == 200


def test_api_root_lists_orders_endpoint(erp):
    assert erp.get("/api/v1/").json() == {
        "orders": "http://testserver/api/v1/orders/",
        "openapi": "http://testserver/api/v1/openapi.json",
    }


def test_api_refusals_are_portuguese_and_specific_with_english_entries(erp, place_order):
    """Gap: the API's own refusals were English-only words with no subject ("already used for a different
    request", "must have at most 255 characters", "order not found", "required for a refund"). They are pt-BR
    source strings that say which field and why, in English under Accept-Language: en."""
    order = place_order(lines=[("CAM", 3000, 1)], freight=800)
    url = f"/api/v1/orders/{order.public_id}/adjustments/"
    body = {"type": "refund", "amount": 100, "reason": "Avaria"}

    def errors(response, status_code):  # type: ignore[no-untyped-def]
        assert response.status_code == status_code
        return response.json()

    assert errors(erp.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="k" * 256), 400) == {
        "Idempotency-Key": ["O cabeçalho Idempotency-Key pode ter no máximo 255 caracteres; este tem 256."]
    }
    assert erp.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="erp-7").status_code == 201
    assert errors(erp.post(url, {**body, "amount": 99}, format="json", HTTP_IDEMPOTENCY_KEY="erp-7"), 409) == {
        "Idempotency-Key": [
            "O Idempotency-Key “erp-7” já foi usado com outra requisição (outro endereço ou outro corpo): "
            "use uma chave nova para uma requisição nova."
        ]
    }
    assert errors(erp.post(url, {"type": "refund", "reason": "x"}, format="json"), 400) == {
        "amount": ["Informe amount, o valor a reembolsar em centavos: obrigatório num reembolso (refund)."]
    }
    assert errors(erp.post(url, {"type": "return", "reason": "x"}, format="json"), 400) == {
        "line_items": ["Informe line_items, os itens devolvidos: obrigatório numa devolução (return)."]
    }
    assert errors(erp.get("/api/v1/orders/order_nope/"), 404) == {"detail": "Pedido order_nope não encontrado."}
    assert errors(erp.get("/api/v1/orders/", {"status": "sent"}), 400) == {
        "status": [
            "status “sent” não existe: use um destes valores: placed, partially_shipped, shipped, delivered, "
            "canceled, returned."
        ]
    }
    bad_date = errors(erp.get("/api/v1/orders/", {"placed_after": "ontem"}), 400)
    assert bad_date == {
        "placed_after": ["placed_after não é uma data e hora ISO 8601: use, por exemplo, 2026-07-28T12:00:00-03:00."]
    }

    english = {"HTTP_ACCEPT_LANGUAGE": "en"}
    assert errors(erp.post(url, {**body, "amount": 98}, format="json", HTTP_IDEMPOTENCY_KEY="erp-7", **english), 409)[
        "Idempotency-Key"
    ] == [
        "The Idempotency-Key “erp-7” was already used with a different request (another address or another body): "
        "use a new key for a new request."
    ]
    assert errors(erp.post(url, {"type": "refund", "reason": "x"}, format="json", **english), 400) == {
        "amount": ["Give amount, the value to refund in centavos: required for a refund."]
    }
    assert errors(erp.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="k" * 300, **english), 400) == {
        "Idempotency-Key": ["The Idempotency-Key header may have at most 255 characters; this one has 300."]
    }
    assert errors(erp.get("/api/v1/orders/order_nope/", **english), 404) == {"detail": "Order order_nope not found."}
    assert errors(erp.get("/api/v1/orders/", {"placed_before": "x"}, **english), 400) == {
        "placed_before": ["placed_before is not an ISO 8601 date-time: use, for example, 2026-07-28T12:00:00-03:00."]
    }
    assert Adjustment.objects.filter(order=order).count() == 1


def test_the_openapi_describes_every_route_and_the_serializers_fields(erp):
    """The merchant API's OpenAPI (`/api/v1/openapi.json`) names each route of `orders/api_urls.py`, no other, and
    each write's body names its serializer's fields (the tracking correction included)."""
    from orders import api_urls
    from orders import serializers as s

    document = erp.get("/api/v1/openapi.json").json()
    routes = {
        "/api/v1/" + str(p.pattern).replace("<str:order_id>", "{order_id}")
        for p in api_urls.urlpatterns
        if str(p.pattern) not in ("", "openapi.json")
    }
    assert (document["openapi"], set(document["paths"])) == ("3.1.0", routes)
    bodies = {
        "fulfillment-events": s.FulfillmentEventCreateSerializer,
        "tracking-corrections": s.TrackingCorrectionCreateSerializer,
        "adjustments": s.AdjustmentCreateSerializer,
        "notes": s.NoteCreateSerializer,
    }
    for name, serializer in bodies.items():
        schema = document["paths"][f"/api/v1/orders/{{order_id}}/{name}/"]["post"]["requestBody"]["content"]
        fields = serializer().fields
        assert set(schema["application/json"]["schema"]["properties"]) == set(fields), name
        assert set(schema["application/json"]["schema"]["required"]) == {n for n, f in fields.items() if f.required}
    assert _client_for().get("/api/v1/openapi.json").status_code == 403
