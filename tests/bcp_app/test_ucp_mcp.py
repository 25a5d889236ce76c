"""UCP's MCP binding (issue 35 item 1) at `/ucp/mcp`, with the official `mcp` client against a live uvicorn: a UCP
platform buys with Pix, naming itself in `_meta.ucp.profile` (checkout-mcp.md at the UCP spec's tag v2026-01-11) and
passing the OpenRPC's arguments (`checkout`, `id`, `payment`, `idempotency_key`). Answers are parsed with the official
UCP SDK's 2026-01-11 models; the same BCP tools run underneath (BCP-MCP-05 strict arguments, BCP-IDEM-04 replays)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from ucp_sdk.models.schemas.shopping import fulfillment_resp
from ucp_sdk.models.schemas.shopping.order import Order
from ucp_sdk.models.schemas.shopping.payment_resp import PaymentResponse

from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.test_mcp_helpers import mcp_client, run
from tests.bcp_app.test_ucp_face import LATE, V, only_order_profile, pac_chosen, ucp_profile, ucp_profile_2026_08_25
from tests.shop.checkout_factories import make_shipping, make_variant

live_mcp = test_mcp_helpers.live_mcp

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]
fulfillment_resp.Checkout.model_rebuild(_types_namespace={"PaymentResponse": PaymentResponse})

SP = {
    "street_address": "Rua das Flores, 123",
    "address_locality": "São Paulo",
    "address_region": "SP",
    "postal_code": "01310-100",
    "address_country": "BR",
}
PIX_HANDLER = {
    "id": "pix",
    "name": "br.dev.bcp.pix",
    "version": "2026-07-28",
    "spec": "https://bcp.dev.br/draft/specification/payment/pix",
    "config_schema": "https://bcp.dev.br/draft/schemas/payment/pix.json",
    "instrument_schemas": [],
    "config": {},
}


class UcpPlatform:
    def __init__(self, url: str, profile_url: str, api_key: str) -> None:
        self.url = url
        self.profile_url = profile_url
        self.headers = {"Authorization": f"Bearer {api_key}"}

    def outcome(self, name: str, arguments: dict[str, Any], *, meta: dict[str, Any] | None = None) -> Any:
        chosen = {"ucp": {"profile": self.profile_url}} if meta is None else meta

        async def go() -> Any:
            async with mcp_client(self.url, headers=self.headers) as client:
                try:
                    return await client.call_tool(name, arguments, meta=chosen)
                except MCPError as exc:
                    return exc

        return run(go)

    def tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = self.outcome(name, arguments)
        assert not isinstance(result, MCPError), result
        return result.structured_content

    def error(self, name: str, *, meta: dict[str, Any] | None = None, **arguments: Any) -> MCPError:
        result = self.outcome(name, arguments, meta=meta)
        assert isinstance(result, MCPError), result
        return result


@pytest.fixture
def platform(live_mcp, fake_platform: FakePlatform, bcp_settings, transactional_db) -> Iterator[UcpPlatform]:
    from bcp_app.service.platforms import platform_create
    from config.celery import app as celery_app

    profile = ucp_profile(fake_platform)
    profile["payment"]["handlers"].append(PIX_HANDLER)
    profile_url = fake_platform.serve_json("/ucp-profile.json", profile)
    created = platform_create(name="Plataforma UCP (MCP)", profile_url=profile_url)
    make_variant("SKU-CAFE-500G", price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    saved = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield UcpPlatform(f"{live_mcp.base_url}/ucp/mcp", profile_url, created.api_key)
    celery_app.conf.task_always_eager = saved


def test_tools_are_the_openrpc_methods_of_ucp_2026_01_11(platform: UcpPlatform) -> None:
    async def go() -> Any:
        async with mcp_client(platform.url, headers=platform.headers) as client:
            return await client.list_tools()

    tools = run(go).tools
    listed = {tool.name: tool.input_schema for tool in tools}
    assert sorted(listed) == [
        "cancel_checkout",
        "complete_checkout",
        "create_checkout",
        "get_checkout",
        "get_order",
        "update_checkout",
    ]
    assert listed["complete_checkout"]["required"] == ["id", "idempotency_key"]
    assert listed["update_checkout"]["required"] == ["id", "checkout"]
    # BCP-MCP-02 (QA walk): complete_checkout said "(Pix: br.dev.bcp.pix)" only, though the card (with parcelamento)
    # and boleto complete through it too, as the BCP face's description says
    described = {tool.name: tool.description for tool in tools}
    assert "cartão" in described["complete_checkout"] and "boleto" in described["complete_checkout"]


def test_a_ucp_platform_buys_with_pix_over_ucp_mcp(platform: UcpPlatform) -> None:
    from payments.sandbox import services as sandbox
    from payments.selectors import pix_charge_active_for_reference

    # create, in UCP's shape (the buyer's full name, a currency, an item title that is not ours)
    created = fulfillment_resp.Checkout(
        **platform.tool(
            "create_checkout",
            checkout={
                "currency": "BRL",
                "line_items": [{"item": {"id": "SKU-CAFE-500G", "title": "x"}, "quantity": 2}],
                "buyer": {"full_name": "Ana Souza", "email": "ana@example.com.br"},
            },
            idempotency_key=str(uuid.uuid4()),
        )
    )
    assert created.ucp.version.root == "2026-01-11"
    assert created.line_items[0].item.title == "Café especial 500 g"
    assert [(t.type, t.amount) for t in created.totals] == [("subtotal", 8580), ("total", 8580)]
    # address, then the option: full replacements
    line = {"id": created.line_items[0].id, "item": {"id": "SKU-CAFE-500G"}, "quantity": 2}
    buyer = {"email": "ana@example.com.br", "first_name": "Ana", "last_name": "Souza"}
    state: dict[str, Any] = {
        "line_items": [line],
        "buyer": buyer,
        "fulfillment": {"methods": [{"type": "shipping", "destinations": [SP]}]},
    }
    method = platform.tool("update_checkout", id=created.id, checkout=state)["fulfillment"]["methods"][0]
    state["fulfillment"]["methods"][0] = pac_chosen(method, SP)
    ready = fulfillment_resp.Checkout(**platform.tool("update_checkout", id=created.id, checkout=state))
    assert ready.status == "ready_for_complete"
    assert [(t.type, t.amount) for t in ready.totals] == [("subtotal", 8580), ("fulfillment", 1890), ("total", 10470)]
    assert "pix_recebedor_001" in [h.id for h in ready.payment.handlers]  # the shop names its handlers
    # complete with 2026-01-11's `payment` (instruments + selected_instrument_id) and a key
    payment = {
        "selected_instrument_id": "instr_pix",
        "instruments": [{"id": "instr_pix", "handler_id": "pix_recebedor_001", "type": "pix"}],
    }
    key = str(uuid.uuid4())
    completing = platform.tool("complete_checkout", id=created.id, payment=payment, idempotency_key=key)
    assert completing["status"] == "complete_in_progress"
    # 2026-01-11 instruments are cards only: the Pix instrument and its charge are the handler's extension member
    assert completing["payment"]["selected_instrument_id"] == "instr_pix"
    assert completing["payment"]["br.dev.bcp.pix"]["pix"]["br_code"].startswith("000201")
    # the same call again is the stored answer (BCP-IDEM-04), one charge
    assert platform.tool("complete_checkout", id=created.id, payment=payment, idempotency_key=key) == completing
    # the buyer pays in the sandbox PSP: the checkout completes and the order reads in UCP's shape
    sandbox.pay(txid=pix_charge_active_for_reference(created.id).txid, options=sandbox.PayOptions())
    completed = fulfillment_resp.Checkout(**platform.tool("get_checkout", id=created.id))
    assert completed.status == "completed"
    order = Order(**platform.tool("get_order", id=completed.order.id))
    assert order.checkout_id == created.id
    assert [(li.item.id, li.quantity.total) for li in order.line_items] == [("SKU-CAFE-500G", 2)]


def test_a_2026_08_25_platform_is_answered_in_2026_08_25_shapes_over_mcp(
    platform: UcpPlatform, fake_platform: FakePlatform
) -> None:
    """As on the REST face: a platform whose profile is written in UCP 2026-08-25 reads maps and signed totals."""
    from bcp_app.service.platforms import platform_create
    from shop.models import Coupon

    profile_url = fake_platform.serve_json("/late-profile.json", ucp_profile_2026_08_25())
    late = UcpPlatform(platform.url, profile_url, platform_create(name="UCP recente", profile_url=profile_url).api_key)
    Coupon.objects.create(code="UCP10", title="10 %", kind="percent", percent=10)
    checkout = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 2}], "discounts": {"codes": ["UCP10"]}}
    answer = late.tool("create_checkout", checkout=checkout, idempotency_key=str(uuid.uuid4()))
    assert answer["ucp"]["version"] == LATE
    assert answer["ucp"]["capabilities"] == {
        "dev.ucp.shopping.checkout": [{"version": LATE}],
        "dev.ucp.shopping.discount": [{"version": LATE}],
    }
    assert answer["totals"] == [
        {"type": "subtotal", "amount": 8580},
        {"type": "discount", "display_text": "Cupom UCP10", "amount": -858},
        {"type": "total", "amount": 7722},
    ]
    assert late.tool("get_checkout", id=answer["id"])["ucp"]["version"] == LATE  # reads too, not only writes


def test_the_profile_travels_in_meta_and_errors_carry_ucps_error_object(platform: UcpPlatform) -> None:
    line = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]}
    # no _meta.ucp.profile (checkout-mcp.md: MUST be present in every invocation)
    missing = platform.error("create_checkout", meta={}, checkout=line)
    assert missing.data["code"] == "invalid_profile_url"
    assert missing.data["status"] == "error"
    assert missing.data["errors"][0]["code"] == "invalid_profile_url"
    assert "_meta.ucp.profile" in missing.data["errors"][0]["message"]
    # the payload must not carry the id the top-level `id` names ("Identifier Pattern")
    created = platform.tool("create_checkout", checkout=line)
    with_id = platform.error("update_checkout", id=created["id"], checkout={**line, "id": created["id"]})
    assert with_id.data["fields"] == {"checkout.id": "proibido"}
    # strict top level (BCP-MCP-05): a misspelled argument is named; a missing key is required (BCP-IDEM-02)
    typo = platform.error("create_checkout", chekout=line)
    assert typo.data["fields"] == {"chekout": "argumento desconhecido", "checkout": "obrigatório"}
    no_key = platform.error("cancel_checkout", id=created["id"])
    assert (no_key.code, no_key.data["code"]) == (-32602, "idempotency_key_required")
    assert no_key.data["errors"][0]["message"] == "idempotency_key é obrigatório em cancel_checkout."
    canceled = platform.tool("cancel_checkout", id=created["id"], idempotency_key=str(uuid.uuid4()))
    assert canceled["status"] == "canceled"


def test_errors_name_the_idempotency_key_and_profile_as_the_ucp_agent_sent_them(platform: UcpPlatform) -> None:
    """The UCP face passes `idempotency_key` and `_meta.ucp.profile` to the BCP tool as its `meta`; a key or profile
    the BCP tool refused was named `meta["idempotency-key"]` / `$.meta['idempotency-key']` /
    `$.meta['ucp-agent'].profile`, arguments a UCP agent never sends (checkout-mcp.md's `idempotency_key`)."""
    line = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]}
    created = platform.tool("create_checkout", checkout=line)
    spaced = platform.error("cancel_checkout", id=created["id"], idempotency_key="chave com espaço")
    bell = platform.error("create_checkout", checkout=line, idempotency_key="k\x07")
    profile = platform.error("create_checkout", meta={"ucp": {"profile": "https://p\x07"}}, checkout=line)

    assert (spaced.data["code"], spaced.message) == (
        "invalid_request",
        "idempotency_key deve ter de 1 a 255 caracteres ASCII visíveis.",
    )
    assert spaced.data["errors"][0]["message"] == spaced.message
    assert bell.data["fields"] == {"$.idempotency_key": "caractere de controle U+0007 não é permitido"}
    assert bell.message == (
        "Argumentos inválidos para create_checkout: $.idempotency_key: caractere de controle U+0007 não é permitido"
    )
    assert profile.data["fields"] == {"_meta.ucp.profile": "caractere de controle U+0007 não é permitido"}
    for error in (spaced, bell, profile):
        assert "meta[" not in str(error.data) and "meta[" not in error.message, error.data


