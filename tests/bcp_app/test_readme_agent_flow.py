"""The README's "Connecting an agent" walk, done as a platform developer who only read the README would
do it, against a live uvicorn with the official `mcp` client (its README snippet), the official `a2a-sdk`
client and httpx for REST.

Register with `bcp_platform add` (the printed key), discover the endpoints at `/.well-known/bcp`, search
the catalog, create a checkout, set buyer, CEP address, option and coupon, choose Pix, complete, pay
through the sandbox control API with the documented header, read the order and receive the signed order
webhook at the profile's `config.webhook_url`. If a README step stops working, this test fails.
"""

from __future__ import annotations

import io
import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from django.core.management import call_command
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.bcp_app import test_mcp_helpers
from tests.bcp_app.bcp_fixtures import FakePlatform
from tests.shop.checkout_factories import make_coupon, make_shipping, make_variant

live_mcp = test_mcp_helpers.live_mcp

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]

EXTENSION = "https://bcp.dev.br/draft/specification/reference"  # the README's A2A-Extensions
SANDBOX_SECRET = "sandbox-webhook-secret"  # the README's development value of PIX_SANDBOX_WEBHOOK_SECRET
ADDRESS = {
    "first_name": "Ana",
    "last_name": "Souza",
    "street_address": "Avenida Paulista, 1000",
    "extended_address": "Bela Vista",
    "address_locality": "São Paulo",
    "address_region": "SP",
    "postal_code": "01310-100",
    "address_country": "BR",
}
BUYER = {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br"}
PIX = {"id": "instr_1", "handler_id": "pix_recebedor_001", "type": "pix", "selected": True}


class Walk:
    """What the README gives a platform developer: the shop's base URL, a profile URL and an API key."""

    def __init__(self, base_url: str, profile_url: str, api_key: str) -> None:
        self.base_url = base_url
        self.profile_url = profile_url
        self.api_key = api_key

    def discover(self) -> dict[str, str]:
        profile = httpx.get(f"{self.base_url}/.well-known/bcp").json()
        return {s["transport"]: s["endpoint"] for s in profile["ucp"]["services"]["br.dev.bcp.shopping"]}

    def pay_in_sandbox(self, txid: str) -> httpx.Response:
        return httpx.post(
            f"{self.base_url}/_sandbox/psp/cob/{txid}/pay", headers={"BCP-Sandbox-Secret": SANDBOX_SECRET}
        )


@pytest.fixture
def walk(live_mcp: Any, fake_platform: FakePlatform, bcp_settings: Any, transactional_db: None) -> Iterator[Walk]:
    from config.celery import app as celery_app

    bcp_settings.BCP_PUBLIC_URL = live_mcp.base_url
    bcp_settings.BCP_PIX_SANDBOX = True
    bcp_settings.PIX_SANDBOX_WEBHOOK_SECRET = SANDBOX_SECRET
    bcp_settings.PIX_SANDBOX_WEBHOOK_URL = ""  # the sandbox settles in-process instead of calling itself back
    make_variant("SKU-CAFE-500G", price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    make_coupon("BEMVINDO10")
    profile_url = fake_platform.publish()  # with order config.webhook_url, as the README asks for webhooks
    out = io.StringIO()
    call_command("bcp_platform", "add", "Minha Plataforma", "--profile", profile_url, stdout=out)
    found = re.search(r"api key \(shown once\): (\S+)", out.getvalue())
    assert found, out.getvalue()
    saved = celery_app.conf.task_always_eager  # settlement and the webhook run as in-process Celery tasks
    celery_app.conf.task_always_eager = True
    yield Walk(live_mcp.base_url, profile_url, found.group(1))
    celery_app.conf.task_always_eager = saved


def readme_first_update() -> dict[str, Any]:
    """The README's REST example of the first update (the JSON block after "The first update, as")."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    rest = readme.split("\n### REST\n", 1)[1].split("\n### ", 1)[0]
    return json.loads(rest.split("The first update, as", 1)[1].split("```json\n", 1)[1].split("```", 1)[0])


def _with_choice(checkout: dict[str, Any], state: dict[str, Any], option: str) -> dict[str, Any]:
    """The README's second update: the method again with its id, destination id and selected option."""
    method = checkout["fulfillment"]["methods"][0]
    destination = method["destinations"][0]["id"]
    address = state["fulfillment"]["methods"][0]["destinations"][0]
    return {
        **state,
        "payment": {"instruments": [PIX]},
        "fulfillment": {
            "methods": [
                {
                    "id": method["id"],
                    "type": "shipping",
                    "line_item_ids": method["line_item_ids"],
                    "destinations": [{**address, "id": destination}],
                    "selected_destination_id": destination,
                    "groups": [{"id": method["groups"][0]["id"], "selected_option_id": option}],
                }
            ]
        },
    }


def _assert_signed_order_webhook(fake_platform: FakePlatform, order_id: str) -> None:
    posts = [r for r in fake_platform.received if r.method == "POST" and r.path == "/webhooks/bcp/pedidos"]
    assert posts, "no order webhook reached the profile's config.webhook_url"
    assert {"webhook-id", "content-digest", "signature", "signature-input"} <= set(posts[-1].headers)
    assert order_id.encode() in posts[-1].body


def test_readme_mcp_walk_buys_with_pix_and_gets_the_webhook_bcp_chk_01(walk: Walk, fake_platform: FakePlatform) -> None:
    """BCP-CHK-01, BCP-ORD-01, BCP-WH-01: the README's MCP snippet, end to end."""
    mcp_url = walk.discover()["mcp"]
    meta = {"ucp-agent": {"profile": walk.profile_url}}

    async def go() -> dict[str, Any]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {walk.api_key}"})
        async with Client(streamable_http_client(mcp_url, http_client=http)) as client:

            async def tool(name: str, **arguments: Any) -> dict[str, Any]:
                result = await client.call_tool(name, {"meta": meta, **arguments})
                assert not result.is_error
                return result.structured_content

            found = await tool("search_catalog", catalog={"query": "café"})
            sku = found["products"][0]["variants"][0]["id"]
            created = await tool(
                "create_checkout",
                checkout={"line_items": [{"item": {"id": sku}, "quantity": 2}], "buyer": {"email": BUYER["email"]}},
            )
            state = {
                "line_items": [{"id": created["line_items"][0]["id"], "item": {"id": sku}, "quantity": 2}],
                "buyer": BUYER,
                "discounts": {"codes": ["BEMVINDO10"]},
                "fulfillment": {"methods": [{"type": "shipping", "destinations": [ADDRESS]}]},
            }
            addressed = await tool("update_checkout", id=created["id"], checkout=state)
            ready = await tool("update_checkout", id=created["id"], checkout=_with_choice(addressed, state, "pac"))
            key = str(uuid.uuid4())
            complete = {
                "meta": {**meta, "idempotency-key": key},
                "id": created["id"],
                "checkout": {"payment": {"instruments": [PIX]}},
            }
            completing = await client.call_tool("complete_checkout", complete)
            replay = await client.call_tool("complete_checkout", complete)
            paid = walk.pay_in_sandbox(completing.structured_content["payment"]["instruments"][0]["pix"]["txid"])
            completed = await tool("get_checkout", id=created["id"])
            order = await tool("get_order", id=completed["order"]["id"])
            try:
                await client.call_tool(
                    "create_checkout",
                    {"meta": meta, "checkout": {"line_items": [{"item": {"id": sku}, "quantity": 0}]}},
                )
                bad: Any = None
            except MCPError as exc:
                bad = exc.error.data
            return {
                "ready": ready,
                "completing": completing,
                "replay": replay,
                "paid": paid,
                "completed": completed,
                "order": order,
                "bad": bad,
            }

    seen = test_mcp_helpers.run(go)
    assert seen["ready"]["status"] == "ready_for_complete"
    assert [d["code"] for d in seen["ready"]["discounts"]["applied"]] == ["BEMVINDO10"]
    assert seen["completing"].structured_content["status"] == "complete_in_progress"
    assert seen["replay"].structured_content == seen["completing"].structured_content
    assert seen["paid"].status_code == 200
    assert seen["completed"]["status"] == "completed"
    assert seen["order"]["id"] == seen["completed"]["order"]["id"]
    assert seen["order"]["totals"][-1] == seen["ready"]["totals"][-1]
    # a bad argument names the field and says why in Portuguese
    assert seen["bad"]["code"] == "invalid_request"
    assert seen["bad"]["fields"] == {"$.checkout.line_items[0].quantity": "deve ser maior ou igual a 1"}
    _assert_signed_order_webhook(fake_platform, seen["order"]["id"])


def test_readme_rest_walk_buys_with_pix_bcp_chk_01(walk: Walk, fake_platform: FakePlatform) -> None:
    """BCP-CHK-01, BCP-IDEM-04, BCP-ERR-05: the README's REST steps with httpx."""
    rest = httpx.Client(
        base_url=walk.discover()["rest"],
        timeout=30,
        headers={"BCP-Agent": f'profile="{walk.profile_url}"', "Authorization": f"Bearer {walk.api_key}"},
    )
    sku = rest.post("/catalog/search", json={"query": "café"}).json()["products"][0]["variants"][0]["id"]
    state = readme_first_update()  # the README's JSON, as a developer would paste it
    assert state["line_items"][0]["item"]["id"] == sku
    created = rest.post(
        "/checkout-sessions",
        headers={"Idempotency-Key": str(uuid.uuid4())},
        json={"line_items": [{"item": {"id": sku}, "quantity": 2}], "buyer": {"email": BUYER["email"]}},
    )
    assert created.status_code == 201
    checkout_id = created.json()["id"]
    state["line_items"][0]["id"] = created.json()["line_items"][0]["id"]  # the README's `li_…`
    addressed = rest.put(f"/checkout-sessions/{checkout_id}", json=state).json()
    assert addressed["fulfillment"]["methods"][0]["destinations"][0]["postal_code"] == "01310-100"
    assert addressed["payment"]["instruments"][0]["handler_id"] == "pix_recebedor_001"
    ready = rest.put(f"/checkout-sessions/{checkout_id}", json=_with_choice(addressed, state, "sedex")).json()
    assert ready["status"] == "ready_for_complete", ready["messages"]
    key = {"Idempotency-Key": str(uuid.uuid4())}
    pay = {"payment": {"instruments": [PIX]}}
    completing = rest.post(f"/checkout-sessions/{checkout_id}/complete", headers=key, json=pay)
    replay = rest.post(f"/checkout-sessions/{checkout_id}/complete", headers=key, json=pay)
    assert completing.json()["status"] == "complete_in_progress"
    assert replay.content == completing.content
    assert walk.pay_in_sandbox(completing.json()["payment"]["instruments"][0]["pix"]["txid"]).status_code == 200
    order_ref = rest.get(f"/checkout-sessions/{checkout_id}").json()["order"]
    order = rest.get(f"/orders/{order_ref['id']}").json()
    assert order["permalink_url"] == order_ref["permalink_url"]
    _assert_signed_order_webhook(fake_platform, order_ref["id"])
    # a bad body: 400 invalid_request naming the field, in Portuguese
    bad = rest.post("/checkout-sessions", json={"line_items": [{"item": {"id": sku}, "quantity": "dois"}]})
    assert (bad.status_code, bad.json()) == (
        400,
        {
            "code": "invalid_request",
            "content": "Campo inválido $.line_items[0].quantity: deve ser um número inteiro",
            "fields": {"$.line_items[0].quantity": "deve ser um número inteiro"},
        },
    )


def test_readme_a2a_walk_buys_with_pix_bcp_a2a_05(walk: Walk, fake_platform: FakePlatform) -> None:
    """BCP-A2A-03/05/06/07: the README's headers and data intents with the official a2a-sdk client."""
    from a2a.client import ClientConfig, create_client
    from a2a.types import Message, Part, Role, SendMessageRequest
    from google.protobuf import struct_pb2
    from google.protobuf.json_format import MessageToDict, ParseDict

    card_url = walk.discover()["a2a"]
    assert card_url == f"{walk.base_url}/.well-known/agent-card.json"
    headers = {
        "BCP-Agent": f'profile="{walk.profile_url}"',
        "A2A-Version": "1.0",
        "A2A-Extensions": EXTENSION,
        "Authorization": f"Bearer {walk.api_key}",
    }

    async def go() -> dict[str, Any]:
        async with httpx.AsyncClient(headers=headers, timeout=30) as http:
            client = await create_client(walk.base_url, client_config=ClientConfig(streaming=False, httpx_client=http))
            context = {"id": ""}

            async def send(data: dict[str, Any], message_id: str | None = None) -> dict[str, Any]:
                message = Message(
                    role=Role.ROLE_USER,
                    message_id=message_id or str(uuid.uuid4()),
                    context_id=context["id"],
                    extensions=[EXTENSION],
                )
                message.parts.append(Part(data=ParseDict(data, struct_pb2.Value()), media_type="application/json"))
                async for event in client.send_message(SendMessageRequest(message=message)):
                    if event.HasField("task"):  # a Pix complete: the task in `working`, the checkout in its status
                        task = MessageToDict(event.task)
                        context["id"] = task["contextId"]
                        reply = {**task["status"]["message"], "state": task["status"]["state"]}
                    else:
                        reply = MessageToDict(event.message)
                        context["id"] = reply["contextId"]
                    data = {k: v for part in reply["parts"] if "data" in part for k, v in part["data"].items()}
                    return {**data, **({"state": reply["state"]} if "state" in reply else {})}
                raise AssertionError("no reply")

            await send({"action": "add_to_checkout", "variant_id": "SKU-CAFE-500G", "quantity": 1})
            await send({"action": "update_checkout", "buyer": BUYER, "address": ADDRESS, "coupon": "BEMVINDO10"})
            ready = await send({"action": "update_checkout", "fulfillment_option_id": "pac"})
            complete = {"action": "complete_checkout", "a2a.bcp.checkout.payment": {"instruments": [PIX]}}
            message_id = str(uuid.uuid4())
            completing = await send(complete, message_id)
            replay = await send(complete, message_id)
            paid = walk.pay_in_sandbox(completing["a2a.bcp.checkout"]["payment"]["instruments"][0]["pix"]["txid"])
            completed = await send({"action": "get_checkout"})
            order = await send({"action": "get_order", "order_id": completed["a2a.bcp.checkout"]["order"]["id"]})
            return {
                "ready": ready,
                "completing": completing,
                "replay": replay,
                "paid": paid,
                "completed": completed,
                "order": order,
            }

    seen = test_mcp_helpers.run(go)
    assert seen["ready"]["a2a.bcp.checkout"]["status"] == "ready_for_complete"
    assert [d["code"] for d in seen["ready"]["a2a.bcp.checkout"]["discounts"]["applied"]] == ["BEMVINDO10"]
    assert seen["completing"]["a2a.bcp.checkout"]["status"] == "complete_in_progress"
    assert seen["completing"]["state"] == "TASK_STATE_WORKING"  # issue 35: the Pix complete is a task
    assert seen["replay"] == seen["completing"]
    assert seen["paid"].status_code == 200
    order_ref = seen["completed"]["a2a.bcp.checkout"]["order"]
    assert seen["order"]["a2a.bcp.order"]["permalink_url"] == order_ref["permalink_url"]
    _assert_signed_order_webhook(fake_platform, order_ref["id"])
