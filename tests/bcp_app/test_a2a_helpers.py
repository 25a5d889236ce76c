"""Helpers shared by the A2A/AP2 tests: a platform-side AP2 mandate builder written with joserfc.

joserfc is a JOSE implementation independent of `bcp_app.protocol.ap2` (which only uses `cryptography`), so a
mandate built here and accepted there is a cross-implementation check (PIX.md §7.3).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest
from joserfc import jws
from joserfc.jwk import ECKey

from bcp_app.protocol import ap2
from tests.bcp_app.live import LiveServer as BaseLiveServer


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def ec_key() -> ECKey:
    return ECKey.generate_key("P-256", private=True)


def public_jwk(key: ECKey, kid: str) -> dict[str, Any]:
    return {**key.as_dict(private=False), "kid": kid, "alg": "ES256", "use": "sig"}


def disclosure(name: str, value: Any) -> str:
    return b64url(json.dumps([b64url(secrets.token_bytes(16)), name, value]).encode())


def build_checkout_mandate(
    *,
    signed_checkout: dict[str, Any],
    platform_key: ECKey,
    platform_kid: str,
    holder_key: ECKey,
    audience: str,
    nonce: str | None = None,
    exp_in: int = 600,
    checkout_jwt: str | None = None,
    checkout_hash: str | None = None,
    extra_disclosures: tuple[str, ...] = (),
) -> str:
    """A one-hop SD-JWT+KB checkout mandate carrying `checkout_jwt`/`checkout_hash` (PIX.md §7.3, D3, D7)."""
    if checkout_jwt is None:
        checkout_jwt = ap2.attach_payload(signed_checkout["ap2"]["merchant_authorization"], signed_checkout)
    if checkout_hash is None:
        checkout_hash = b64url(hashlib.sha256(checkout_jwt.encode()).digest())
    disclosures = [disclosure("checkout_jwt", checkout_jwt), disclosure("checkout_hash", checkout_hash)]
    now = int(time.time())
    issuer_payload = {
        "vct": "mandate.checkout.1",
        "_sd_alg": "sha-256",
        "_sd": sorted(b64url(hashlib.sha256(item.encode()).digest()) for item in disclosures),
        "iat": now,
        "exp": now + exp_in,
        "cnf": {"jwk": holder_key.as_dict(private=False)},
    }
    issuer_jwt = jws.serialize_compact(
        {"alg": "ES256", "kid": platform_kid, "typ": "vc+sd-jwt"},
        json.dumps(issuer_payload).encode(),
        platform_key,
    )
    sd_jwt = issuer_jwt + "~" + "~".join([*disclosures, *extra_disclosures]) + "~"
    kb_claims = {
        "iat": now,
        "aud": audience,
        "nonce": signed_checkout["id"] if nonce is None else nonce,
        "sd_hash": b64url(hashlib.sha256(sd_jwt.encode()).digest()),
    }
    kb_jwt = jws.serialize_compact({"alg": "ES256", "typ": "kb+jwt"}, json.dumps(kb_claims).encode(), holder_key)
    return sd_jwt + kb_jwt


# --- live server, platform profile and clients ------------------------------------------------------------

SEED_PROFILE = "https://agent.example/profiles/v2026-07/shopping-agent.json"
EXTENSION = "https://bcp.dev.br/draft/specification/reference"
SEED_HEADERS = {
    "BCP-Agent": f'profile="{SEED_PROFILE}"',
    "A2A-Version": "1.0",
    "A2A-Extensions": EXTENSION,
    "Content-Type": "application/json",
}
_DRAFT = "https://bcp.dev.br/draft"
CHECKOUT = "br.dev.bcp.shopping.checkout"


def _capability(name: str, schema: str, extends: str | None = None) -> list[dict[str, Any]]:
    entry: dict[str, Any] = {
        "version": "2026-07-28",
        "spec": f"{_DRAFT}/specification/{name}",
        "schema": f"{_DRAFT}/schemas/shopping/{schema}.json",
    }
    if extends:
        entry["extends"] = extends
    return [entry]


def platform_profile(
    *, keys: list[dict[str, Any]] | None = None, ap2: bool = False, handlers: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A valid platform profile (BCP §3) with checkout + fulfillment + order (and AP2 when asked)."""
    capabilities = {
        CHECKOUT: _capability("checkout", "checkout"),
        "br.dev.bcp.shopping.fulfillment": _capability("fulfillment", "fulfillment", CHECKOUT),
        "br.dev.bcp.shopping.discount": _capability("discount", "discount", CHECKOUT),
        "br.dev.bcp.shopping.order": _capability("order", "order"),
    }
    if ap2:
        capabilities["br.dev.bcp.shopping.ap2_mandate"] = _capability("ap2-mandates", "ap2_mandate", CHECKOUT)
    profile: dict[str, Any] = {
        "ucp": {
            "version": "2026-07-28",
            "services": {},
            "capabilities": capabilities,
            "payment_handlers": handlers if handlers is not None else {},
        },
    }
    if keys:
        profile["keys"] = keys
    return profile


def cache_profile(url: str, profile: dict[str, Any]) -> None:
    """Put a platform profile in the shop's profile cache (BCP §3 step 2), as if fetched a moment ago."""
    from datetime import timedelta

    from django.utils import timezone

    from bcp_app.models import ProfileCacheEntry
    from bcp_app.service.negotiation import url_hash, validate_platform_profile

    validate_platform_profile(profile)
    now = timezone.now()
    ProfileCacheEntry.objects.update_or_create(
        url_hash=url_hash(url),
        defaults={"url": url, "body": profile, "fetched_at": now, "expires_at": now + timedelta(hours=1)},
    )


