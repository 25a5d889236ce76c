"""Checkout over A2A against a live uvicorn: the seed's structured and natural-language requests, context
continuation (also across two server instances), remove/update/cancel, ambiguity, Pix completion.

Seed 004; BCP.md §13.3; BCP-A2A-02/04/05/06/07, BCP-CHK-01.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.bcp_app.test_a2a_helpers import (
    EXTENSION,
    SEED_HEADERS,
    LiveServer,
    checkout_of,
    data,
    live_fixture,  # noqa: F401 (fixture "live")
    make_product,
    rpc,
    sdk_send,
    send_message,
    separate_a2a_app,
    server_fixture,  # noqa: F401 (fixture "server")
)

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]

SEED_CONTEXT = "aad14abc-4082-4748-84ca-4afff85aedfa"
SEED_STRUCTURED = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "SendMessage",
    "params": {
        "message": {
            "role": "ROLE_USER",
            "parts": [
                {
                    "data": {"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 1},
                    "mediaType": "application/json",
                }
            ],
            "messageId": "e94a8c10-69f4-4c4c-b988-21a298302da6",
            "contextId": SEED_CONTEXT,
            "extensions": [EXTENSION],
        }
    },
}
SEED_NATURAL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {
        "message": {
            "role": "ROLE_USER",
            "parts": [{"text": "add a Pixel 10 Pro to my checkout"}],
            "messageId": "69da8f87-991b-479e-80dc-ed92fcb57cbe",
            "extensions": [EXTENSION],
        }
    },
}
SEED_LINE_ITEM_ITEM = {"id": "PIXEL-10-PRO", "title": "Pixel 10 Pro", "price": 599900}
BUYER = {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br"}
PIX_INSTRUMENT = {"id": "instr_1", "handler_id": "pix_recebedor_001", "type": "pix", "selected": True}


@pytest.fixture
def pixel() -> Any:
    return make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900)


@pytest.fixture
def shirts() -> Any:
    return make_product(
        "Camiseta Básica",
        "CAM",
        4990,
        requires_shipping=False,
        variants=(
            ("CAM-PRETA-M", "Preta / M", {"cor": "Preta", "tamanho": "M"}),
            ("CAM-PRETA-G", "Preta / G", {"cor": "Preta", "tamanho": "G"}),
            ("CAM-BRANCA-M", "Branca / M", {"cor": "Branca", "tamanho": "M"}),
        ),
    )


def lines(checkout: dict[str, Any]) -> list[tuple[str, int]]:
    return [(line["item"]["id"], line["quantity"]) for line in checkout["line_items"]]


def test_seed_structured_add_reply_bcp_a2a_05(server: LiveServer, pixel: Any):
    from bcp_app.models import A2AContext

    response = httpx.post(server.a2a_url, content=json.dumps(SEED_STRUCTURED), headers=SEED_HEADERS, timeout=30)

    body = response.json()
    message = body["result"]["message"]
    checkout = checkout_of(body)
    assert list(body) == ["jsonrpc", "id", "result"] and body["id"] == 2
    assert list(message) == ["contextId", "messageId", "parts", "role", "extensions"]
    assert message["contextId"] == SEED_CONTEXT
    assert message["role"] == "ROLE_AGENT"
    assert message["extensions"] == [EXTENSION]
    assert len(message["parts"]) == 1 and message["parts"][0]["mediaType"] == "application/json"
    assert list(message["parts"][0]["data"]) == ["a2a.bcp.checkout"]
    assert checkout["line_items"][0]["item"] == SEED_LINE_ITEM_ITEM
    assert checkout["line_items"][0]["quantity"] == 1
    assert checkout["currency"] == "BRL"
    assert checkout["totals"] == [{"type": "subtotal", "amount": 599900}, {"type": "total", "amount": 599900}]
    assert checkout["ucp"]["version"] == "2026-07-28"
    assert {"type": "terms_of_service", "url": f"{server.base_url}/termos", "title": "Termos de uso"} in checkout[
        "links"
    ]
    # Integers stay integers on the wire (the SDK's protobuf Struct would say 599900.0).
    assert '"amount":599900' in response.text.replace(" ", "") and "599900.0" not in response.text
    assert A2AContext.objects.get(context_id=SEED_CONTEXT).checkout_id == checkout["id"]


def test_seed_natural_language_add_picks_the_exact_title(server: LiveServer, pixel: Any):
    make_product("Pixel 10 Pro XL", "PIXEL-10-PRO-XL", 699900)

    body = rpc(server.a2a_url, SEED_NATURAL)

    message = body["result"]["message"]
    assert lines(checkout_of(body)) == [("PIXEL-10-PRO", 1)]
    assert message["parts"][0]["text"].startswith("Added 1 × Pixel 10 Pro to your checkout.")
    assert message["contextId"] != ""


def test_portuguese_add_with_colour_and_size(server: LiveServer, shirts: Any):
    body = rpc(server.a2a_url, send_message([{"text": "adicione 2 camisetas pretas M ao carrinho"}]))

    assert lines(checkout_of(body)) == [("CAM-PRETA-M", 2)]
    assert body["result"]["message"]["parts"][0]["text"].startswith(
        "Adicionei 2 × Camiseta Básica — Preta / M ao carrinho."
    )


def test_ambiguous_text_asks_with_candidates_and_creates_nothing(server: LiveServer, shirts: Any):
    from shop.models import Checkout

    body = rpc(server.a2a_url, send_message([{"text": "adicione uma camiseta preta"}]))

    parts = body["result"]["message"]["parts"]
    assert parts[0]["text"] == (
        'Encontrei mais de uma opção para "camiseta". Qual delas você quer? Responda com o id do item.'
    )
    assert parts[1] == data(
        {
            "a2a.bcp.candidates": [
                {"id": "CAM-PRETA-M", "title": "Camiseta Básica — Preta / M", "price": 4990},
                {"id": "CAM-PRETA-G", "title": "Camiseta Básica — Preta / G", "price": 4990},
            ]
        }
    )
    assert len(parts) == 2
    assert Checkout.objects.count() == 0


def test_unknown_product_text_is_not_found(server: LiveServer, pixel: Any):
    body = rpc(server.a2a_url, send_message([{"text": "add a flux capacitor"}]))

    assert body["result"]["message"]["parts"] == [
        {"text": 'I could not find any product for "flux capacitor". Could you describe it differently?'}
    ]


def test_context_continues_the_checkout_and_remove_and_update(server: LiveServer, pixel: Any, shirts: Any):
    first = rpc(server.a2a_url, send_message([data({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO"})]))
    context_id = first["result"]["message"]["contextId"]
    checkout_id = checkout_of(first)["id"]

    second = rpc(
        server.a2a_url,
        send_message(
            [data({"action": "add_to_checkout", "variant_id": "CAM-BRANCA-M", "quantity": 3})], context_id=context_id
        ),
    )
    removed = rpc(server.a2a_url, send_message([{"text": "remova 1 camiseta do carrinho"}], context_id=context_id))
    updated = rpc(
        server.a2a_url, send_message([data({"action": "update_checkout", "buyer": BUYER})], context_id=context_id)
    )
    fetched = rpc(server.a2a_url, send_message([data({"action": "get_checkout"})], context_id=context_id))

    assert checkout_of(second)["id"] == checkout_id
    assert lines(checkout_of(second)) == [("PIXEL-10-PRO", 1), ("CAM-BRANCA-M", 3)]
    assert lines(checkout_of(removed)) == [("PIXEL-10-PRO", 1), ("CAM-BRANCA-M", 2)]
    assert checkout_of(updated)["buyer"] == BUYER
    assert lines(checkout_of(updated)) == [("PIXEL-10-PRO", 1), ("CAM-BRANCA-M", 2)]
    assert checkout_of(fetched) == checkout_of(updated)


def test_the_buyers_payment_preference_outlives_the_next_update_bcp_pay_08(server: LiveServer, pixel: Any):
    """An A2A update rebuilds the full state from the checkout's answer, whose `context` left `payment` out: the
    next update (the buyer, say) dropped the preference `context.payment` had set, and the buyer's page stopped
    opening on the method asked for. The answer shows the preference as understood and later updates keep it."""
    from shop.models import Checkout

    first = rpc(server.a2a_url, send_message([data({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO"})]))
    context_id = first["result"]["message"]["contextId"]
    preferred = rpc(
        server.a2a_url,
        send_message(
            [data({"action": "update_checkout", "context": {"payment": [{"handler": "com.google.pay"}]}})],
            context_id=context_id,
        ),
    )
    later = rpc(
        server.a2a_url, send_message([data({"action": "update_checkout", "buyer": BUYER})], context_id=context_id)
    )

    assert checkout_of(preferred)["context"] == {"payment": [{"handler": "com.google.pay"}]}
    assert checkout_of(later)["context"] == {"payment": [{"handler": "com.google.pay"}]}
    assert Checkout.objects.get(public_id=checkout_of(later)["id"]).context == {"payment": ["card"]}


def test_remove_structured_and_cancel(server: LiveServer, pixel: Any, shirts: Any):
    first = rpc(server.a2a_url, send_message([data({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO"})]))
    context_id = first["result"]["message"]["contextId"]
    rpc(
        server.a2a_url,
        send_message([data({"action": "add_to_checkout", "product_id": "CAM-PRETA-G"})], context_id=context_id),
    )

    removed = rpc(
        server.a2a_url,
        send_message([data({"action": "remove_from_checkout", "product_id": "PIXEL-10-PRO"})], context_id=context_id),
    )
    canceled = rpc(server.a2a_url, send_message([data({"action": "cancel_checkout"})], context_id=context_id))
    again = rpc(
        server.a2a_url,
        send_message([data({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO"})], context_id=context_id),
    )

    assert lines(checkout_of(removed)) == [("CAM-PRETA-G", 1)]
    assert checkout_of(canceled)["status"] == "canceled"
    # A finished checkout lets the same context start a new one (BCP-A2A-08 analogue for direct messages).
    assert checkout_of(again)["id"] != checkout_of(canceled)["id"]
    assert lines(checkout_of(again)) == [("PIXEL-10-PRO", 1)]


def test_context_continues_across_two_server_instances(server: LiveServer, live: LiveServer, pixel: Any, shirts: Any):
    other = LiveServer(separate_a2a_app()).start()
    try:
        first = rpc(server.a2a_url, send_message([{"text": "add a Pixel 10 Pro to my checkout"}]))
        context_id = first["result"]["message"]["contextId"]
        second = rpc(other.a2a_url, send_message([{"text": "add camiseta branca tamanho M"}], context_id=context_id))
    finally:
        other.stop()

    assert checkout_of(second)["id"] == checkout_of(first)["id"]
    assert lines(checkout_of(second)) == [("PIXEL-10-PRO", 1), ("CAM-BRANCA-M", 1)]


def test_sdk_client_structured_add_keeps_integers(server: LiveServer, pixel: Any):
    from google.protobuf.json_format import MessageToDict

    reply = sdk_send(
        server.base_url, [data({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 2})]
    )

    checkout = MessageToDict(reply.parts[0].data)["a2a.bcp.checkout"]
    assert reply.context_id != ""
    assert checkout["line_items"][0]["item"] == SEED_LINE_ITEM_ITEM
    assert checkout["totals"][-1] == {"type": "total", "amount": 1199800}


def test_bad_quantity_names_the_field(server: LiveServer, pixel: Any):
    body = rpc(
        server.a2a_url, send_message([data({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 0})])
    )

    assert body["error"]["code"] == -32602
    assert "quantity" in body["error"]["message"]


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"buyer": "ana@example.com.br"}, "$.buyer"),
        ({"buyer": ["Ana"]}, "$.buyer"),
        ({"address": "Avenida Paulista, 1000"}, "$.fulfillment.methods[0].destinations[0]"),
        ({"shipping_address": 1000}, "$.fulfillment.methods[0].destinations[0]"),
    ],
)
def test_update_with_a_non_object_buyer_or_address_is_refused_bcp_err_05(
    server: LiveServer, pixel: Any, change: dict[str, Any], path: str
):
    """BCP-ERR-05, BCP §18 (3): a buyer or address that is not an object was dropped without a word (the agent
    believed it set); REST and MCP refuse the same input naming the field, and so does A2A now."""
    rpc(server.a2a_url, SEED_STRUCTURED)

    body = rpc(server.a2a_url, send_message([data({"action": "update_checkout", **change})], context_id=SEED_CONTEXT))

    assert body["error"]["code"] == -32602, body
    assert body["error"]["message"] == f"Campo inválido {path}: deve ser um objeto JSON"
    fetched = checkout_of(
        rpc(server.a2a_url, send_message([data({"action": "get_checkout"})], context_id=SEED_CONTEXT))
    )
    assert "buyer" not in fetched and fetched["fulfillment"]["methods"] == []  # nothing changed


def pix_ready_checkout(server: LiveServer) -> tuple[str, dict[str, Any]]:
    """Seed add, then buyer + Pix selected through update_checkout (PIX.md §2.1, A2A binding)."""
    rpc(server.a2a_url, SEED_STRUCTURED)
    body = rpc(
        server.a2a_url,
        send_message(
            [
                data({"action": "update_checkout", "buyer": BUYER}),
                data({"a2a.bcp.checkout.payment": {"instruments": [PIX_INSTRUMENT]}}),
            ],
            context_id=SEED_CONTEXT,
        ),
    )
    return SEED_CONTEXT, checkout_of(body)


SEED_COMPLETE = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "SendMessage",
    "params": {
        "message": {
            "role": "ROLE_USER",
            "parts": [
                {"data": {"action": "complete_checkout"}, "mediaType": "application/json"},
                {
                    "data": {
                        "a2a.bcp.checkout.payment": {"instruments": [PIX_INSTRUMENT]},
                        "a2a.bcp.checkout.signals": {
                            "br.dev.bcp.buyer_ip": "203.0.113.42",
                            "br.dev.bcp.user_agent": "Mozilla/5.0 ...",
                        },
                    },
                    "mediaType": "application/json",
                },
            ],
            "messageId": "fcdd5da7-e593-414c-aa1a-3208e0551ba7",
            "contextId": SEED_CONTEXT,
            "extensions": [EXTENSION],
        }
    },
}


def test_pix_completion_seed_request_then_settlement_carries_the_order_bcp_a2a_06(server: LiveServer, pixel: Any):
    from payments.sandbox.services import PayOptions, pay

    _context, ready = pix_ready_checkout(server)
    txid = ready["payment"]["instruments"][0]["pix"]["txid"]
    assert ready["status"] == "ready_for_complete"

    completing = rpc(server.a2a_url, SEED_COMPLETE)
    pay(txid=txid, options=PayOptions())  # the sandbox PSP pays and delivers the webhook (Celery, eager)
    settled = rpc(server.a2a_url, send_message([data({"action": "get_checkout"})], context_id=SEED_CONTEXT))
    replayed = rpc(server.a2a_url, SEED_COMPLETE)

    assert checkout_of(completing)["status"] == "complete_in_progress"
    assert "order" not in checkout_of(completing)
    completed = checkout_of(settled)
    assert completed["status"] == "completed"
    assert list(completed["order"]) == ["id", "permalink_url"]
    assert completed["order"]["id"].startswith("order_")
    assert completed["order"]["permalink_url"].startswith(f"{server.base_url}/orders/")
    # BCP-A2A-07: the retried complete gets its original reply, nothing re-executed.
    assert replayed["result"] == completing["result"]


def test_product_resolution_needs_the_checkout_capability_bcp_neg_06(server: LiveServer, shirts: Any):
    """BCP §3 step 6 / BCP-NEG-06: A2A catalogue intents go through the operations layer, which checks the
    negotiation; a platform without checkout gets `capabilities_incompatible`, not a product question."""
    from tests.bcp_app.test_a2a_helpers import SEED_PROFILE, cache_profile, platform_profile

    profile = platform_profile()
    profile["ucp"]["capabilities"] = {
        "br.dev.bcp.shopping.order": profile["ucp"]["capabilities"]["br.dev.bcp.shopping.order"]
    }
    cache_profile(SEED_PROFILE, profile)

    reply = rpc(server.a2a_url, send_message([{"text": "adicione uma camiseta preta ao carrinho"}]))

    parts = reply["result"]["message"]["parts"]
    assert not any("a2a.bcp.candidates" in part.get("data", {}) for part in parts)
    refused = checkout_of(reply)
    assert refused["ucp"]["status"] == "error"
    assert [m["code"] for m in refused["messages"]] == ["capabilities_incompatible"]


def test_a2a_checkout_data_part_validates_against_the_schemas(server: LiveServer, pixel: Any):
    """The `a2a.bcp.checkout` data part is the same model output as REST and MCP (BCP-A2A-05, BCP-CHK-02)."""
    from bcp_app.protocol.schemas import CheckoutResponse
    from tests.bcp_app.schema_check import errors

    _context, ready = pix_ready_checkout(server)

    assert errors(ready, "shopping/checkout.json") == []
    assert CheckoutResponse.validated(ready) == ready


def test_a_repeated_message_id_replays_the_same_bytes(server: LiveServer, pixel: Any):
    """BCP-A2A-07 / BCP-IDEM-04: a retried `messageId` gets the original reply byte for byte."""
    import httpx

    pix_ready_checkout(server)
    raw = json.dumps(SEED_COMPLETE).encode()
    first = httpx.post(server.a2a_url, content=raw, headers=SEED_HEADERS, timeout=30)
    again = httpx.post(server.a2a_url, content=raw, headers=SEED_HEADERS, timeout=30)

    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    assert checkout_of(again.json())["status"] == "complete_in_progress"


def test_pix_paid_before_complete_completes_synchronously(server: LiveServer, pixel: Any):
    """PIX.md §3.1: paid before complete → `ready_for_complete` + info `pix_payment_received`; the
    platform's complete then returns `completed` synchronously (no `invalid_checkout_status`)."""
    from orders.selectors import order_by_checkout
    from payments.models import PixCharge
    from payments.sandbox.services import PayOptions, pay

    _context, ready = pix_ready_checkout(server)
    pay(txid=ready["payment"]["instruments"][0]["pix"]["txid"], options=PayOptions())
    waiting = checkout_of(
        rpc(server.a2a_url, send_message([data({"action": "get_checkout"})], context_id=SEED_CONTEXT))
    )

    completed = checkout_of(rpc(server.a2a_url, SEED_COMPLETE))

    assert waiting["status"] == "ready_for_complete"
    assert [(m["type"], m["code"]) for m in waiting["messages"]] == [("info", "pix_payment_received")]
    assert "order" not in waiting
    assert completed["status"] == "completed"
    assert "messages" not in completed
    assert PixCharge.objects.filter(reference=completed["id"]).count() == 1
    assert completed["order"] == {
        "id": order_by_checkout(completed["id"]).public_id,
        "permalink_url": completed["order"]["permalink_url"],
    }


