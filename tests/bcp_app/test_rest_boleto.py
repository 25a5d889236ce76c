"""An agent buys with boleto over BCP REST (issue 37): the `br.dev.bcp.boleto` handler is advertised in
/.well-known/bcp and offered to a platform that lists it (BCP-PAY-01, BCP-PAY-02); complete with a "boleto"
instrument answers `complete_in_progress` with the boleto (line, barcode, PDF, due date) on the instrument;
the gateway's `charge.paid` webhook places the order, which the agent then reads (BCP-PAY-03, BCP-PAY-05).
The gateway is the fake Pagar.me v5 on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from jsonschema import Draft202012Validator

from orders.models import Order
from payments.boleto.codes import barcode_from_line
from payments.models import BoletoPayment
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import BUYER, call, catalog, create, full_update
from tests.payments.fake_pagarme import FakePagarmeServer, webhook_authorization

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]
BOLETO = {"id": "instr_boleto", "handler_id": "br.dev.bcp.boleto", "type": "boleto", "selected": True}
BOLETO_HANDLERS = {
    "br.dev.bcp.boleto": [
        {
            "id": "br.dev.bcp.boleto",
            "version": "2026-07-28",
            "spec": "https://bcp.dev.br/draft/specification/payment/boleto",
            "schema": "https://bcp.dev.br/draft/schemas/shopping/boleto.json",
            "available_instruments": [{"type": "boleto"}],
            "config": {},
        }
    ]
}


SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "bcp_app/jsonschemas/shopping/boleto.json").read_text())


def _schema_errors(instance: Any, definition: str) -> list[str]:
    validator = Draft202012Validator({**SCHEMA, "$ref": f"#/$defs/{definition}"})
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(instance)]


@pytest.fixture
def headers(fake_platform: FakePlatform, pagarme: FakePagarmeServer) -> dict[str, str]:
    catalog()
    handlers = {**fake_platform.profile()["ucp"]["payment_handlers"], **BOLETO_HANDLERS}
    return agent(fake_platform.publish(handlers=handlers))


def _ready_with_boleto(client: Client, headers: dict[str, str], *, tax_id: str = "52998224725") -> dict[str, Any]:
    checkout = create(client, headers).json()
    body = full_update(checkout, pix=False)
    checkout = call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, body).json()
    body = full_update(checkout, pix=False)
    body["buyer"] = {**BUYER, "tax_id": tax_id}
    body["payment"] = {"instruments": [BOLETO]}
    return call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, body).json()


def _complete(client: Client, checkout_id: str, headers: dict[str, str], key: str = "k-boleto-1") -> Any:
    body = {"payment": {"instruments": [BOLETO]}}
    return call(client, "post", f"/checkout-sessions/{checkout_id}/complete", {**headers, "Idempotency-Key": key}, body)


def test_the_boleto_handler_is_advertised_with_its_config(client: Client, headers: dict[str, str]) -> None:
    # BCP-PAY-01: the profile lists the handler with its runtime config
    profile = client.get("/.well-known/bcp").json()
    handlers = profile["ucp"]["payment_handlers"] if "ucp" in profile else profile["payment_handlers"]

    (entry,) = handlers["br.dev.bcp.boleto"]
    assert entry["id"] == "br.dev.bcp.boleto"
    assert entry["available_instruments"] == [{"type": "boleto"}]
    assert entry["config"] == {
        "environment": "production",
        "gateway": "pagarme",
        "due_business_days": 3,
        "expiry_grace_days": 3,
        "min_amount": 500,
        "requires_buyer_tax_id": True,
    }
    assert _schema_errors(entry["config"], "config") == []


def test_an_agent_buys_with_boleto_and_the_paid_webhook_places_the_order(
    client: Client, headers: dict[str, str], pagarme: FakePagarmeServer, django_capture_on_commit_callbacks
) -> None:
    checkout = _ready_with_boleto(client, headers)
    assert checkout["status"] == "ready_for_complete", checkout["messages"]
    # BCP-PAY-02: offered to this platform, which lists it
    assert "br.dev.bcp.boleto" in checkout["ucp"]["payment_handlers"]

    done = _complete(client, checkout["id"], headers).json()
    replay = _complete(client, checkout["id"], headers).json()  # the same Idempotency-Key: the stored answer

    assert done["status"] == "complete_in_progress", done["messages"]
    assert replay == done
    instrument = done["payment"]["instruments"][0]
    boleto = instrument["boleto"]
    stored = BoletoPayment.objects.get()
    assert instrument["display"]["description"] == "Boleto bancário"
    assert (boleto["id"], boleto["status"], boleto["amount"]) == (stored.payment_id, "pending", stored.amount)
    assert boleto["barcode"] == barcode_from_line(boleto["line"])
    assert boleto["due_date"] == stored.due_date.isoformat()
    assert boleto["pdf_url"] == stored.pdf_url
    assert _schema_errors(boleto, "boleto") == []  # the handler's schema (bcp_app/jsonschemas/shopping/boleto.json)
    assert [m["code"] for m in done["messages"]] == ["boleto_awaiting_payment"]
    # BCP-PAY-05: one boleto, one gateway order, however often complete is retried
    assert len([r for r in pagarme.state.requests if r[0] == "POST"]) == 1

    pagarme.pay_boleto(stored.gateway_charge_id)
    hook = pagarme.webhook("charge.paid", stored.gateway_charge_id)
    with django_capture_on_commit_callbacks(execute=True):
        Client().post("/payments/card/webhook", data=json.dumps(hook), content_type="application/json",
                      HTTP_AUTHORIZATION=webhook_authorization())  # fmt: skip

    after = call(client, "get", f"/checkout-sessions/{checkout['id']}", headers).json()
    assert after["status"] == "completed"
    assert after["payment"]["instruments"][0]["boleto"]["status"] == "paid"
    order = Order.objects.get()
    assert (order.payment_type, order.paid_amount, after["order"]["id"]) == ("boleto", stored.amount, order.public_id)


def test_complete_with_boleto_without_the_buyers_cpf_names_the_field(
    client: Client, headers: dict[str, str], pagarme: FakePagarmeServer
) -> None:
    checkout = _ready_with_boleto(client, headers, tax_id="")

    done = _complete(client, checkout["id"], headers).json()

    assert done["status"] == "ready_for_complete"
    error = next(m for m in done["messages"] if m["type"] == "error")
    assert (error["code"], error["path"]) == ("field_required", "$.buyer.tax_id")
    assert pagarme.state.requests == []
