"""The boleto pieces of payments (issue 37): the FEBRABAN line ⇄ barcode rules and their check digits, the
Pagar.me v5 boleto order body (https://docs.pagar.me/reference/boleto-1), an underpaid boleto placing nothing,
and the sandbox gateway's control API (the "Pagar boleto no sandbox" button as a program calls it)."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from datetime import date

import httpx
import pytest
from django.test import Client

from orders.models import Order
from payments.boleto.codes import barcode_build, barcode_from_line, due_factor, itf_svg, line_display, line_from_barcode
from payments.boleto.service import boleto_issue, boleto_record, boleto_settle_confirmed
from payments.card.gateway import BoletoRequest, CardCustomer
from payments.card.pagarme import PagarmeGateway, boleto_order_body
from payments.card.sandbox import SandboxCardGateway
from payments.exceptions import PaymentInputError
from payments.models import BoletoPayment, CardWebhookEvent, PaymentEvent
from shop.checkout.services import checkout_complete, checkout_create
from shop.checkout.types import CompleteInput, InstrumentInput, LineInput, PaymentInput
from tests.bcp_app.live import pix_settlement_stack, wait_for
from tests.payments.fake_pagarme import FakePagarmeServer
from tests.shop.checkout_factories import full_input, make_shipping, make_variant

CUSTOMER = CardCustomer(name="Ana Souza", email="ana@example.com.br", tax_id="529.982.247-25")


def test_line_and_barcode_round_trip_with_their_check_digits() -> None:
    barcode = barcode_build(bank="237", amount=12345, due=date(2026, 12, 10), free_field="1234560000000000000000001")

    line = line_from_barcode(barcode)

    assert barcode == "23798165600000123451234560000000000000000001"
    assert line_display(line) == "23791.23454 60000.000004 00000.000018 8 16560000012345"
    assert barcode_from_line(line) == barcode
    assert due_factor(date(2025, 2, 22)) == 1000  # FEBRABAN's factor restart
    wrong = line[:9] + str((int(line[9]) + 1) % 10) + line[10:]
    with pytest.raises(ValueError, match="dígito verificador"):
        barcode_from_line(wrong)
    assert itf_svg(barcode).count("<rect") == 1 + 2 + 22 * 5 + 2  # background, start, 5 bars a digit pair, stop


def test_the_pagarme_boleto_order_body_has_the_documented_fields() -> None:
    request = BoletoRequest(
        reference="checkout_0123456789abcdef01234567", amount=11890, due_date=date(2026, 12, 9),
        instructions="Não receber após o vencimento.", customer=CUSTOMER, description="Loja — pedido #1001",
        idempotency_key="checkout_x-boleto-1",
    )  # fmt: skip

    body = boleto_order_body(request)

    assert body["payments"] == [
        {
            "payment_method": "boleto",
            "amount": 11890,
            "boleto": {
                "instructions": "Não receber após o vencimento.",
                "due_at": "2026-12-09T23:59:59-03:00",
                "type": "DM",
                "document_number": "89abcdef01234567",  # the last 16 of the checkout id
            },
        }
    ]
    assert body["customer"]["document"] == "52998224725"
    assert body["code"] == request.reference


@pytest.mark.django_db
def test_an_underpaid_boleto_places_nothing_and_says_so_on_the_timeline(pagarme: FakePagarmeServer) -> None:
    issued = boleto_issue(reference="checkout_under", amount=10000, due_date=date.today(), customer=CUSTOMER,
                          handler_id="br.dev.bcp.boleto")  # fmt: skip
    payment = boleto_record(issued)
    pagarme.pay_boleto(payment.gateway_charge_id, amount=9000)

    outcome = boleto_settle_confirmed(charge=PagarmeGateway().get_charge(payment.gateway_charge_id), source="webhook")

    payment.refresh_from_db()
    assert (outcome, payment.status, payment.paid_amount) == ("underpaid", "issued", 0)
    assert PaymentEvent.objects.filter(reference="checkout_under", kind="boleto_underpaid").count() == 1


@pytest.mark.django_db
def test_a_boleto_without_the_payers_cpf_is_refused_before_the_gateway(pagarme: FakePagarmeServer) -> None:
    with pytest.raises(PaymentInputError) as refused:
        boleto_issue(
            reference="checkout_nocpf",
            amount=10000,
            due_date=date.today(),
            customer=CardCustomer(name="Ana", email="ana@example.com.br"),
            handler_id="br.dev.bcp.boleto",
        )

    assert refused.value.field == "tax_id"
    assert pagarme.state.requests == []


@pytest.mark.django_db
def test_the_sandbox_pays_a_boleto_through_its_control_api_and_the_inbox(settings) -> None:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_SECRET = "segredo-sandbox"
    charge = SandboxCardGateway().create_boleto_order(
        BoletoRequest(reference="checkout_sbx", amount=5000, due_date=date.today(), instructions="",
                      customer=CUSTOMER, description="", idempotency_key="checkout_sbx-boleto-1")
    )  # fmt: skip
    assert len(barcode_from_line(charge.boleto_line)) == 44

    answer = Client().post(f"/_sandbox/gateway/boleto/{charge.charge_id}/pay", data=b"{}",
                           content_type="application/json", HTTP_BCP_SANDBOX_SECRET="segredo-sandbox")  # fmt: skip
    refused = Client().post(f"/_sandbox/gateway/boleto/{charge.charge_id}/pay", data=b"{}",
                            content_type="application/json")  # fmt: skip

    assert answer.status_code == 200
    assert json.loads(answer.content)["charge"] == {"id": charge.charge_id, "status": "paid", "paid_amount": 5000}
    assert refused.status_code == 403
    assert CardWebhookEvent.objects.get().type == "charge.paid"
    page = Client().get(f"/_sandbox/gateway/boleto/{charge.charge_id}")
    assert page.status_code == 200 and line_display(charge.boleto_line) in page.content.decode()
    assert "Situação: Pago<" in page.content.decode()  # QA walk: it read the gateway's code, "pending" / "paid"
    assert BoletoPayment.objects.count() == 0  # the sandbox is the gateway: recording is the shop's part


@pytest.mark.e2e
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_settles_a_sandbox_boleto_paid_over_http_into_one_order(settings) -> None:
    """Nothing eager: the sandbox gateway's pay call (HTTP, live uvicorn) stores the `charge.paid` notice, the
    broker hands it to a real Celery worker, which reads the charge back and places the order once."""
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis://"):
        pytest.skip("needs CELERY_BROKER_URL=redis://… for a real worker")
    make_variant(price=10000, stock=5)
    make_shipping()
    data = full_input(LineInput("SKU-CAFE-500G", 1), option="pac")
    data = replace(data, buyer=replace(data.buyer, tax_id="52998224725"))
    boleto = InstrumentInput(id="instr_b", handler_id="br.dev.bcp.boleto", type="boleto")
    with pix_settlement_stack(settings, secret="sandbox-secret") as (server, worker):
        checkout = checkout_create(data=replace(data, payment=PaymentInput(instruments=(boleto,)))).checkout
        done = checkout_complete(checkout_id=checkout.public_id, data=CompleteInput(payment=PaymentInput((boleto,))))
        assert done.checkout.status == "complete_in_progress", done.messages
        payment = BoletoPayment.objects.get(reference=checkout.public_id)

        response = httpx.post(f"{server.url}/_sandbox/gateway/boleto/{payment.gateway_charge_id}/pay", json={},
                              headers={"BCP-Sandbox-Secret": "sandbox-secret"}, timeout=30)  # fmt: skip

        assert response.status_code == 200
        wait_for(lambda: Order.objects.filter(checkout_id=checkout.public_id).exists(), timeout=90, interval=0.2,
                 log=worker.log)  # fmt: skip
    payment.refresh_from_db()
    assert (payment.status, Order.objects.get().payment_type) == ("paid", "boleto")
    assert CardWebhookEvent.objects.get().outcome == "paid"
