"""A dead broker never turns a stored webhook into a 500 (issue 31): the sender gets its 2xx once the inbox row
is durable, and the beat sweep processes the row when the broker is back (PIX.md §5, BCP-PAY-07).

The broker is really unreachable (`dead_broker`: a bound socket that never listens). Before the fix the Pix
webhook, the card webhook and the sandbox's payment each raised after commit (a 500 to the PSP, which retries).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from config.celery import app as celery_app
from payments.models import CardPayment, CardWebhookEvent, PixPayment, PixWebhookEvent
from payments.services import pix_charge_ensure
from payments.tasks import reconcile_card_payments, reconcile_pix_charges
from tests.bcp_app.test_webhook_outbox import dead_broker  # noqa: F401 (fixture)
from tests.payments.fake_pagarme import FakePagarmeServer
from tests.payments.helpers import body, post_signed
from tests.payments.test_card_gateway import _authorize, _post_webhook
from tests.payments.test_settlement import _pay

pytestmark = pytest.mark.django_db


def _broker_back() -> None:
    celery_app.conf.task_always_eager = True  # tasks run again (here in-process)


def test_pix_webhook_with_the_broker_down_is_200_and_the_sweep_settles_it(
    client: Client, settled: Any, django_capture_on_commit_callbacks: Any, request: pytest.FixtureRequest
) -> None:
    # given a charge paid at the sandbox PSP while the broker is down
    charge = pix_charge_ensure(reference="checkout_deadbroker", amount=4290)
    request.getfixturevalue("dead_broker")
    with django_capture_on_commit_callbacks(execute=True):
        paid = _pay(client, charge.txid)
    # then the sandbox answered its payment (its own notice is left to the reconcile poll)
    assert paid.status_code == 200
    pix = paid.json()["pix"][0]
    # when the PSP's webhook for it arrives, broker still down
    with django_capture_on_commit_callbacks(execute=True):
        response = post_signed(client, body(pix))
    # then the PSP gets its 200, the event is stored and nothing was settled yet
    assert (response.status_code, response.json()) == (200, {"received": 1, "duplicates": 0})
    event = PixWebhookEvent.objects.get(end_to_end_id=pix["endToEndId"])
    assert event.processed_at is None
    assert PixPayment.objects.count() == 0
    # when the broker is back and beat runs the sweep after the inbox's 2 minutes
    _broker_back()
    PixWebhookEvent.objects.filter(pk=event.pk).update(received_at=timezone.now() - timedelta(minutes=3))
    reconcile_pix_charges()
    # then the stored event settled the charge, once
    event.refresh_from_db()
    assert (event.processed_at is not None, event.outcome) == (True, "settled")
    assert PixPayment.objects.get().outcome == "settled"
    assert len(settled.calls) == 1
    reconcile_pix_charges()
    assert len(settled.calls) == 1


def test_card_webhook_with_the_broker_down_is_200_and_the_sweep_records_it(
    pagarme: FakePagarmeServer,
    card_settled: Any,
    django_capture_on_commit_callbacks: Any,
    request: pytest.FixtureRequest,
) -> None:
    # given a card capture whose answer never reached us (pending)
    pagarme.state.die_after_capture = 3
    _authorize("tok_approved")
    payment = CardPayment.objects.get()
    assert payment.status == "pending"
    # when the gateway's charge.paid webhook arrives while the broker is down
    request.getfixturevalue("dead_broker")
    with django_capture_on_commit_callbacks(execute=True):
        response = _post_webhook(pagarme.webhook("charge.paid", payment.gateway_reference))
    # then the gateway gets its 200 and the event waits in the inbox
    assert (response.status_code, response.json()) == (200, {"received": 1, "duplicates": 0})
    event = CardWebhookEvent.objects.get()
    assert event.processed_at is None
    # when the broker is back and beat runs the card sweep
    _broker_back()
    CardWebhookEvent.objects.filter(pk=event.pk).update(received_at=timezone.now() - timedelta(minutes=3))
    CardPayment.objects.filter(pk=payment.pk).update(updated_at=timezone.now())  # only the inbox row is due
    reconcile_card_payments()
    # then the payment is approved from the stored event, announced once
    event.refresh_from_db()
    payment.refresh_from_db()
    assert (event.outcome, payment.status) == ("approved", "approved")
    assert [call["status"] for call in card_settled.calls] == ["approved"]
