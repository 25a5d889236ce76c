"""UCP's A2A binding (issue 35 item 1; checkout-a2a.md at the UCP spec's tag v2026-01-11) on the BCP agent, with the
official a2a-sdk client against a live uvicorn: a UCP platform activates UCP's extension, names itself with
`UCP-Agent`, and buys by card; the checkout comes back under `a2a.ucp.checkout` in UCP's shape (parsed with the
official UCP SDK's models), the card's `payment_data` goes in under `a2a.ucp.checkout.payment_data`. BCP's own
A2A (BCP-A2A-03/05) is unchanged beside it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, ParseDict
from ucp_sdk.models.schemas.shopping import fulfillment_resp
from ucp_sdk.models.schemas.shopping.payment_resp import PaymentResponse

from bcp_app.transports.a2a.messages import intify
from bcp_app.transports.a2a.ucp_face import UCP_EXTENSION_URI
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.bcp_app.test_a2a_helpers import EXTENSION, LiveServer, make_product
from tests.bcp_app.test_ucp_face import LATE, V, only_order_profile, ucp_profile, ucp_profile_2026_08_25

pytestmark = [pytest.mark.postgres, pytest.mark.e2e, pytest.mark.usefixtures("bcp_settings")]
fulfillment_resp.Checkout.model_rebuild(_types_namespace={"PaymentResponse": PaymentResponse})
BUYER = {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br"}
CARD = {"id": "instr_1", "handler_id": "gpay", "type": "card", "brand": "Visa", "last_digits": "1234",
        "credential": {"type": "PAYMENT_GATEWAY", "token": "success_token"}}  # fmt: skip


@pytest.fixture(scope="module")
def live(django_db_setup: None, django_db_blocker: Any) -> Iterator[LiveServer]:
    with django_db_blocker.unblock():
        started = LiveServer().start()
    yield started
    started.stop()


class UcpPlatform:
    def __init__(
        self,
        live: LiveServer,
        fake: FakePlatform,
        *,
        extension: str = UCP_EXTENSION_URI,
        late: bool = False,
        profile: dict[str, Any] | None = None,
    ) -> None:
        from bcp_app.service.platforms import platform_create

        self.live, self.extension = live, extension
        if profile is None:
            profile = ucp_profile_2026_08_25() if late else ucp_profile(fake)
        url = fake.serve_json(f"/ucp-a2a-{uuid.uuid4().hex}.json", profile)
        created = platform_create(name="Plataforma UCP (A2A)", profile_url=url)
        self.headers = {"UCP-Agent": f'profile="{url}"', "A2A-Extensions": extension,
                        "Authorization": f"Bearer {created.api_key}"}  # fmt: skip

    def send(self, data: dict[str, Any], *, context_id: str = "") -> dict[str, Any]:
        from a2a.client import ClientConfig, create_client
        from a2a.types import Message, Part, Role, SendMessageRequest

        async def go() -> dict[str, Any]:
            async with httpx.AsyncClient(headers=self.headers, timeout=30) as http:
                client = await create_client(self.live.base_url, client_config=ClientConfig(httpx_client=http))
                message = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), context_id=context_id,
                                  extensions=[self.extension])  # fmt: skip
                message.parts.append(Part(data=ParseDict(data, struct_pb2.Value()), media_type="application/json"))
                async for event in client.send_message(SendMessageRequest(message=message)):
                    return intify(MessageToDict(event))
                return {}

        return asyncio.run(go())


def data_of(message: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for part in message["parts"]:
        merged.update(part.get("data", {}))
    return merged


@pytest.fixture
def shop(live: LiveServer, transactional_db: None, settings: Any) -> LiveServer:
    settings.BCP_PUBLIC_URL = live.base_url
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900)
    return live


def test_a_ucp_platform_buys_by_card_over_ucp_a2a(shop: LiveServer, fake_platform: FakePlatform) -> None:
    platform = UcpPlatform(shop, fake_platform)
    # add: the reply declares UCP's extension and carries the checkout under a2a.ucp.checkout, in UCP's shape
    added = platform.send({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 1})["message"]
    assert added["extensions"] == [UCP_EXTENSION_URI]
    assert "a2a.bcp.checkout" not in data_of(added)
    checkout = fulfillment_resp.Checkout(**data_of(added)["a2a.ucp.checkout"])
    assert checkout.ucp.version.root == "2026-01-11"
    assert [(li.item.id, li.quantity) for li in checkout.line_items] == [("PIXEL-10-PRO", 1)]
    context_id = added["contextId"]
    ready = platform.send({"action": "update_checkout", "buyer": BUYER}, context_id=context_id)["message"]
    assert data_of(ready)["a2a.ucp.checkout"]["status"] == "ready_for_complete"
    # complete with UCP's payment_data (the sandbox gateway approves success_token)
    done = platform.send(
        {"action": "complete_checkout", "a2a.ucp.checkout.payment_data": CARD, "a2a.ucp.checkout.risk_signals": {}},
        context_id=context_id,
    )["message"]
    completed = fulfillment_resp.Checkout(**data_of(done)["a2a.ucp.checkout"])
    assert completed.status == "completed"
    assert completed.order is not None and completed.order.id.startswith("order_")


def test_a_2026_08_25_platform_is_answered_in_2026_08_25_shapes_over_a2a(
    shop: LiveServer, fake_platform: FakePlatform
) -> None:
    """As on UCP REST and MCP: a profile written in UCP 2026-08-25 reads its version's envelope (maps)."""
    platform = UcpPlatform(shop, fake_platform, late=True)
    added = platform.send({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 1})["message"]
    checkout = data_of(added)["a2a.ucp.checkout"]
    assert checkout["ucp"]["version"] == LATE
    assert checkout["ucp"]["capabilities"] == {
        "dev.ucp.shopping.checkout": [{"version": LATE}],
        "dev.ucp.shopping.discount": [{"version": LATE}],
    }
    assert checkout["totals"][-1] == {"type": "total", "amount": 599900}


