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
from shop.store.services import store_row
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


def test_the_continue_link_opens_the_form_without_errors_for_what_is_still_empty(
    product, django_capture_on_commit_callbacks, client
):
    """QA walk: the reminder's "Continue de onde parou" opened the checkout already saying "Informe a rua",
    "Informe a cidade": the buyer had done nothing yet on this visit."""
    checkout = abandoned()  # contact given, no address yet
    Checkout.objects.filter(pk=checkout.pk).update(fulfillment_type="shipping", ship_cep="01310-100")
    mail.outbox.clear()
    sweep(django_capture_on_commit_callbacks)
    (message,) = mail.outbox
    path = re.search(r"http://127\.0\.0\.1:8000(/checkout/\S+)", message.body).group(1)
    html = client.get(path).content.decode()
    assert 'name="first_name"' in html and "Ana" in html  # the form, filled with what was given
    assert 'data-testid="error-' not in html


def test_the_reminder_names_the_shop_as_the_merchant_renamed_it(product, django_capture_on_commit_callbacks):
    """QA walk: the order e-mails said "Ateliê Ipê" (the name set in the admin's Dados da loja), the reminder, the
    boleto and the sign-in link e-mails the project's SHOP_NAME ("Loja Exemplo"), in the subject and the sender."""
    row = store_row()
    row.trade_name = "Ateliê Ipê"
    row.save()
    abandoned()
    mail.outbox.clear()
    assert sweep(django_capture_on_commit_callbacks) == 1
    (message,) = mail.outbox
    assert message.subject == "Ateliê Ipê: seu carrinho está esperando por você"
    assert message.from_email.startswith("Ateliê Ipê <") and "Loja Exemplo" not in message.body


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


# --- issue 33, major 5: the rule a careful shop applies under the LGPD (shop/checkout/reminders.py) ---------


def abandoned_with(*lines: tuple[str, int], email: str = "ana@example.com.br", **create_kwargs) -> Checkout:
    buyer = type(BUYER)(**{**BUYER.__dict__, "email": email, "consent": (("marketing", False),)})
    data = CheckoutInput(lines=tuple(LineInput(sku, qty) for sku, qty in lines), buyer=buyer)
    result = checkout_create(data=data, **create_kwargs)
    now = timezone.now()
    Checkout.objects.filter(pk=result.checkout.pk).update(
        updated_at=now - timedelta(minutes=180), expires_at=now + timedelta(hours=3)
    )
    return Checkout.objects.get(pk=result.checkout.pk)


def test_a_buyer_who_left_the_marketing_box_unticked_is_reminded_once(product, django_capture_on_commit_callbacks):
    # given the storefront's default: marketing refused (the box unticked)
    checkout = abandoned_with(("SKU-CAFE-500G", 2))
    assert checkout.buyer_consent["marketing"]["granted"] is False
    mail.outbox.clear()
    # then the service reminder still goes out, once (it is not marketing)
    assert sweep(django_capture_on_commit_callbacks) == 1
    assert [m.to for m in mail.outbox] == [["ana@example.com.br"]]
    assert CheckoutReminder.objects.get(checkout=checkout).skipped == ""


def test_the_reminder_lists_items_prices_and_total(product, django_capture_on_commit_callbacks):
    make_variant("SKU-CANECA", price=3500, title="Caneca esmaltada")
    abandoned_with(("SKU-CAFE-500G", 2), ("SKU-CANECA", 1))
    mail.outbox.clear()
    sweep(django_capture_on_commit_callbacks)
    (message,) = mail.outbox
    assert "- 2× Café especial 500 g — R$ 85,80\n- 1× Caneca esmaltada — R$ 35,00\n" in message.body
    assert "Subtotal: R$ 120,80\nTotal: R$ 120,80\n" in message.body
    html = message.alternatives[0][0]
    assert "2× Café especial 500 g</td>" in html and ">R$ 120,80</td>" in html
    assert "Este é o único lembrete sobre esta compra." in message.body


def test_never_after_the_buyer_paid_another_order_with_those_items(product, django_capture_on_commit_callbacks):
    make_variant("SKU-CANECA", price=3500, title="Caneca esmaltada")
    # given an abandoned checkout, then the same buyer bought the coffee in another checkout
    left = abandoned_with(("SKU-CAFE-500G", 2), ("SKU-CANECA", 1))
    mark_bought(abandoned_with(("SKU-CAFE-500G", 1), email="ANA@example.com.br"))
    # and someone else bought the same coffee, and Ana bought something else before (not "since")
    other = abandoned_with(("SKU-CANECA", 1), email="bruno@example.com.br")
    mark_bought(abandoned_with(("SKU-CAFE-500G", 1), email="bruno@example.com.br"))
    mail.outbox.clear()
    # then Ana's checkout is not reminded; Bruno's caneca is (he bought coffee, not the caneca)
    assert sweep(django_capture_on_commit_callbacks) == 1
    assert [m.to for m in mail.outbox] == [["bruno@example.com.br"]]
    assert not CheckoutReminder.objects.filter(checkout=left).exists()
    assert CheckoutReminder.objects.get(checkout=other).sent_at is not None


def test_bought_between_the_sweep_and_the_send_is_skipped(product):
    left = abandoned_with(("SKU-CAFE-500G", 2))
    reminders_queue_due()  # the row is written; the send did not run yet
    mark_bought(abandoned_with(("SKU-CAFE-500G", 2)))
    mail.outbox.clear()
    assert reminder_send(reminder_id=CheckoutReminder.objects.get(checkout=left).pk) == "bought_since"
    assert mail.outbox == []


def test_never_for_a_sale_staff_made_nor_a_paid_checkout(product, django_capture_on_commit_callbacks):
    # a Pix link staff sent from "Nova venda" (shop/admin/manual_order.py writes session_key admin:<pk>)
    staff = abandoned_with(("SKU-CAFE-500G", 1), session_key="admin:1")
    # an agent checkout paid before complete, waiting for its platform
    paid = abandoned_with(("SKU-CAFE-500G", 1), email="bruno@example.com.br", platform_id="plat_x")
    Checkout.objects.filter(pk=paid.pk).update(paid_at=timezone.now())
    mail.outbox.clear()
    assert sweep(django_capture_on_commit_callbacks) == 0
    assert mail.outbox == [] and not CheckoutReminder.objects.exists()
    # and a row written before the rule (or by an older sweep) is skipped with the reason at send time
    rows = [CheckoutReminder.objects.create(checkout=c, email=c.buyer_email) for c in (staff, paid)]
    assert [reminder_send(reminder_id=r.pk) for r in rows] == ["not_started_by_buyer", "paid"]
    assert mail.outbox == []


def test_at_most_one_reminder_a_week_per_address(product, django_capture_on_commit_callbacks):
    first = abandoned_with(("SKU-CAFE-500G", 1))
    second = abandoned_with(("SKU-CAFE-500G", 2))
    mail.outbox.clear()
    sweep(django_capture_on_commit_callbacks)
    assert len(mail.outbox) == 1
    skipped = {r.checkout_id: r.skipped for r in CheckoutReminder.objects.all()}
    assert skipped == {first.pk: "", second.pk: "recently_reminded"}
