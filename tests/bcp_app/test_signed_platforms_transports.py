"""Signature-authenticated platforms over MCP and A2A, with the official `mcp` and `a2a-sdk` clients against a
live uvicorn (REST: tests/bcp_app/test_signed_platforms.py).

BCP §7 Get Order: "Caller must be authenticated (API key, OAuth, mTLS or signature)"; §18: a verified
RFC 9421 signature by a key in the profile that created the checkout authenticates that platform for that
checkout's order (BCP-ORD-02, BCP-SIG-08). A platform that never registered signs every request with a key
of its own profile; it must see its own order on every transport, and nobody else may.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from google.protobuf.json_format import MessageToDict
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bcp_app.protocol.signatures import HttpMessage, content_digest, sign_message
from tests.bcp_app import test_mcp_checkout, test_mcp_helpers
from tests.bcp_app.bcp_fixtures import PLATFORM_KID, FakePlatform
from tests.bcp_app.test_a2a_helpers import EXTENSION, LiveServer
from tests.shop.checkout_factories import make_shipping, make_variant

live_mcp = test_mcp_helpers.live_mcp
pytestmark = [pytest.mark.postgres, pytest.mark.e2e, pytest.mark.usefixtures("bcp_settings")]
COVERED = ("@method", "@authority", "@path", "bcp-agent", "content-digest", "content-type")


def sign(request: Any, key: ec.EllipticCurvePrivateKey) -> None:
    """Sign an outgoing httpx request in place (RFC 9421), covering every BCP §14 component it carries."""
    body = request.content
    if body:
        request.headers["Content-Digest"] = content_digest(body)
    headers = {name.lower(): value for name, value in request.headers.items()}
    path = request.url.raw_path.decode().split("?", 1)[0]
    query = request.url.query.decode() if isinstance(request.url.query, bytes) else str(request.url.query)
    message = HttpMessage(
        method=request.method, authority=request.url.netloc.decode(), path=path, query=query or None, headers=headers
    )
    components = [c for c in COVERED if c.startswith("@") or c in headers]
    if query:
        components.append("@query")
    request.headers.update(sign_message(message, components, key=key, keyid=PLATFORM_KID))


def another_platform(fake_platform: FakePlatform) -> tuple[str, ec.EllipticCurvePrivateKey]:
    """Another platform's profile (URL) and its own signing key, served by the same loopback server."""
    other = FakePlatform(
        port=fake_platform.port, routes=fake_platform.routes, key=ec.generate_private_key(ec.SECP256R1())
    )
    url = fake_platform.serve_json("/outro.json", other.profile(), headers={"Cache-Control": "public, max-age=300"})
    return url, other.key


class SignedShopper(test_mcp_checkout.Shopper):
    """An MCP platform with no API key: the official client, every HTTP request signed with `key`."""

    def __init__(self, url: str, profile_url: str, key: ec.EllipticCurvePrivateKey) -> None:
        super().__init__(url, profile_url, api_key="")
        self.headers = {}
        self.key = key

    def tool(self, name: str, key: str | None = None, **arguments: Any) -> dict[str, Any]:
        async def hook(request: Any) -> None:
            sign(request, self.key)

        async def go() -> Any:
            http = httpx2.AsyncClient(timeout=30, event_hooks={"request": [hook]})
            async with Client(streamable_http_client(self.url, http_client=http), cache=None) as client:
                return await client.call_tool(name, {"meta": self.meta(key), **arguments})

        result = anyio.run(go)
        assert not result.is_error, result.content
        return result.structured_content


@pytest.fixture
def signed_shopper(live_mcp: Any, fake_platform: FakePlatform, transactional_db: None) -> Iterator[SignedShopper]:
    from config.celery import app as celery_app

    make_variant("SKU-CAFE-500G", price=4290, stock=10, title="Café especial 500 g")
    make_shipping()
    saved = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True  # settlement runs in-process (see test_mcp_checkout.shopper)
    yield SignedShopper(live_mcp.mcp_url, fake_platform.publish(), fake_platform.key)
    celery_app.conf.task_always_eager = saved


