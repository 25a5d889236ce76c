"""Parcelamento over BCP REST: the card handler advertises `config.installments`, the card instrument carries
`installments`, interest above the interest-free plans is a `fee` total, totals stay exact and the order is
paid the total (BCP-CHK-04, BCP-PAY-04)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.test import Client

from orders.models import Order
from payments.installments import InstallmentPolicy, plan_for
from payments.models import CardPayment
from shop.models import CheckoutEvent, StoreSettings
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import call, catalog, create, full_update

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]
CARD = {"id": "instr_card", "handler_id": "gpay", "type": "card", "selected": True}
TOKEN = {"type": "PAYMENT_GATEWAY", "token": "success_token"}


@pytest.fixture
def headers(fake_platform: FakePlatform, settings: Any) -> dict[str, str]:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    StoreSettings.objects.create(card_interest_free_installments=3, card_monthly_interest_bp=199)
    catalog()
    return agent(fake_platform.publish(handlers=fake_platform.with_card()))  # completes by card (BCP-PAY-03)


def _with_card(client: Client, headers: dict[str, str], installments: int) -> dict[str, Any]:
    checkout = create(client, headers).json()
    assert "line_items" in checkout, checkout
    body = full_update(checkout, pix=False)
    checkout = call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, body).json()
    body = full_update(checkout, pix=False)
    body["payment"] = {"instruments": [{**CARD, "installments": installments}]}
    return call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, body).json()


def _declined_once(client: Client, headers: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A card checkout in 1x whose first complete the gateway declined: the checkout and that complete's answer."""
    checkout = _with_card(client, headers, 1)
    declined = {"payment": {"instruments": [{**CARD, "installments": 1,
                                             "credential": {**TOKEN, "token": "fail_token"}}]}}  # fmt: skip
    first = call(client, "post", f"/checkout-sessions/{checkout['id']}/complete",
                 {**headers, "Idempotency-Key": "k-declined"}, declined).json()  # fmt: skip
    assert first["status"] == "incomplete"
    return checkout, first


def test_the_card_handler_advertises_the_shops_installment_plan(client: Client, headers: dict[str, str]) -> None:
    profile = client.get("/.well-known/bcp").json()
    handlers = profile["ucp"]["payment_handlers"] if "ucp" in profile else profile["payment_handlers"]
    card = next(entry for entries in handlers.values() for entry in entries if entry["id"] == "gpay")

    assert card["config"]["installments"] == {
        "max_installments": 12,
        "interest_free_installments": 3,
        "monthly_interest_rate_bp": 199,
        "min_installment_amount": 500,
    }