def test_complete_with_a_handler_not_offered_is_payment_failed(server: LiveServer, pixel: Any):
    """BCP §11.2 / BCP-PAY-03: the platform is Pix-only, so `gpay` is not a handler of this checkout."""
    from orders.models import Order

    _context, ready = pix_ready_checkout(server)
    card = {
        "id": "instr_c",
        "handler_id": "gpay",
        "type": "card",
        "credential": {"type": "PAYMENT_GATEWAY", "token": "success_token"},
    }
    refused = checkout_of(
        rpc(
            server.a2a_url,
            send_message(
                [data({"action": "complete_checkout"}), data({"a2a.bcp.checkout.payment": {"instruments": [card]}})],
                context_id=SEED_CONTEXT,
            ),
        )
    )

    assert list(ready["ucp"]["payment_handlers"]) == ["br.dev.bcp.pix"]
    assert refused["status"] == "ready_for_complete"
    assert [(m["code"], m["path"]) for m in refused["messages"]][-1] == (
        "payment_failed",
        "$.payment.instruments[0].handler_id",
    )
    assert not Order.objects.exists()


ADDRESS = {
    "first_name": "Ana",
    "last_name": "Souza",
    "street_address": "Rua das Flores, 123",
    "extended_address": "Apto 45 - Jardim Paulista",
    "address_locality": "São Paulo",
    "address_region": "SP",
    "postal_code": "01310-100",
    "address_country": "BR",
}