def test_the_agent_card_lists_ucps_extension_and_bcp_a2a_is_unchanged(
    shop: LiveServer, fake_platform: FakePlatform
) -> None:
    card = httpx.get(f"{shop.base_url}/.well-known/agent-card.json", timeout=30).json()
    extensions = {e["uri"]: e for e in card["capabilities"]["extensions"]}
    assert set(extensions) == {EXTENSION, UCP_EXTENSION_URI}
    names = [c["name"] for c in extensions[UCP_EXTENSION_URI]["params"]["capabilities"]]
    assert names[0] == "dev.ucp.shopping.checkout" and "dev.ucp.shopping.fulfillment" in names
    # the UCP profile names the Agent Card as its A2A service (checkout-a2a.md "Transport Discovery")
    profile = httpx.get(f"{shop.base_url}/.well-known/ucp", timeout=30).json()
    assert profile["ucp"]["services"]["dev.ucp.shopping"]["a2a"] == {
        "endpoint": f"{shop.base_url}/.well-known/agent-card.json"
    }
    # a platform that activates BCP's extension still gets BCP's names
    bcp = UcpPlatform(shop, fake_platform, extension=EXTENSION)
    added = bcp.send({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 1})["message"]
    assert added["extensions"] == [EXTENSION]
    assert "a2a.bcp.checkout" in data_of(added)


def test_update_reads_payment_and_gives_ucp_rests_warnings(shop: LiveServer, fake_platform: FakePlatform) -> None:
    """The A2A face passed the intent's 2026-01-11 `payment` to BCP as it came and said nothing of a currency other
    than BRL: it reads `payment` with UCP REST's map and answers the same input with UCP REST's warnings
    (test_ucp_face_walk.py), from the one `ucp.with_request_warnings`."""
    from tests.bcp_app.test_ucp_mcp import CURRENCY_WARNING, INSTRUMENT_WARNING

    platform = UcpPlatform(shop, fake_platform)
    added = platform.send({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 1})["message"]
    context_id = added["contextId"]
    card = {key: value for key, value in CARD.items() if key != "credential"}
    wrong = {"selected_instrument_id": "instr_nope", "instruments": [card]}
    right = {"selected_instrument_id": "instr_1", "instruments": [card]}
    nope = platform.send({"action": "update_checkout", "buyer": BUYER, "currency": "USD", "payment": wrong},
                         context_id=context_id)["message"]  # fmt: skip
    chosen = platform.send({"action": "update_checkout", "currency": "BRL", "payment": right},
                           context_id=context_id)["message"]  # fmt: skip

    body = data_of(nope)["a2a.ucp.checkout"]
    assert [m for m in body["messages"] if m["type"] == "warning"] == [CURRENCY_WARNING, INSTRUMENT_WARNING]
    assert fulfillment_resp.Checkout(**body).payment.selected_instrument_id is None  # not the card listed
    after = data_of(chosen)["a2a.ucp.checkout"]
    assert not [m for m in after.get("messages") or [] if m["type"] == "warning"]
    assert after["payment"]["selected_instrument_id"] == "instr_1"


def test_a_2026_01_11_profile_naming_only_order_is_served_the_core_checkout_over_a2a(
    shop: LiveServer, fake_platform: FakePlatform
) -> None:
    """As on UCP REST and MCP (`negotiation.with_core_checkout_2026_01_11`): UCP 2026-01-11 conditions no operation
    on the intersection, so the conformance suite's order-only profile gets the core checkout without extensions;
    2026-08-25 and BCP's extension keep `capabilities_incompatible`. A cancel refused for the checkout's status stays
    a reply carrying the checkout and its error: checkout-a2a.md (tag v2026-01-11) words no error of its own."""
    platform = UcpPlatform(shop, fake_platform, profile=only_order_profile(V))
    added = platform.send({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 1})["message"]
    body = data_of(added)["a2a.ucp.checkout"]
    checkout = fulfillment_resp.Checkout(**body)
    assert [(c.name, c.version.root) for c in checkout.ucp.capabilities] == [("dev.ucp.shopping.checkout", V)]
    assert [(li.item.id, li.quantity) for li in checkout.line_items] == [("PIXEL-10-PRO", 1)]
    assert "fulfillment" not in body
    context_id = added["contextId"]
    canceled = platform.send({"action": "cancel_checkout"}, context_id=context_id)["message"]
    assert data_of(canceled)["a2a.ucp.checkout"]["status"] == "canceled"
    again = data_of(platform.send({"action": "cancel_checkout"}, context_id=context_id)["message"])["a2a.ucp.checkout"]
    assert again["status"] == "canceled"
    assert [m["code"] for m in again["messages"] if m["type"] == "error"] == ["invalid_checkout_status"]
    for other in (
        UcpPlatform(shop, fake_platform, profile=only_order_profile(LATE)),
        UcpPlatform(shop, fake_platform, profile=only_order_profile(V), extension=EXTENSION),
    ):
        refused = data_of(other.send({"action": "add_to_checkout", "product_id": "PIXEL-10-PRO"})["message"])
        checkout_key = "a2a.bcp.checkout" if other.extension == EXTENSION else "a2a.ucp.checkout"
        assert refused[checkout_key]["messages"][0]["code"] == "capabilities_incompatible"