def test_a_signed_unregistered_platform_reads_its_own_order_over_mcp_bcp_ord_02_sig_08(
    signed_shopper: SignedShopper, fake_platform: FakePlatform
) -> None:
    """BCP §7/§18 over MCP: the order of a checkout the signed platform created is its own."""
    from payments.sandbox import services as sandbox

    ready = test_mcp_checkout.ready_checkout(signed_shopper)
    sandbox.pay(txid=ready["payment"]["instruments"][0]["pix"]["txid"], options=sandbox.PayOptions())
    done = signed_shopper.tool(
        "complete_checkout",
        key=str(uuid.uuid4()),
        id=ready["id"],
        checkout={"payment": {"instruments": [test_mcp_checkout.PIX]}},
    )
    assert done["status"] == "completed", done.get("messages")

    order = signed_shopper.tool("get_order", id=done["order"]["id"])

    assert (order["id"], order["checkout_id"]) == (done["order"]["id"], done["id"])
    # unsigned with the same profile: anonymous; signed by another profile's key: someone else
    unsigned = test_mcp_helpers.call(
        signed_shopper.url, "get_order", {"meta": signed_shopper.meta(), "id": order["id"]}
    ).structured_content
    other_url, other_key = another_platform(fake_platform)
    by_other = SignedShopper(signed_shopper.url, other_url, other_key).tool("get_order", id=order["id"])
    for body in (unsigned, by_other):
        assert [m["code"] for m in body["messages"]] == ["unauthorized"]


# --- A2A ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def live_a2a(django_db_setup: None, django_db_blocker: Any) -> Iterator[LiveServer]:
    with django_db_blocker.unblock():
        started = LiveServer().start()
    yield started
    started.stop()


def a2a_send(
    base_url: str,
    profile_url: str,
    key: ec.EllipticCurvePrivateKey | None,
    data: dict[str, Any],
    *,
    context_id: str = "",
) -> dict[str, Any]:
    """One SendMessage with the official a2a-sdk client, every HTTP request signed with `key` (if any)."""
    from a2a.client import ClientConfig, create_client
    from a2a.types import Message, Part, Role, SendMessageRequest
    from google.protobuf import struct_pb2
    from google.protobuf.json_format import ParseDict

    async def hook(request: httpx.Request) -> None:
        if key is not None:
            sign(request, key)

    async def go() -> Any:
        headers = {"BCP-Agent": f'profile="{profile_url}"', "A2A-Extensions": EXTENSION}
        async with httpx.AsyncClient(headers=headers, timeout=30, event_hooks={"request": [hook]}) as http:
            client = await create_client(base_url, client_config=ClientConfig(streaming=False, httpx_client=http))
            message = Message(
                role=Role.ROLE_USER, message_id=str(uuid.uuid4()), context_id=context_id, extensions=[EXTENSION]
            )
            message.parts.append(Part(data=ParseDict(data, struct_pb2.Value()), media_type="application/json"))
            async for event in client.send_message(SendMessageRequest(message=message)):
                return MessageToDict(event.message)
            return {}

    return asyncio.run(go())


def part(message: dict[str, Any], name: str) -> dict[str, Any]:
    for found in message["parts"]:
        if name in found.get("data", {}):
            return found["data"][name]
    raise AssertionError(f"no {name} in {json.dumps(message)[:500]}")


def test_a_signed_unregistered_platform_reads_its_own_order_over_a2a_bcp_ord_02_sig_08(
    live_a2a: LiveServer, fake_platform: FakePlatform, transactional_db: None, settings: Any
) -> None:
    """BCP §7/§18 over A2A: a checkout built by a signed, unregistered platform belongs to the profile whose
    key signed; the order placed from it is readable by that platform's signed `get_order`, by nobody else."""
    from shop.models import Checkout
    from tests.bcp_app.test_a2a_helpers import make_product
    from tests.bcp_app.test_mcp_get_order import place_seed_order

    settings.BCP_PUBLIC_URL = live_a2a.base_url
    make_product("Pixel 10 Pro", "PIXEL-10-PRO", 599900)
    url = fake_platform.publish()
    added = a2a_send(
        live_a2a.base_url,
        url,
        fake_platform.key,
        {"action": "add_to_checkout", "product_id": "PIXEL-10-PRO", "quantity": 1},
    )
    checkout = Checkout.objects.get(public_id=part(added, "a2a.bcp.checkout")["id"])
    assert checkout.platform_id  # the signing profile owns it (BCP §18), not an anonymous caller
    # the order placed from that checkout (seed 000's order, placed for the checkout's owner)
    order = place_seed_order(checkout.platform_id, checkout_id=checkout.public_id)

    mine = part(
        a2a_send(live_a2a.base_url, url, fake_platform.key, {"action": "get_order", "order_id": order.public_id}),
        "a2a.bcp.order",
    )
    unsigned = part(
        a2a_send(live_a2a.base_url, url, None, {"action": "get_order", "order_id": order.public_id}), "a2a.bcp.order"
    )
    other_url, other_key = another_platform(fake_platform)
    by_other = part(
        a2a_send(live_a2a.base_url, other_url, other_key, {"action": "get_order", "order_id": order.public_id}),
        "a2a.bcp.order",
    )

    assert (mine["id"], mine["checkout_id"]) == (order.public_id, checkout.public_id)
    for body in (unsigned, by_other):
        assert [m["code"] for m in body["messages"]] == ["unauthorized"]