def test_update_address_shipping_choice_and_coupon_keep_the_rest_bcp_chk_06(server: LiveServer):
    from shop.models import Coupon, ShippingMethod

    ShippingMethod.objects.create(code="pac", title="PAC", flat_price=1890, days_min=3, days_max=8)
    Coupon.objects.create(code="BEMVINDO10", title="10%", kind="percent", percent=10)
    make_product("Caneca", "CANECA-1", 3990, requires_shipping=True)
    first = rpc(server.a2a_url, send_message([{"text": "adicione 2 canecas ao carrinho"}]))
    context_id = first["result"]["message"]["contextId"]

    addressed = rpc(
        server.a2a_url,
        send_message([data({"action": "update_checkout", "buyer": BUYER, "address": ADDRESS})], context_id=context_id),
    )
    chosen = rpc(
        server.a2a_url,
        send_message([data({"action": "update_checkout", "fulfillment_option_id": "pac"})], context_id=context_id),
    )
    discounted = rpc(server.a2a_url, send_message([{"text": "aplique o cupom bemvindo10"}], context_id=context_id))

    assert first["result"]["message"]["parts"][0]["text"].startswith(
        "Adicionei 2 × Caneca ao carrinho. Ainda faltam dados para finalizar."
    )
    method = checkout_of(addressed)["fulfillment"]["methods"][0]
    assert {k: v for k, v in method["destinations"][0].items() if k not in {"id", "type"}} == ADDRESS
    assert method["selected_destination_id"] == method["destinations"][0]["id"]
    assert checkout_of(addressed)["status"] == "incomplete"
    assert addressed["result"]["message"]["parts"] == [data({"a2a.bcp.checkout": checkout_of(addressed)})]
    assert checkout_of(chosen)["status"] == "ready_for_complete"
    assert checkout_of(chosen)["totals"] == [
        {"type": "subtotal", "amount": 7980},
        {"type": "fulfillment", "display_text": "PAC", "amount": 1890},
        {"type": "total", "amount": 9870},
    ]
    final = checkout_of(discounted)
    assert final["discounts"]["codes"] == ["BEMVINDO10"]
    assert final["totals"][-1] == {"type": "total", "amount": 9072}
    assert final["buyer"] == BUYER
    assert final["fulfillment"]["methods"][0]["groups"][0]["selected_option_id"] == "pac"
    assert discounted["result"]["message"]["parts"][0]["text"] == (
        "Carrinho atualizado. Pronto para finalizar. Total: R$ 90,72."
    )


