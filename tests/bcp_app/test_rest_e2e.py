"""The full agent flow over REST against a live uvicorn and a real Celery worker (issue 6):

create → update (address, shipping option, Pix) → complete → the sandbox PSP is paid → Celery settles →
`completed` with order → GET /orders/{id} → a shipment through orders services → signed order webhooks
received by the local platform server, whose signatures verify with the key from /.well-known/bcp.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bcp_app.protocol.signatures import WEBHOOK_COMPONENTS, HttpMessage, verify_message
from orders.services.fulfillment import order_ship
from tests.bcp_app.bcp_fixtures import VERSION, FakePlatform
from tests.bcp_app.live import CeleryWorker, LiveServer, pix_settlement_stack, wait_for
from tests.bcp_app.rest_helpers import PIX, SP, catalog

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.usefixtures("bcp_settings")]
SECRET = "e2e-sandbox-secret"


@pytest.fixture
def stack(transactional_db: Any, settings: Any) -> Iterator[tuple[LiveServer, CeleryWorker]]:
    with pix_settlement_stack(settings, secret=SECRET) as stack:
        yield stack


def test_full_rest_agent_flow_with_pix_settlement_and_signed_webhooks(
    stack: tuple[LiveServer, CeleryWorker], fake_platform: FakePlatform
) -> None:
    from bcp_app.service.platforms import platform_create

    server, _ = stack
    catalog()
    registered = platform_create(name="Agente E2E", profile_url=fake_platform.publish())
    headers = {
        "BCP-Agent": f'profile="{registered.platform.profile_url}"',
        "Authorization": f"Bearer {registered.api_key}",
        "Request-Id": "e2e-1",
    }
    api = httpx.Client(base_url=f"{server.url}/bcp/v1", headers=headers, timeout=30)

    # create
    created = api.post(
        "/checkout-sessions",
        json={"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 2}]},
        headers={"Idempotency-Key": str(uuid.uuid4())},
    )
    assert (created.status_code, created.headers["Request-Id"]) == (201, "e2e-1")
    checkout = created.json()
    line = checkout["line_items"][0]
    base = {
        "line_items": [{"id": line["id"], "item": {"id": "SKU-CAFE-500G"}, "quantity": 2}],
        "buyer": {"first_name": "Ana", "last_name": "Souza", "email": "ana@example.com.br"},
    }
    # update with the address, then the option and Pix
    checkout = api.put(
        f"/checkout-sessions/{checkout['id']}",
        json={**base, "fulfillment": {"methods": [{"type": "shipping", "destinations": [SP]}]}},
    ).json()
    method = checkout["fulfillment"]["methods"][0]
    destination = method["destinations"][0]["id"]
    checkout = api.put(
        f"/checkout-sessions/{checkout['id']}",
        json={
            **base,
            "fulfillment": {
                "methods": [
                    {
                        "id": method["id"],
                        "type": "shipping",
                        "destinations": [{**SP, "id": destination}],
                        "selected_destination_id": destination,
                        "groups": [{"id": method["groups"][0]["id"], "selected_option_id": "sedex"}],
                    }
                ]
            },
            "payment": {"instruments": [PIX]},
        },
    ).json()
    assert checkout["status"] == "ready_for_complete"
    assert checkout["totals"][-1] == {"type": "total", "amount": 11870}
    txid = checkout["payment"]["instruments"][0]["pix"]["txid"]
    # complete: Pix not paid yet
    completing = api.post(
        f"/checkout-sessions/{checkout['id']}/complete",
        json={"payment": {"instruments": [PIX]}},
        headers={"Idempotency-Key": str(uuid.uuid4())},
    )
    assert completing.json()["status"] == "complete_in_progress"
    # the buyer pays in the sandbox PSP; its webhook reaches us and the Celery worker settles
    paid = httpx.post(
        f"{server.url}/_sandbox/psp/cob/{txid}/pay", json={}, headers={"BCP-Sandbox-Secret": SECRET}, timeout=30
    )
    assert paid.status_code == 200, paid.text

    def completed() -> dict[str, Any] | None:
        body = api.get(f"/checkout-sessions/{checkout['id']}").json()
        return body if body["status"] == "completed" else None

    done = wait_for(completed, timeout=90)
    order_id = done["order"]["id"]
    order = api.get(f"/orders/{order_id}").json()
    assert order["ucp"] == {"version": VERSION, "capabilities": {"br.dev.bcp.shopping.order": [{"version": VERSION}]}}
    assert (order["id"], order["checkout_id"], order["permalink_url"]) == (
        order_id,
        checkout["id"],
        done["order"]["permalink_url"],
    )
    assert order["totals"][-1] == {"type": "total", "amount": 11870}
    # a shipment through the orders services (what the admin action calls)
    order_ship(order_id=order_id, tracking_number="BR123456785BR", carrier="Correios")
    hooks = wait_for(
        lambda: (lambda r: r if len(r) >= 2 else None)(
            [r for r in fake_platform.received if r.method == "POST" and r.path == "/webhooks/bcp/pedidos"]
        ),
        timeout=90,
    )
    keys = httpx.get(f"{server.url}/.well-known/bcp", timeout=10).json()["keys"]
    events = []
    for received in hooks:
        message = HttpMessage(
            method="POST",
            authority=f"127.0.0.1:{fake_platform.port}",
            path="/webhooks/bcp/pedidos",
            headers=received.headers,
        )
        verify_message(message, received.body, keys, required=WEBHOOK_COMPONENTS)
        body = json.loads(received.body)
        assert body["id"] == order_id
        events.append([e["type"] for e in body["fulfillment"]["events"]])
    assert sorted(events, key=len) == [[], ["shipped"]]