def test_a_store_save_is_in_the_next_answers_handler_entries_and_each_answer_has_its_own(
    client: Client, headers: dict[str, str]
) -> None:
    """The handler entries are made once per copy of the store settings (issue 34): the merchant's save of the
    parcelamento, the Pix discount or the Pix merchant is in the very next checkout answer (BCP-PAY-02), and one
    answer's resolved Pix discount (`total_with_pix`) is never another's."""
    checkout = create(client, headers).json()
    before = checkout["ucp"]["payment_handlers"]
    assert "discount" not in before["br.dev.bcp.pix"][0]["config"]

    store = StoreSettings.objects.get()
    store.card_max_installments, store.pix_discount_percent, store.legal_name = 6, Decimal(5), "Cafe Novo Ltda"
    store.save()
    after = call(client, "get", f"/checkout-sessions/{checkout['id']}", headers).json()["ucp"]["payment_handlers"]

    assert after["com.google.pay"][0]["config"]["installments"]["max_installments"] == 6
    pix = after["br.dev.bcp.pix"][0]["config"]
    assert pix["merchant_name"] == "CAFE NOVO LTDA"
    assert pix["discount"]["basis_points"] == 500
    total = next(t["amount"] for t in checkout["totals"] if t["type"] == "total")
    assert 0 < pix["discount"]["total_with_pix"] < total
    other = create(client, headers, {"line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 3}]}).json()
    other_pix = other["ucp"]["payment_handlers"]["br.dev.bcp.pix"][0]["config"]["discount"]
    assert other_pix["total_with_pix"] > pix["discount"]["total_with_pix"]
    again = call(client, "get", f"/checkout-sessions/{checkout['id']}", headers).json()["ucp"]["payment_handlers"]
    assert again == after


def test_card_in_6x_adds_the_interest_as_a_fee_and_completes_for_the_exact_total(
    client: Client, headers: dict[str, str]
) -> None:
    checkout = _with_card(client, headers, 6)
    totals = {t["type"]: t for t in checkout["totals"]}
    plain = totals["subtotal"]["amount"] + totals["fulfillment"]["amount"]
    plan = plan_for(plain, 6, InstallmentPolicy(12, 3, 199, 500))
    assert checkout["status"] == "ready_for_complete", checkout["messages"]
    assert totals["fee"] == {"type": "fee", "amount": plan.interest, "display_text": "Juros do parcelamento (6x)"}
    assert totals["total"]["amount"] == plan.total == sum(t["amount"] for t in checkout["totals"][:-1])
    instrument = checkout["payment"]["instruments"][0]
    assert instrument["installments"] == 6
    assert instrument["display"]["description"].startswith("Cartão em 6x de R$ ")

    done = call(
        client,
        "post",
        f"/checkout-sessions/{checkout['id']}/complete",
        {**headers, "Idempotency-Key": "k-card-6x"},
        {"payment": {"instruments": [{**CARD, "installments": 6, "credential": TOKEN}]}},
    ).json()

    assert done["status"] == "completed", done["messages"]
    order = Order.objects.get(checkout_id=checkout["id"])
    assert (order.installments, order.paid_amount, order.total_amount) == (6, plan.total, plan.total)
    assert CardPayment.objects.get().amount == plan.total  # the card was charged the total, interest included


def test_installments_outside_the_plan_are_a_message_on_the_instrument(client: Client, headers: dict[str, str]) -> None:
    checkout = _with_card(client, headers, 24)

    assert checkout["status"] == "incomplete"
    problem = next(m for m in checkout["messages"] if m["type"] == "error")
    assert problem["path"] == "$.payment.instruments[0].installments"
    assert problem["code"] == "field_invalid"


def test_installments_above_24_are_refused_as_invalid_input(client: Client, headers: dict[str, str]) -> None:
    checkout = create(client, headers).json()
    body = full_update(checkout, pix=False)
    body["payment"] = {"instruments": [{**CARD, "installments": 25}]}

    response = call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, body)

    assert response.status_code == 400


def test_a_complete_retried_after_a_decline_records_the_move_from_incomplete_bcp_pay_06(
    client: Client, headers: dict[str, str]
) -> None:
    """QA walk: the retried complete's event said `ready_for_complete → complete_in_progress`, a status the
    checkout never had after the decline; the timeline records the stored one."""
    # given a card checkout whose first complete was declined (stored `incomplete`)
    checkout, _first = _declined_once(client, headers)
    # when the agent completes again with a good card (BCP-PAY-06: the decline is recoverable)
    good = {"payment": {"instruments": [{**CARD, "installments": 1, "credential": TOKEN}]}}
    done = call(client, "post", f"/checkout-sessions/{checkout['id']}/complete",
                {**headers, "Idempotency-Key": "k-retried"}, good).json()  # fmt: skip
    # then the retry's move starts from `incomplete`
    assert done["status"] == "completed", done["messages"]
    moves = [(e.kind, e.from_status, e.to_status)
             for e in CheckoutEvent.objects.filter(checkout__public_id=checkout["id"]).order_by("id")
             if e.kind == "payment_pending"]  # fmt: skip
    assert moves == [
        ("payment_pending", "ready_for_complete", "complete_in_progress"),
        ("payment_pending", "incomplete", "complete_in_progress"),
    ]


@pytest.mark.parametrize(
    ("instrument", "error"),
    [
        ({**CARD, "installments": 1}, ("payment_failed", "$.payment.instruments[0].credential")),  # no token
        (
            {**CARD, "handler_id": "nope", "installments": 1, "credential": TOKEN},
            ("payment_failed", "$.payment.instruments[0].handler_id"),
        ),
        (
            {**CARD, "installments": 2, "credential": TOKEN},  # the checkout shows 1x
            ("checkout_changed", "$.payment.instruments[0].installments"),
        ),
    ],
    ids=["no-token", "unknown-handler", "other-installments"],
)
def test_a_complete_refused_after_a_decline_answers_only_its_own_error_bcp_pay_03_06(
    client: Client, headers: dict[str, str], instrument: dict[str, Any], error: tuple[str, str]
) -> None:
    """QA walk: the answer repeated the earlier decline ("Saldo ou limite insuficiente…") beside the new refusal,
    so it read as if the new attempt had been declined too."""
    # given a card checkout whose first complete was declined
    checkout, first = _declined_once(client, headers)
    decline = [m["content"] for m in first["messages"] if m["code"] == "payment_failed"]
    assert decline
    # when the agent completes again with an instrument refused before any charge
    retry = {"payment": {"instruments": [instrument]}}
    again = call(client, "post", f"/checkout-sessions/{checkout['id']}/complete",
                 {**headers, "Idempotency-Key": "k-again"}, retry).json()  # fmt: skip
    # then the answer carries that refusal only, not the old decline
    errors = [(m["code"], m["path"]) for m in again["messages"] if m["type"] == "error"]
    assert errors == [error], again["messages"]
    assert not any(m["content"] in decline for m in again["messages"])
    assert not Order.objects.filter(checkout_id=checkout["id"]).exists()


def test_a_complete_in_other_installments_with_the_same_total_is_refused_and_charges_nothing(
    client: Client, headers: dict[str, str]
) -> None:
    """QA walk: 3x is interest-free like 1x, so the total did not change and the card was charged in 3x while the
    checkout showed 1x. README "checkout_changed": other installments than the checkout shows are refused (BCP §4.3:
    the order is built from the checkout at that moment; BCP-CHK-20: no unrequested change)."""
    # given a checkout the buyer saw paid by card in 1x
    checkout = _with_card(client, headers, 1)
    assert checkout["status"] == "ready_for_complete", checkout["messages"]
    url = f"/checkout-sessions/{checkout['id']}"
    # when the platform completes in 3x (interest-free: the same total)
    refused = call(client, "post", f"{url}/complete", {**headers, "Idempotency-Key": "k-other-terms"},
                   {"payment": {"instruments": [{**CARD, "installments": 3, "credential": TOKEN}]}}).json()  # fmt: skip
    # then the complete is refused, the checkout stays as shown and nothing is charged
    assert refused["status"] == "ready_for_complete"
    assert [m for m in refused["messages"] if m["code"] == "checkout_changed"] == [{
        "type": "error", "code": "checkout_changed", "severity": "recoverable",
        "path": "$.payment.instruments[0].installments",
        "content": "O parcelamento pedido na conclusão (3x) não é o que o checkout mostra (1x): atualize o checkout "
                   "com as parcelas desejadas e confira o total antes de concluir.",
    }]  # fmt: skip
    now = call(client, "get", url, headers).json()
    assert [now[k] for k in ("payment", "totals", "status")] == [checkout[k] for k in ("payment", "totals", "status")]
    assert not CardPayment.objects.exists() and not Order.objects.exists()
    # and completing in the installments shown charges those
    done = call(client, "post", f"{url}/complete", {**headers, "Idempotency-Key": "k-same-terms"},
                {"payment": {"instruments": [{**CARD, "installments": 1, "credential": TOKEN}]}}).json()  # fmt: skip
    assert done["status"] == "completed", done["messages"]
    assert Order.objects.get(checkout_id=checkout["id"]).installments == 1


def test_a_card_complete_in_installments_on_a_checkout_showing_pix_is_refused(
    client: Client, headers: dict[str, str]
) -> None:
    """A checkout showing Pix shows no plan: a card complete in 2x (interest-free) is not what the buyer saw."""
    checkout = create(client, headers).json()
    checkout = call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, full_update(checkout)).json()
    checkout = call(client, "put", f"/checkout-sessions/{checkout['id']}", headers, full_update(checkout)).json()
    assert checkout["status"] == "ready_for_complete", checkout["messages"]

    refused = call(client, "post", f"/checkout-sessions/{checkout['id']}/complete",
                   {**headers, "Idempotency-Key": "k-pix-then-2x"},
                   {"payment": {"instruments": [{**CARD, "installments": 2, "credential": TOKEN}]}}).json()  # fmt: skip

    assert [m["code"] for m in refused["messages"] if m["type"] == "error"] == ["checkout_changed"]
    assert refused["payment"]["instruments"][0]["type"] == "pix"
    assert not CardPayment.objects.exists() and not Order.objects.exists()