def test_finalizar_compra_uses_the_selected_pix_instrument(server: LiveServer, pixel: Any):
    from payments.sandbox.services import PayOptions, pay

    rpc(server.a2a_url, SEED_STRUCTURED)
    before_payment = rpc(server.a2a_url, send_message([{"text": "finalizar compra"}], context_id=SEED_CONTEXT))
    ready = checkout_of(
        rpc(
            server.a2a_url,
            send_message(
                [
                    data({"action": "update_checkout", "buyer": BUYER}),
                    data({"a2a.bcp.checkout.payment": {"instruments": [PIX_INSTRUMENT]}}),
                ],
                context_id=SEED_CONTEXT,
            ),
        )
    )
    pay(txid=ready["payment"]["instruments"][0]["pix"]["txid"], options=PayOptions())

    completed = rpc(server.a2a_url, send_message([{"text": "finalizar compra"}], context_id=SEED_CONTEXT))

    assert before_payment["result"]["message"]["parts"][0]["text"].startswith("Para finalizar, escolha a forma")
    assert checkout_of(before_payment)["status"] == "incomplete"
    assert checkout_of(completed)["status"] == "completed"
    assert completed["result"]["message"]["parts"][0]["text"].startswith(
        "Pedido enviado para finalização. Pedido confirmado. Total: R$ 5.999,00. Acompanhe o pedido: "
    )


