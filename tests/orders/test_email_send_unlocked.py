"""Buyer e-mails are sent with no transaction or row lock held (house rule: no network I/O under a lock):
the delivery is claimed in one short transaction, SMTP runs outside it, the send is recorded in another."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail
from django.core.mail.backends.locmem import EmailBackend
from django.db import connection
from django.utils import timezone

from orders.models import EmailDelivery
from orders.services import email_delivery_send

pytestmark = pytest.mark.django_db(transaction=True)  # real transactions: `in_atomic_block` tells the truth


@pytest.fixture
def smtp_seen(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Django's test mail backend (the SMTP boundary) notes whether a transaction was open while it ran."""
    seen: list[bool] = []
    send = EmailBackend.send_messages

    def recording(self: EmailBackend, messages: Any) -> int:
        seen.append(connection.in_atomic_block)
        return send(self, messages)

    monkeypatch.setattr(EmailBackend, "send_messages", recording)
    return seen


def _unsent(place_order: Any) -> EmailDelivery:
    order = place_order()
    delivery = EmailDelivery.objects.get(order=order, kind="placed")
    EmailDelivery.objects.filter(pk=delivery.pk).update(sent_at=None)
    mail.outbox.clear()
    return delivery


def test_smtp_runs_with_no_transaction_open_and_the_send_is_recorded(place_order: Any, smtp_seen: list[bool]) -> None:
    delivery = _unsent(place_order)
    smtp_seen.clear()

    assert email_delivery_send(delivery_id=delivery.pk) == "sent"

    assert smtp_seen == [False]
    delivery.refresh_from_db()
    assert delivery.sent_at is not None and delivery.claimed_until is None
    assert len(mail.outbox) == 1
    assert email_delivery_send(delivery_id=delivery.pk) == "already_sent"  # a replayed task sends nothing
    assert len(mail.outbox) == 1


def test_a_claimed_delivery_is_left_to_its_sender(place_order: Any) -> None:
    delivery = _unsent(place_order)
    EmailDelivery.objects.filter(pk=delivery.pk).update(claimed_until=timezone.now() + timezone.timedelta(minutes=1))

    assert email_delivery_send(delivery_id=delivery.pk) == "in_flight"
    assert mail.outbox == []


def test_an_smtp_failure_releases_the_claim_for_the_retry(place_order: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    delivery = _unsent(place_order)

    def down(self: EmailBackend, messages: Any) -> int:
        raise OSError("SMTP server unreachable")

    with monkeypatch.context() as patched:
        patched.setattr(EmailBackend, "send_messages", down)
        with pytest.raises(OSError):
            email_delivery_send(delivery_id=delivery.pk)

    delivery.refresh_from_db()
    assert (delivery.sent_at, delivery.claimed_until, delivery.attempts) == (None, None, 2)
    assert email_delivery_send(delivery_id=delivery.pk) == "sent"
