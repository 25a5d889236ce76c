"""Loose ends of issue 38: a cycle's order says "Ciclo N da assinatura …" and links the subscription (buyer's page
and admin), the payments admin shows the Pix Automático rows (/rec and /cobr inboxes, the recurring charges) read-only
with links to the subscription and the order, and the staff dashboard's subscription panel (failures, churn, next
charges). The cycle is paid over the fake Bacen API Pix, through the real webhook, like in production."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation

from orders.models import Order
from orders.services import order_place_from_checkout
from payments.models import PixRecurrenceWebhookEvent, PixRecurringCharge, PixRecurringChargeWebhookEvent
from shop.demo.seed import seed_catalog
from shop.models import Subscription, SubscriptionCycle, SubscriptionEvent, SubscriptionPlan, Variant
from shop.subscriptions import emails
from shop.subscriptions.services import subscription_address_change, subscription_create
from tests.orders.conftest import make_checkout
from tests.payments.fake_bacen import PROXY_VERIFIED, FakeBacenServer

pytestmark = pytest.mark.django_db

ADDRESS = {
    "postal_code": "01310-100",
    "street": "Avenida Paulista",
    "number": "1000",
    "complement": "",
    "neighborhood": "Bela Vista",
    "city": "São Paulo",
    "state": "SP",
}


def _deliver(client: Client, resource: str, body: dict[str, Any]) -> None:
    response = client.post(
        f"/payments/pix/webhook/{resource}", data=body, content_type="application/json", headers=PROXY_VERIFIED
    )
    assert response.status_code == 200


@pytest.fixture
def cycle_order(
    bacen: FakeBacenServer, client: Client, django_capture_on_commit_callbacks: Any
) -> tuple[Subscription, SubscriptionCycle, Order]:
    """An authorized subscription whose first cycle was charged and paid: the /rec and /cobr notices went through
    the webhook inboxes, and the cycle became an order."""
    seed_catalog()
    variant = Variant.objects.get(sku="SKU-CAFE-500G")
    Variant.objects.filter(pk=variant.pk).update(stock=10)
    plan = SubscriptionPlan.objects.create(variant=variant, cycle="monthly", price=3990)
    subscription = subscription_create(
        plan_id=plan.public_id,
        buyer_name="Fulana de Tal",
        buyer_tax_id="123.456.789-09",
        buyer_email="fulana@example.com.br",
        starts_on=timezone.localdate() + timedelta(days=5),
    )
    subscription_address_change(public_id=subscription.public_id, address=ADDRESS)
    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, "rec", bacen.approve_rec(subscription.pix_id_rec))
    cycle = SubscriptionCycle.objects.get(subscription=subscription, number=1)
    assert cycle.status == "charged"  # inside the charging window: charged right after the authorization
    with django_capture_on_commit_callbacks(execute=True):
        _deliver(client, "cobr", bacen.settle_cobr(cycle.txid, paid=True))
    cycle.refresh_from_db()
    subscription.refresh_from_db()
    order = Order.objects.get(checkout_id=cycle.public_id)
    assert (cycle.status, cycle.order_id) == ("paid", order.public_id)
    return subscription, cycle, order


def _permalink(client: Client, order: Order) -> tuple[str, int]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(order.permalink_path)
    assert response.status_code == 200
    return response.content.decode(), len(queries)


def test_a_cycles_order_page_says_which_cycle_and_links_the_subscribers_page_and_a_normal_order_does_not(
    cycle_order: tuple[Subscription, SubscriptionCycle, Order], client: Client, settings: Any
) -> None:
    subscription, _cycle, order = cycle_order
    normal = order_place_from_checkout(checkout=make_checkout())

    html, _ = _permalink(client, order)
    assert "Ciclo 1 da assinatura de Café especial 500 g." in html
    assert f'href="/assinaturas/{subscription.access_token}/" data-testid="order-subscription-link"' in html
    # The subscriber's page lists the cycle with its order's link back.
    page = client.get(f"/assinaturas/{subscription.access_token}/").content.decode()
    assert f'<a href="{order.permalink_url}">pedido #{order.number}</a>' in page

    # A normal order shows nothing of it, and the panel costs it no statement (the checkout id is not a cycle's).
    html, with_panel = _permalink(client, normal)
    assert 'data-testid="order-subscription"' not in html and "assinatura" not in html
    settings.ORDERS_PERMALINK_LEAD_PANELS = []
    assert _permalink(client, normal)[1] == with_panel

    # In English (the site's language switch), the same sentence.
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    settings.ORDERS_PERMALINK_LEAD_PANELS = ["shop.subscriptions.panels.permalink_panel"]
    html, _ = _permalink(client, order)
    assert "Cycle 1 of the subscription to Café especial 500 g." in html and "Manage the subscription" in html


def test_staff_see_the_cycle_on_the_admin_order_page_with_a_link_to_the_subscriptions_admin_page(
    cycle_order: tuple[Subscription, SubscriptionCycle, Order], admin_client: Client
) -> None:
    subscription, cycle, order = cycle_order
    normal = order_place_from_checkout(checkout=make_checkout())

    html = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "Ciclo 1 da assinatura de Café especial 500 g" in html
    assert f'href="/admin/shop/subscription/{subscription.pk}/change/"' in html
    assert (
        'data-testid="admin-order-subscription"'
        not in admin_client.get(f"/admin/orders/order/{normal.pk}/change/").content.decode()
    )

    # The subscription's admin page links each paid cycle to its order's admin page (no query per cycle).
    page = admin_client.get(f"/admin/shop/subscription/{subscription.pk}/change/").content.decode()
    link = f'<a href="/admin/orders/order/{order.pk}/change/">Pedido #{order.number}</a>'  # by number (c4f3d708)
    assert link in page
    cycles = admin_client.get("/admin/shop/subscriptioncycle/").content.decode()
    assert link in cycles
    assert cycle.public_id in cycles


def _admin_list(admin_client: Client, url: str) -> tuple[str, int]:
    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get(url)
    assert response.status_code == 200, url
    return response.content.decode(), len(queries)


def test_payments_admin_lists_the_pix_automatico_rows_read_only_with_links_to_the_subscription_and_order(
    cycle_order: tuple[Subscription, SubscriptionCycle, Order], admin_client: Client
) -> None:
    subscription, cycle, order = cycle_order
    charge = PixRecurringCharge.objects.get(txid=cycle.txid)
    inbox = PixRecurringChargeWebhookEvent.objects.get(txid=cycle.txid)
    rec = PixRecurrenceWebhookEvent.objects.get(id_rec=subscription.pix_id_rec)

    html, one_row = _admin_list(admin_client, "/admin/payments/pixrecurringcharge/")
    assert cycle.txid in html and "R$ 39,90" in html and "paga" in html
    assert f'href="/admin/shop/subscription/?q={subscription.pix_id_rec}"' in html
    assert f'href="/admin/orders/order/?q={cycle.public_id}"' in html
    # The links land on the subscription and on the order (the order's search knows its checkout id and txid).
    listed, _ = _admin_list(admin_client, f"/admin/shop/subscription/?q={subscription.pix_id_rec}")
    assert subscription.public_id in listed
    listed, _ = _admin_list(admin_client, f"/admin/orders/order/?q={cycle.public_id}")
    assert f"#{order.number}" in listed
    listed, _ = _admin_list(admin_client, f"/admin/orders/order/?q={cycle.txid}")
    assert f"#{order.number}" in listed

    # Search by txid / idRec and filter by status; the other rows are left out.
    for n in range(4):
        PixRecurringCharge.objects.create(
            txid=f"outra{n:027d}", id_rec=f"RR1234567820261205outra{n:05d}", reference=f"cyc_outra{n}", amount=1000 + n,
            due_date=timezone.localdate(),
        )  # fmt: skip
    html, five_rows = _admin_list(admin_client, "/admin/payments/pixrecurringcharge/")
    assert html.count('class="field-amount_brl"') == 5
    assert five_rows == one_row  # the links are built without a query: statements do not grow with the rows
    html, _ = _admin_list(admin_client, f"/admin/payments/pixrecurringcharge/?q={cycle.txid}")
    assert html.count('class="field-amount_brl"') == 1
    html, _ = _admin_list(admin_client, f"/admin/payments/pixrecurringcharge/?q={subscription.pix_id_rec}")
    assert html.count('class="field-amount_brl"') == 1
    html, _ = _admin_list(admin_client, "/admin/payments/pixrecurringcharge/?status__exact=scheduled")
    assert html.count('class="field-amount_brl"') == 4 and cycle.txid not in html

    html, _ = _admin_list(admin_client, f"/admin/payments/pixrecurringchargewebhookevent/?q={cycle.txid}")
    assert cycle.txid in html and f'href="/admin/payments/pixrecurringcharge/?q={cycle.txid}"' in html
    html, _ = _admin_list(admin_client, "/admin/payments/pixrecurringchargewebhookevent/?status__exact=CONCLUIDA")
    assert cycle.txid in html
    html, _ = _admin_list(admin_client, f"/admin/payments/pixrecurrencewebhookevent/?q={subscription.pix_id_rec}")
    assert subscription.pix_id_rec in html and f'href="/admin/shop/subscription/?q={subscription.pix_id_rec}"' in html

    # Each row opens read-only (the raw body shown as text); nothing can be changed, added or deleted.
    for url in (
        f"/admin/payments/pixrecurringcharge/{charge.pk}/change/",
        f"/admin/payments/pixrecurringchargewebhookevent/{inbox.pk}/change/",
        f"/admin/payments/pixrecurrencewebhookevent/{rec.pk}/change/",
    ):
        page, _ = _admin_list(admin_client, url)
        assert 'name="amount"' not in page and 'name="_save"' not in page
        assert admin_client.post(url, {"amount": "1"}).status_code == 403
    assert "cobsr" in _admin_list(admin_client, f"/admin/payments/pixrecurringchargewebhookevent/{inbox.pk}/change/")[0]
    assert admin_client.get("/admin/payments/pixrecurringcharge/add/").status_code == 403
    assert admin_client.get(f"/admin/payments/pixrecurringcharge/{charge.pk}/delete/").status_code == 403
    charge.refresh_from_db()
    assert charge.amount == 3990


def _visible(html: str, testid: str) -> str:
    """The text of the section with this data-testid (the page's own words, without the site's header/footer)."""
    start = html.index(f'data-testid="{testid}"')
    section = html[start : html.index("</section>", start)]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", section))


def test_in_english_the_subscription_pages_and_e_mails_have_no_portuguese_left(
    cycle_order: tuple[Subscription, SubscriptionCycle, Order],
    client: Client,
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    subscription, _cycle, order = cycle_order
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    page = f"/assinaturas/{subscription.access_token}/"

    html = client.get(page).content.decode()
    text = _visible(html, "subscription-page")
    assert "Your subscription Café especial 500 g — R$39.90 per month · Active" in text and "Subscribe" not in text
    assert "Next charge" in text and "Skip the next cycle" in text and "Cancel subscription" in text
    assert "Cycle 1 · " in text and f"order #{order.number}" in text and "Postal code" in text
    # The buyer's data and the product's name are Portuguese; everything else on the page is English.
    for data in ("Café especial 500 g", "São Paulo", "Avenida Paulista", "Bela Vista", "São"):
        text = text.replace(data, "")
    assert not re.findall(r"\w*[ãõçáéíóúâêôà]\w*", text, flags=re.IGNORECASE)

    with django_capture_on_commit_callbacks(execute=True):
        paused = client.post(page, {"action": "pause"}, follow=True)
    assert "Subscription paused. Nothing will be charged until you resume it." in paused.content.decode()
    refused = client.post(page, {"action": "nada"})
    assert refused.status_code == 400 and "Unknown action." in refused.content.decode()
    # the services' own refusals speak the page's language too
    bad_cep = client.post(page, {"action": "address", "postal_code": "123"})
    assert bad_cep.status_code == 400 and "Enter the postal code (CEP) with 8 digits." in bad_cep.content.decode()
    skipped = client.post(page, {"action": "skip"})
    assert "Only an active subscription&#x27;s cycle can be skipped." in skipped.content.decode()
    # The cancel's confirm step, past nothing: what was paid (the first order, inside the 7 days) comes back.
    asked = _visible(client.post(page, {"action": "cancel"}).content.decode(), "subscription-page")
    assert f"You get R$39.90 back from the first order (#{order.number})" in asked
    assert "Yes, cancel the subscription" in asked and "No, keep the subscription" in asked

    subscribe = client.get(f"/assinar/{subscription.plan.public_id}/").content.decode()
    text = _visible(subscribe, "subscribe-page").replace("Café especial 500 g", "")
    assert "Subscribe with Pix Automático" in text and "Full name" in text and "Ships every cycle" in text
    assert not re.findall(r"\w*[ãõçáéíóúâêôà]\w*", text.replace("Automático", ""), flags=re.IGNORECASE)

    # The e-mails: subject and body through the same catalog, in the subscriber's language (whatever the worker's).
    Subscription.objects.filter(pk=subscription.pk).update(language="en")
    event = SubscriptionEvent.objects.create(subscription=subscription, kind="status_cancelled", detail={})
    created = SubscriptionEvent.objects.get(subscription=subscription, kind="created")
    with translation.override("pt-br"):
        subject, body, _html = emails._body(SubscriptionEvent.objects.get(pk=event.pk))
        welcome = emails._body(created)
    assert subject.endswith("Your subscription has been canceled")
    assert "Your Café especial 500 g subscription has been canceled." in body
    assert "See the subscription and the cycles already paid:" in body  # ended: nothing left to manage (922dc759)
    # The e-mail of the subscription made (text and HTML): English but for the product's and the shop's names.
    assert welcome[0] == f"Your Café especial 500 g subscription at {settings.SHOP_NAME}"
    for part in welcome[1:]:
        words = re.sub(r"<[^>]+>", " ", part).replace("Café especial 500 g", "").replace("Pix Automático", "")
        assert "You subscribed to" in words and "Keep this e-mail" in words
        assert not re.findall(r"\w*[ãõçáéíóúâêôà]\w*", words.replace(settings.SHOP_NAME, ""), flags=re.IGNORECASE)


def test_the_dashboard_panel_shows_subscriptions_next_charges_failures_and_churn(
    cycle_order: tuple[Subscription, SubscriptionCycle, Order], admin_client: Client, settings: Any
) -> None:
    subscription, _cycle, _order = cycle_order
    plan = subscription.plan
    terms = {"plan": plan, "buyer_tax_id": "12345678909", "cycle": "monthly", "price": 3990,
             "first_cycle_price": 3990, "min_cycles": 1, "starts_on": timezone.localdate()}  # fmt: skip
    paused = Subscription.objects.create(
        buyer_name="Beltrano", buyer_email="b@example.com.br", status="paused", **terms
    )
    gone = Subscription.objects.create(
        buyer_name="Ciclano", buyer_email="c@example.com.br", status="cancelled", cancelled_at=timezone.now(), **terms
    )
    SubscriptionCycle.objects.create(subscription=gone, number=1, due_date=timezone.localdate(), amount=3990,
                                     status="failed")  # fmt: skip
    SubscriptionCycle.objects.create(subscription=paused, number=1, due_date=timezone.localdate(), amount=3990,
                                     status="retrying")  # fmt: skip
    upcoming = SubscriptionCycle.objects.get(subscription=subscription, number=2)
    SubscriptionCycle.objects.filter(pk=upcoming.pk).update(stock_short=True)

    home = admin_client.get("/admin/").content.decode()
    panel = home[home.index('data-testid="subscriptions-panel"') :]
    assert re.search(r'data-testid="subs-active">\s*<strong data-role="value">1</strong>', panel)
    assert "1 pausadas · 0 aguardando autorização" in panel
    assert re.search(r'data-testid="subs-failures">\s*<strong data-role="value">1</strong>', panel)
    assert "1 em nova tentativa" in panel
    # Churn: 1 cancelled in 30 days ÷ (1 active + 1 paused + 1 cancelled) = 33.3 %.
    assert re.search(r'data-testid="subs-churn">\s*<strong data-role="value">33.3%</strong>', panel)
    assert "1 assinatura cancelada" in panel
    # The next charges, soonest first, each linking to its subscription; a cycle missing stock says so.
    charges = re.findall(r'data-testid="subs-next-charge"><a href="([^"]+)">([^<]+)</a> · ([^<]+)</small>', panel)
    assert charges == [
        (f"/admin/shop/subscription/{paused.pk}/change/", f"{timezone.localdate():%d/%m} · R$ 39,90 · Beltrano",
         "Nova tentativa"),
        (f"/admin/shop/subscription/{subscription.pk}/change/",
         f"{upcoming.due_date:%d/%m} · R$ 39,90 · Fulana de Tal", "Agendado · sem estoque"),
    ]  # fmt: skip

    admin_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    home = admin_client.get("/admin/").content.decode()
    assert "active subscriptions" in home and "1 paused · 0 awaiting authorization" in home
    assert "unpaid cycles (30 days)" in home and "1 subscription canceled" in home and "Next charges" in home
    assert "Scheduled · out of stock" in home