def test_sdk_client_natural_language_add_and_pix_completion(server: LiveServer, shirts: Any):
    from google.protobuf.json_format import MessageToDict

    from bcp_app.transports.a2a.messages import intify
    from payments.sandbox.services import PayOptions, pay

    added = sdk_send(server.base_url, [{"text": "adicione 2 camisetas pretas M ao carrinho"}])
    context_id = added.context_id
    ready = intify(
        MessageToDict(
            sdk_send(
                server.base_url,
                [
                    data(
                        {
                            "action": "update_checkout",
                            "buyer": BUYER,
                            "a2a.bcp.checkout.payment": {"instruments": [PIX_INSTRUMENT]},
                        }
                    )
                ],
                context_id=context_id,
            )
            .parts[0]
            .data
        )
    )["a2a.bcp.checkout"]
    pay(txid=ready["payment"]["instruments"][0]["pix"]["txid"], options=PayOptions())
    completed = sdk_send(
        server.base_url,
        [data({"action": "complete_checkout"}), data({"a2a.bcp.checkout.payment": {"instruments": [PIX_INSTRUMENT]}})],
        context_id=context_id,
    )

    assert added.parts[0].text.startswith("Adicionei 2 × Camiseta Básica — Preta / M ao carrinho.")
    assert ready["status"] == "ready_for_complete"
    assert ready["totals"][-1] == {"type": "total", "amount": 9980}
    checkout = intify(MessageToDict(completed.parts[0].data))["a2a.bcp.checkout"]
    assert completed.context_id == context_id
    assert checkout["status"] == "completed"
    # Member order is lost in the SDK's protobuf Struct on the client side; the members are what count.
    assert sorted(checkout["order"]) == ["id", "permalink_url"]


