"""Recording a card answer with no read first (issue 11): the unique reference decides, and a webhook that
recorded the same reference while the gateway call was out wins over a blind insert."""

from __future__ import annotations

import pytest

from payments.card.gateway import GatewayCharge
from payments.card.models import CardPayment
from payments.card.service import record
from payments.models import PaymentEvent

pytestmark = pytest.mark.django_db


def _charge(status: str = "paid", charge_id: str = "ch_1") -> GatewayCharge:
    return GatewayCharge(
        charge_id=charge_id,
        order_id="or_1",
        code="checkout_x",
        status=status,
        amount=4290,
        paid_amount=4290 if status == "paid" else 0,
        installments=1,
        transaction_status="captured",
        return_code="00",
    )


@pytest.mark.postgres  # one statement needs a data-modifying CTE (SQLite writes the event apart)
def test_an_absent_reference_is_inserted_without_a_read(django_assert_num_queries) -> None:
    with django_assert_num_queries(1):  # the row and its event in one INSERT … ON CONFLICT; no SELECT first
        payment, final = record(
            reference="checkout_x",
            charge=_charge(),
            gateway="pagarme",
            amount=4290,
            attempt=1,
            source="authorize",
            absent=True,
        )
    assert (payment.status, final) == ("approved", True)
    assert CardPayment.objects.get(reference="checkout_x").pk == payment.pk
    event = PaymentEvent.objects.get(reference="checkout_x")
    assert (event.kind, event.detail["source"], event.detail["amount"]) == ("card_approved", "authorize", 4290)
    assert event.created_at is not None


def test_a_row_recorded_meanwhile_wins_over_the_blind_insert() -> None:
    first, _ = record(reference="checkout_y", charge=_charge(), gateway="pagarme", amount=4290, source="webhook")
    again, final = record(
        reference="checkout_y",
        charge=_charge("failed", "ch_2"),
        gateway="pagarme",
        amount=4290,
        attempt=1,
        source="authorize",
        absent=True,
    )
    assert (again.pk, again.status, final) == (first.pk, "approved", False)  # approved is final
    assert CardPayment.objects.filter(reference="checkout_y").count() == 1
    assert PaymentEvent.objects.filter(reference="checkout_y").count() == 1