class LiveServer(BaseLiveServer):
    """The whole ASGI application (Django, MCP, A2A) with its lifespan on, via `tests.bcp_app.live`."""

    def __init__(self, app: Any = None) -> None:
        if app is None:
            from config.asgi import build_application

            app = build_application()
        super().__init__(app, lifespan="on")

    @property
    def a2a_url(self) -> str:
        return f"{self.base_url}/bcp/a2a"


def separate_a2a_app() -> Any:
    """A second, independent A2A application instance (its own SDK handler) in front of Django."""
    from bcp_app.transports.a2a.server import A2AApplication
    from config.asgi import PathRouter, django_app

    app = A2AApplication()
    return PathRouter(django_app, {"/bcp/a2a": app, "/.well-known/agent-card.json": app})


def rpc(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
    """A raw JSON-RPC POST with httpx; returns the decoded JSON body (HTTP 200 expected)."""
    import httpx

    response = httpx.post(
        url, content=json.dumps(body).encode(), headers=SEED_HEADERS if headers is None else headers, timeout=30
    )
    assert response.status_code == 200, response.text
    return response.json()


def send_message(
    parts: list[dict[str, Any]], *, message_id: str | None = None, context_id: str | None = None, request_id: int = 1
) -> dict[str, Any]:
    import uuid

    message: dict[str, Any] = {"role": "ROLE_USER", "parts": parts, "messageId": message_id or str(uuid.uuid4())}
    if context_id:
        message["contextId"] = context_id
    message["extensions"] = [EXTENSION]
    return {"jsonrpc": "2.0", "id": request_id, "method": "SendMessage", "params": {"message": message}}


def sdk_send(
    base_url: str,
    parts: list[dict[str, Any]],
    *,
    headers: dict[str, str] | None = None,
    context_id: str = "",
    message_id: str | None = None,
) -> Any:
    """Send one message with the official a2a-sdk client (card resolved from the server); returns the Message."""
    import asyncio
    import uuid

    import httpx
    from a2a.client import ClientConfig, create_client
    from a2a.types import Message, Part, Role, SendMessageRequest
    from google.protobuf import struct_pb2
    from google.protobuf.json_format import ParseDict

    sent_headers = {"BCP-Agent": SEED_HEADERS["BCP-Agent"], "A2A-Extensions": EXTENSION} if headers is None else headers

    async def go() -> Any:
        async with httpx.AsyncClient(headers=sent_headers, timeout=30) as http:
            client = await create_client(base_url, client_config=ClientConfig(streaming=False, httpx_client=http))
            message = Message(
                role=Role.ROLE_USER,
                message_id=message_id or str(uuid.uuid4()),
                context_id=context_id,
                extensions=[EXTENSION],
            )
            for part in parts:
                if "data" in part:
                    message.parts.append(
                        Part(data=ParseDict(part["data"], struct_pb2.Value()), media_type="application/json")
                    )
                else:
                    message.parts.append(Part(text=part["text"]))
            async for event in client.send_message(SendMessageRequest(message=message)):
                return event.message
            return None

    return asyncio.run(go())


PIX_HANDLERS = {
    "br.dev.bcp.pix": [
        {
            "id": "platform_pix",
            "version": "2026-07-28",
            "spec": "https://bcp.dev.br/draft/specification/payment/pix",
            "schema": "https://bcp.dev.br/draft/schemas/payment/pix.json",
            "config": {},
        }
    ]
}


@pytest.fixture(scope="module", name="live")
def live_fixture(django_db_setup: None, django_db_blocker: Any) -> Iterator[LiveServer]:
    """One uvicorn per test module; tests take `server` (transactional_db) so it sees their rows."""
    with django_db_blocker.unblock():
        started = LiveServer().start()
    yield started
    started.stop()


@pytest.fixture(name="server")
def server_fixture(live: LiveServer, transactional_db: None, settings: Any) -> LiveServer:
    settings.BCP_PUBLIC_URL = live.base_url
    settings.BCP_OUTBOUND_ALLOWLIST = ["127.0.0.1"]
    cache_profile(SEED_PROFILE, platform_profile(handlers=PIX_HANDLERS))
    return live


def make_product(
    title: str,
    sku: str,
    price: int,
    *,
    requires_shipping: bool = False,
    stock: int = 10,
    variants: tuple[tuple[str, str, dict[str, str]], ...] = (),
) -> Any:
    """A product with one variant `sku`, or with `variants` = ((sku, title, options), …) at `price`."""
    from django.utils.text import slugify

    from shop.models import Category, Product, Variant

    category, _ = Category.objects.get_or_create(slug="geral", defaults={"name": "Geral"})
    product = Product.objects.create(
        title=title,
        slug=slugify(f"{title}-{sku}"),
        category=category,
        description=f"{title}.",
        requires_shipping=requires_shipping,
    )
    for position, (variant_sku, variant_title, options) in enumerate(variants or ((sku, "", {}),)):
        Variant.objects.create(
            product=product,
            sku=variant_sku,
            title=variant_title,
            options=options,
            price=price,
            stock=stock,
            position=position,
        )
    return product


def data(payload: dict[str, Any]) -> dict[str, Any]:
    return {"data": payload, "mediaType": "application/json"}


def checkout_of(body: dict[str, Any]) -> dict[str, Any]:
    """The `a2a.bcp.checkout` data of a SendMessage result (a direct Message, or a Task's status message)."""
    result = body["result"]
    message = result["message"] if "message" in result else result["task"]["status"]["message"]
    for part in message["parts"]:
        if "data" in part and "a2a.bcp.checkout" in part["data"]:
            return part["data"]["a2a.bcp.checkout"]
    raise AssertionError(f"no a2a.bcp.checkout in {body}")