def test_each_message_is_answered_in_its_own_language_checkout_messages_included(
    server: LiveServer, pixel: Any, shirts: Any
):
    """A buyer who starts in English and goes on in Portuguese is answered in Portuguese: the reply's sentence and
    the checkout's messages (BCP §5.1 `content`, BCP-CHK-18) follow the language of each message with words; a
    message of data parts alone keeps the checkout's language (the last one the buyer used), as REST's
    `context.language` does. Before, the checkout kept its first language and one reply mixed both."""
    from google.protobuf.json_format import MessageToDict

    def said(message: Any) -> tuple[str, list[str]]:
        checkout = next(
            MessageToDict(part.data)["a2a.bcp.checkout"]
            for part in message.parts
            if part.HasField("data") and "a2a.bcp.checkout" in MessageToDict(part.data)
        )
        text = next((part.text for part in message.parts if part.text), "")
        return text, [m["content"] for m in checkout["messages"]]

    english = sdk_send(server.base_url, [{"text": "add a Pixel 10 Pro to my checkout"}])
    context_id = english.context_id
    portuguese = sdk_send(server.base_url, [{"text": "adicione 1 camiseta branca M"}], context_id=context_id)
    data_only = sdk_send(
        server.base_url, [data({"action": "update_checkout", "buyer": {"first_name": "Ana"}})], context_id=context_id
    )
    shown_again = sdk_send(server.base_url, [{"text": "show my cart"}], context_id=context_id)

    text, contents = said(english)
    assert text.startswith("Added 1 × Pixel 10 Pro to your checkout.")
    assert "Enter your email." in contents and "Enter your email." in text
    text, contents = said(portuguese)
    assert text.startswith("Adicionei 1 × Camiseta Básica — Branca / M ao carrinho.")
    assert "Informe o e-mail." in contents and "Informe o e-mail." in text
    assert "Enter your email." not in text and "Enter your email." not in contents
    _, contents = said(data_only)
    assert contents == ["Informe o e-mail.", "Informe o sobrenome."]
    text, contents = said(shown_again)
    assert text.startswith("Here is your checkout.")
    assert contents == ["Enter your email.", "Enter your last name."]
    assert "Informe" not in text


