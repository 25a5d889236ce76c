"""Abandoned-checkout recovery (issue 16, item 9): one reminder with the `continue_url` for a checkout with an
e-mail and no order after the configured time (storefront and agent checkouts), never after purchase or
cancellation, an opt-out that sticks, and the counts the back office shows.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from shop.checkout.reminders import reminder_send, reminder_stats, reminders_queue_due
from shop.checkout.services import checkout_create
from shop.checkout.types import CheckoutInput, LineInput
from shop.models import Checkout, CheckoutReminder, ReminderOptOut
from tests.shop.checkout_factories import BUYER, make_variant

pytestmark = pytest.mark.django_db


def abandoned(*, minutes_ago: int = 180, email: str = "ana@example.com.br", **create_kwargs) -> Checkout:
    buyer = BUYER if email == BUYER.email else type(BUYER)(**{**BUYER.__dict__, "email": email})
    result = checkout_create(data=CheckoutInput(lines=(LineInput("SKU-CAFE-500G", 2),), buyer=buyer), **create_kwargs)
    now = timezone.now()
    # update() leaves auto_now alone: the checkout was last touched `minutes_ago`, and is still reserved
    Checkout.objects.filter(pk=result.checkout.pk).update(
        updated_at=now - timedelta(minutes=minutes_ago), expires_at=now + timedelta(hours=3)
    )
    return Checkout.objects.get(pk=result.checkout.pk)


def mark_bought(checkout: Checkout) -> None:
    """As the engine leaves a paid checkout (the order itself is not needed here)."""
    Checkout.objects.filter(pk=checkout.pk).update(
        status="completed",
        order_id="order_recuperado",
        order_permalink_url="http://127.0.0.1:8000/orders/x",
        completed_at=timezone.now(),
    )


@pytest.fixture
def product(settings):
    settings.SHOP_CHECKOUT_REMINDER_MINUTES = 120
    return make_variant(price=4290, stock=10, title="Café especial 500 g")


def sweep(django_capture_on_commit_callbacks) -> int:
    with django_capture_on_commit_callbacks(execute=True):
        return reminders_queue_due()


def test_one_reminder_with_the_continue_url_and_an_opt_out(product, django_capture_on_commit_callbacks, client):
    checkout = abandoned()
    mail.outbox.clear()
    # when the sweep runs (twice: beat, replays)
    assert sweep(django_capture_on_commit_callbacks) == 1
    assert sweep(django_capture_on_commit_callbacks) == 0
    # then exactly one e-mail, readable, with the way back and the way out
    (message,) = mail.outbox
    assert message.to == ["ana@example.com.br"]
    assert message.subject == "Loja Exemplo: seu carrinho está esperando por você"
    assert "- 2× Café especial 500 g" in message.body
    assert f"http://127.0.0.1:8000/checkout/{checkout.public_id}" in message.body
    optout = re.search(r"http://127\.0\.0\.1:8000(/lembretes/sair/\S+)", message.body).group(1)
    assert CheckoutReminder.objects.get(checkout=checkout).sent_at is not None
    # when the buyer opens the opt-out link (GET only asks) and confirms
    assert "Não quer mais receber lembretes" in client.get(optout).content.decode()
    assert not ReminderOptOut.objects.exists()
    assert 'data-testid="optout-done"' in client.post(optout).content.decode()
    # then a later abandoned checkout of that e-mail gets no reminder
    abandoned(email="ANA@example.com.br")
    assert sweep(django_capture_on_commit_callbacks) == 0
    assert len(mail.outbox) == 1


def test_too_recent_bought_or_cancelled_checkouts_are_not_reminded(product, django_capture_on_commit_callbacks):
    abandoned(minutes_ago=30)
    bought = abandoned(email="bruno@example.com.br")
    mark_bought(bought)
    cancelled = abandoned(email="carla@example.com.br")
    Checkout.objects.filter(pk=cancelled.pk).update(status="canceled")
    paying = abandoned(email="davi@example.com.br")
    Checkout.objects.filter(pk=paying.pk).update(status="complete_in_progress")
    mail.outbox.clear()
    assert sweep(django_capture_on_commit_callbacks) == 0
    assert mail.outbox == []


def test_a_checkout_bought_between_the_sweep_and_the_send_is_skipped(product):
    checkout = abandoned()
    reminders_queue_due()  # rows written; the send did not run (no commit in this test transaction)
    reminder = CheckoutReminder.objects.get(checkout=checkout)
    mark_bought(checkout)
    mail.outbox.clear()
    assert reminder_send(reminder_id=reminder.pk) == "status:completed"
    assert mail.outbox == []
    assert reminder_send(reminder_id=reminder.pk) == "done"


def test_agent_checkouts_are_reminded_too_in_their_language(product, django_capture_on_commit_callbacks):
    checkout = abandoned(platform_id="plat_agente", language="en")
    mail.outbox.clear()
    assert sweep(django_capture_on_commit_callbacks) == 1
    (message,) = mail.outbox
    assert message.subject == "Loja Exemplo: your cart is waiting for you"
    assert f"/checkout/{checkout.public_id}" in message.body and "Pick up where you left off" in message.body


def test_stats_count_reminders_and_recovered_orders(product, django_capture_on_commit_callbacks):
    recovered = abandoned()
    abandoned(email="bruno@example.com.br")
    sweep(django_capture_on_commit_callbacks)
    mark_bought(recovered)
    assert (reminder_stats().sent, reminder_stats().recovered) == (2, 1)


def test_disabled_with_zero(product, settings, django_capture_on_commit_callbacks):
    settings.SHOP_CHECKOUT_REMINDER_MINUTES = 0
    abandoned()
    assert sweep(django_capture_on_commit_callbacks) == 0


def test_bad_opt_out_token(client):
    response = client.get("/lembretes/sair/nao-e-um-token")
    assert response.status_code == 400
    assert "Este link não é válido." in response.content.decode()