def test_discovery_names_the_mcp_endpoint(platform: UcpPlatform) -> None:
    import httpx

    body = httpx.get(platform.url.replace("/ucp/mcp", "/.well-known/ucp"), timeout=30).json()
    assert body["ucp"]["services"]["dev.ucp.shopping"]["mcp"] == {
        "schema": "https://ucp.dev/services/shopping/openrpc.json",
        "endpoint": "https://loja.example.com.br/ucp/mcp",
    }


CARD = {"id": "instr_card", "handler_id": "gpay", "type": "card", "brand": "Visa", "last_digits": "1234"}
# UCP REST's warnings for this input (test_ucp_face_walk.py): the same words on every UCP transport
CURRENCY_WARNING = {
    "type": "warning",
    "code": "currency_unsupported",
    "path": "$.currency",
    "content": "Moeda 'USD' não aceita em currency: esta loja vende só em reais (BRL); os valores estão em centavos "
    "de real.",
}
INSTRUMENT_WARNING = {
    "type": "warning",
    "code": "instrument_not_found",
    "path": "$.payment.selected_instrument_id",
    "content": "'instr_nope' não é o id de nenhum instrumento de payment.instruments: nenhum instrumento foi "
    "escolhido.",
}


def _ready(platform: UcpPlatform) -> tuple[str, dict[str, Any]]:
    """A checkout with buyer, address and PAC chosen: ready for complete."""
    line = {"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}
    created = platform.tool("create_checkout", checkout={"line_items": [line]})
    buyer = {"email": "ana@example.com.br", "first_name": "Ana", "last_name": "Souza"}
    state: dict[str, Any] = {
        "line_items": [{"id": created["line_items"][0]["id"], **line}],
        "buyer": buyer,
        "fulfillment": {"methods": [{"type": "shipping", "destinations": [SP]}]},
    }
    method = platform.tool("update_checkout", id=created["id"], checkout=state)["fulfillment"]["methods"][0]
    state["fulfillment"]["methods"][0] = pac_chosen(method, SP)
    return created["id"], state


def test_create_and_update_give_ucp_rests_warnings(platform: UcpPlatform) -> None:
    """The MCP face mapped `payment` as UCP REST does but said nothing of a currency other than BRL or of a
    `selected_instrument_id` naming no instrument: the same input now gets UCP REST's warnings."""
    line = {"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}
    payment = {"selected_instrument_id": "instr_nope", "instruments": [CARD]}
    created = platform.tool("create_checkout", checkout={"line_items": [line], "currency": "USD", "payment": payment})
    checkout_id, state = _ready(platform)
    updated = platform.tool(
        "update_checkout", id=checkout_id, checkout={**state, "currency": "USD", "payment": payment}
    )
    plain = platform.tool("update_checkout", id=checkout_id, checkout={**state, "currency": "BRL"})

    for body in (created, updated):
        assert [m for m in body["messages"] if m["type"] == "warning"] == [CURRENCY_WARNING, INSTRUMENT_WARNING]
        assert body["currency"] == "BRL"
        assert fulfillment_resp.Checkout(**body).payment.selected_instrument_id is None  # not the card listed
    assert updated["status"] == "ready_for_complete"
    assert not [m for m in plain.get("messages") or [] if m["type"] == "warning"]


def test_complete_errors_name_the_instrument_where_the_agent_put_it(platform: UcpPlatform) -> None:
    """The UCP complete takes 2026-01-11's `payment` (`instruments[]` + `selected_instrument_id`); its errors named
    the BCP tool's `$.checkout.payment.instruments[0]`, a member the agent never sent. They name the chosen
    instrument in the agent's `payment` now, as UCP REST names its `payment_data`."""
    checkout_id, state = _ready(platform)
    platform.tool("update_checkout", id=checkout_id, checkout=state)
    pix = {"id": "instr_pix", "handler_id": "pix_recebedor_001", "type": "pix"}
    untyped = {"selected_instrument_id": "instr_card", "instruments": [pix, {"id": "instr_card", "handler_id": "gpay"}]}
    wrong = platform.error("complete_checkout", id=checkout_id, payment=untyped, idempotency_key=str(uuid.uuid4()))
    declined_card = {**CARD, "credential": {"type": "PAYMENT_GATEWAY", "token": "fail_token"}}
    declined = platform.tool(
        "complete_checkout",
        id=checkout_id,
        payment={"selected_instrument_id": "instr_card", "instruments": [pix, declined_card]},
        idempotency_key=str(uuid.uuid4()),
    )

    assert wrong.code == -32602
    assert wrong.data["fields"] == {"$.payment.instruments[1].type": "campo obrigatório"}
    assert (
        wrong.message == "Argumentos inválidos para complete_checkout: $.payment.instruments[1].type: campo obrigatório"
    )
    assert wrong.data["content"] == wrong.message
    errors = [m for m in declined["messages"] if m["type"] == "error"]
    assert errors and {m["path"] for m in errors} == {"$.payment.instruments[1]"}, errors
    assert not any("checkout" in m["content"] for m in errors)


def _platform_with(
    platform: UcpPlatform, fake_platform: FakePlatform, path: str, profile: dict[str, Any]
) -> UcpPlatform:
    from bcp_app.service.platforms import platform_create

    url = fake_platform.serve_json(path, profile)
    return UcpPlatform(platform.url, url, platform_create(name=f"UCP {path}", profile_url=url).api_key)


def test_a_2026_01_11_profile_naming_only_order_is_served_the_core_checkout_over_mcp(
    platform: UcpPlatform, fake_platform: FakePlatform
) -> None:
    """As on UCP REST (test_ucp_face.py): UCP 2026-01-11 conditions no operation on the intersection (overview.md
    "Version Negotiation"), so the conformance suite's order-only profile gets the core checkout, without the
    extensions whose parent is not in the intersection; a 2026-08-25 profile keeps `capabilities_incompatible`."""
    only_order = _platform_with(platform, fake_platform, "/mcp-only-order.json", only_order_profile(V))
    line = {"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}
    created = only_order.tool(
        "create_checkout",
        checkout={"line_items": [line], "fulfillment": {"methods": [{"type": "shipping", "destinations": [SP]}]}},
    )
    checkout = fulfillment_resp.Checkout(**created)
    assert [(c.name, c.version.root) for c in checkout.ucp.capabilities] == [("dev.ucp.shopping.checkout", V)]
    assert "fulfillment" not in created
    assert only_order.tool("get_checkout", id=checkout.id)["id"] == checkout.id
    canceled = only_order.tool("cancel_checkout", id=checkout.id, idempotency_key=str(uuid.uuid4()))
    assert canceled["status"] == "canceled"
    late = _platform_with(platform, fake_platform, "/mcp-only-order-late.json", only_order_profile(LATE))
    refused = late.tool("create_checkout", checkout={"line_items": [line]})
    assert refused["ucp"]["status"] == "error"
    assert refused["messages"][0]["code"] == "capabilities_incompatible"


def test_operations_refused_for_the_checkouts_status_are_json_rpc_errors_on_2026_01_11(
    platform: UcpPlatform, fake_platform: FakePlatform
) -> None:
    """UCP REST answers 409 there (checkout.md: "SHOULD send back an error indicating the operation is not
    allowed"); checkout-mcp.md (tag v2026-01-11) "Error Handling": errors are JSON-RPC errors with UCP's error
    object in `data`. 2026-08-25 (and BCP §4.3) answer the unchanged checkout with its error message as a result."""
    line = {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}]}
    checkout_id = platform.tool("create_checkout", checkout=line)["id"]
    first_key = str(uuid.uuid4())
    assert platform.tool("cancel_checkout", id=checkout_id, idempotency_key=first_key)["status"] == "canceled"
    card = {"selected_instrument_id": CARD["id"], "instruments": [CARD]}
    refused = [
        platform.error("cancel_checkout", id=checkout_id, idempotency_key=str(uuid.uuid4())),
        platform.error("update_checkout", id=checkout_id, checkout=line),
        platform.error("complete_checkout", id=checkout_id, payment=card, idempotency_key=str(uuid.uuid4())),
    ]
    for error in refused:
        assert (error.code, error.data["code"], error.data.get("status")) == (
            -32000,
            "invalid_checkout_status",
            "error",
        ), error.data
        [ucp_error] = error.data["errors"]
        assert (ucp_error["code"], ucp_error["message"]) == ("invalid_checkout_status", error.message)
        assert fulfillment_resp.Checkout(**ucp_error["details"]["checkout"]).status == "canceled"
    # the first cancel's key still replays its result; a read of the canceled checkout is no refusal
    assert platform.tool("cancel_checkout", id=checkout_id, idempotency_key=first_key)["status"] == "canceled"
    assert platform.tool("get_checkout", id=checkout_id)["status"] == "canceled"
    late = _platform_with(platform, fake_platform, "/mcp-late-cancel.json", ucp_profile_2026_08_25())
    late_id = late.tool("create_checkout", checkout=line)["id"]
    late.tool("cancel_checkout", id=late_id, idempotency_key=str(uuid.uuid4()))
    again = late.tool("cancel_checkout", id=late_id, idempotency_key=str(uuid.uuid4()))
    assert again["status"] == "canceled"
    assert again["messages"][0]["code"] == "invalid_checkout_status"