def test_finalizar_compra_in_a_new_language_completes_in_it(server: LiveServer, pixel: Any):
    """Closing note: a buyer who switched to Portuguese exactly at "finalizar compra" got the complete's checkout
    messages (BCP-CHK-18 `content`) in the conversation's earlier English beside a Portuguese sentence, and the order
    kept the earlier language. The complete answers in the language of the message that triggered it."""
    from orders.models import Order
    from payments.sandbox.services import PayOptions, pay

    english = rpc(server.a2a_url, send_message([{"text": "add a Pixel 10 Pro to my checkout"}]))
    context_id = english["result"]["message"]["contextId"]
    paying = rpc(
        server.a2a_url,
        send_message(
            [data({"action": "update_checkout", "a2a.bcp.checkout.payment": {"instruments": [PIX_INSTRUMENT]}})],
            context_id=context_id,
        ),
    )
    unfinished = rpc(server.a2a_url, send_message([{"text": "finalizar compra"}], context_id=context_id))
    ready = rpc(
        server.a2a_url,
        send_message([data({"action": "update_checkout", "buyer": BUYER})], context_id=context_id),
    )
    placing = rpc(server.a2a_url, send_message([{"text": "place my order"}], context_id=context_id))
    pay(txid=checkout_of(placing)["payment"]["instruments"][0]["pix"]["txid"], options=PayOptions())

    assert checkout_of(paying)["context"] == {"language": "en"}
    assert [m["content"] for m in checkout_of(unfinished)["messages"]] == [
        "Informe o e-mail.",
        "Informe o nome.",
        "Informe o sobrenome.",
    ]
    assert unfinished["result"]["message"]["parts"][0]["text"] == (
        "Pedido enviado para finalização. Ainda faltam dados para finalizar. Informe o e-mail. Informe o nome. "
        "Informe o sobrenome. Total: R$ 5.999,00."
    )
    # and back to English at the complete of the ready checkout: the order it places speaks it (its e-mails, page)
    assert (checkout_of(ready)["status"], checkout_of(ready)["context"]) == (
        "ready_for_complete",
        {"language": "pt-br"},
    )
    assert (checkout_of(placing)["status"], checkout_of(placing)["context"]) == (
        "complete_in_progress",
        {"language": "en"},
    )
    assert Order.objects.get(checkout_id=checkout_of(placing)["id"]).language == "en"


@pytest.mark.parametrize(
    ("words", "refusal"),
    [
        ("finalizar compra", "Cannot complete: the checkout is completed."),
        ("cancelar a compra", "Cannot cancel: the checkout is completed."),
        ("usar o cupom BEMVINDO", "Cannot update: the checkout is completed."),
    ],
)
def test_finalizar_atualizar_or_cancelar_on_a_completed_checkout_answers_only_its_refusal_in_its_language_bcp_chk_14(
    server: LiveServer, pixel: Any, words: str, refusal: str
):
    """Closing note: "finalizar compra" on a checkout completed in English answered "Pedido enviado para finalização.
    Pedido confirmado. …" beside the checkout's English refusal; "cancelar" or a coupon ("atualizar") put "Compra
    cancelada." / the update's summary there. A complete, update or cancel on `completed` changes nothing and answers
    `invalid_checkout_status` (BCP-CHK-14): that refusal is the whole sentence, in the checkout's language (a
    completed checkout takes no change of language)."""
    from google.protobuf.json_format import MessageToDict

    from bcp_app.transports.a2a.messages import intify
    from payments.sandbox.services import PayOptions, pay

    def checkout(message: Any) -> dict[str, Any]:
        return intify(MessageToDict(next(part.data for part in message.parts if part.HasField("data"))))[
            "a2a.bcp.checkout"
        ]

    english = sdk_send(server.base_url, [{"text": "add a Pixel 10 Pro to my checkout"}])
    context_id = english.context_id
    paying = [data({"action": "update_checkout", "buyer": BUYER,
                    "a2a.bcp.checkout.payment": {"instruments": [PIX_INSTRUMENT]}})]  # fmt: skip
    ready = checkout(sdk_send(server.base_url, paying, context_id=context_id))
    pay(txid=ready["payment"]["instruments"][0]["pix"]["txid"], options=PayOptions())
    placed = checkout(sdk_send(server.base_url, [{"text": "place my order"}], context_id=context_id))
    # when the buyer asks again, in Portuguese
    again = sdk_send(server.base_url, [{"text": words}], context_id=context_id)

    assert (placed["status"], placed["context"]) == ("completed", {"language": "en"})
    refused = checkout(again)
    assert refused["status"] == "completed" and refused["order"] == placed["order"]
    assert refused["messages"] == [
        {"type": "error", "code": "invalid_checkout_status", "severity": "unrecoverable", "content": refusal}
    ]
    assert [part.text for part in again.parts if part.text] == [refusal]


def test_a_structured_add_of_a_product_with_variants_asks_in_the_checkouts_language(
    server: LiveServer, pixel: Any, shirts: Any
):
    """A data part naming a product with several variants gets the candidates and a question; the question quoted
    an empty query ('… opção para ""') and spoke pt-BR beside an English checkout. It names the product id and
    speaks the checkout's language: data parts alone state none (BCP-CHK-18 `content` in the checkout's)."""
    english = sdk_send(server.base_url, [{"text": "add a Pixel 10 Pro to my checkout"}])
    asked = rpc(
        server.a2a_url,
        send_message(
            [data({"action": "add_to_checkout", "product_id": shirts.public_id})], context_id=english.context_id
        ),
    )

    parts = asked["result"]["message"]["parts"]
    assert parts[0]["text"] == (
        f'I found more than one option for "{shirts.public_id}". Which one do you want? Reply with the item id.'
    )
    assert [c["id"] for c in parts[1]["data"]["a2a.bcp.candidates"]] == ["CAM-PRETA-M", "CAM-PRETA-G", "CAM-BRANCA-M"]
    assert lines(checkout_of(asked)) == [("PIXEL-10-PRO", 1)]
