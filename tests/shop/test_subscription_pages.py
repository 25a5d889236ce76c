"""The subscriber's side in the sandbox (issue 38, the README's demo path): subscribe from the plan's page,
"Autorizar no sandbox", the first cycle charged and paid into an order; then skip, change the address, pause,
resume and cancel from `/assinaturas/<token>/`, with Portuguese refusals."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.core import mail
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from orders.models import Order
from orders.outbox_models import OutboxMessage
from payments import webhook_auth
from payments.automatic.services import pix_recurrence_refresh
from payments.models import PixRecurrenceWebhookEvent
from shop.demo.seed import seed_catalog
from shop.models import Subscription, SubscriptionCycle, SubscriptionEvent, SubscriptionPlan, Variant
from shop.store.services import store_row
from shop.subscriptions.cycles import _placed, subscription_cycles_sweep
from shop.subscriptions.emails import subscription_emails_pending, subscription_event_mail, subscription_page_url
from shop.subscriptions.schedule import due_date_of
from shop.subscriptions.selectors import subscription_stats, subscriptions_of_buyer
from shop.subscriptions.services import address_clean, subscription_cancel
from tests.shop.test_checkout_lock import Threads, _until_someone_waits

BAD_TAX_ID = "CPF ou CNPJ inválido: confira os dígitos (11 do CPF ou 14 do CNPJ)."
pytestmark = pytest.mark.django_db

FORM = {
    "buyer_name": "Fulana de Tal",
    "buyer_tax_id": "529.982.247-25",
    "buyer_email": "fulana@example.com.br",
    "postal_code": "01310-100",
    "street": "Avenida Paulista",
    "number": "1000",
    "complement": "",
    "neighborhood": "Bela Vista",
    "city": "São Paulo",
    "state": "SP",
}


@pytest.fixture
def sandbox(settings: Any) -> None:
    settings.BCP_PIX_SANDBOX = True


@pytest.fixture
def plan() -> SubscriptionPlan:
    seed_catalog()
    variant = Variant.objects.get(sku="SKU-CAFE-500G")
    Variant.objects.filter(pk=variant.pk).update(stock=10)
    return SubscriptionPlan.objects.create(variant=variant, cycle="monthly", price=3990)


def _subscribe(client: Client, plan: SubscriptionPlan, capture: Any) -> tuple[Subscription, str]:
    response = client.post(f"/assinar/{plan.public_id}/", FORM)
    assert response.status_code == 302
    subscription = Subscription.objects.get()
    page = f"/assinaturas/{subscription.access_token}/"
    assert response["Location"] == page
    html = client.get(page).content.decode()
    assert "Aguardando autorização" in html and "Autorizar no sandbox" in html
    with capture(execute=True):  # the payer approves in the (sandbox) bank app; /rec is delivered, signed
        authorized = client.post(f"/_sandbox/psp/rec/{subscription.pix_id_rec}/authorize", {"next": page}, follow=False)
    assert authorized.status_code == 302
    subscription.refresh_from_db()
    assert subscription.status == "active"
    return subscription, page


def test_a_newcomer_subscribes_in_the_sandbox_and_the_first_cycle_becomes_an_order(
    sandbox: None, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    subscription, page = _subscribe(client, plan, django_capture_on_commit_callbacks)
    cycle = SubscriptionCycle.objects.get(subscription=subscription)
    assert cycle.due_date == timezone.localdate() + timedelta(days=3)
    # QA: the heading of an existing subscription read "Assinar por R$ 39,90 por mês · Ativa", the plan's offer.
    html = client.get(page).content.decode()
    heading = html.split('data-testid="subscription-heading">')[1].split("</h1>")[0]
    title = plan.variant.product.title
    assert heading == f'{title} — R$ 39,90 por mês · <span data-testid="subscription-status">Ativa</span>'
    assert "Assinar por" not in html

    subscription_cycles_sweep()  # the beat: 3 days ahead is inside the 10-to-2 days window
    html = client.get(page).content.decode()
    assert "Pagar este ciclo no sandbox" in html and "R$ 39,90" in html
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/_sandbox/psp/cobr/{cycle.txid}/settle", {"paid": "1", "next": page})

    order = Order.objects.get()
    assert (order.checkout_id, order.total_amount, order.destination["street"]) == (
        cycle.public_id,
        3990,
        "Avenida Paulista",
    )
    html = client.get(page).content.decode()
    assert f"pedido #{order.number}" in html and order.permalink_url in html
    assert SubscriptionCycle.objects.get(subscription=subscription, number=2).status == "scheduled"


def test_subscribing_e_mails_the_subscription_page_once_with_what_was_subscribed_and_what_is_left_to_do(
    sandbox: None, plan: SubscriptionPlan, client: Client, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """QA: nothing was e-mailed on subscribing, so until cycle 1 was paid (days later) the open tab was the buyer's
    only way back to `/assinaturas/<token>/`. The "created" event is the e-mail's outbox row: sent once after
    commit, not again by a replayed task or the sweep; a lost task is sent by the sweep. The shop is named as the
    merchant renamed it in the admin (as the order e-mails name it), not by the project's SHOP_NAME setting."""
    row = store_row()
    row.trade_name = "Torrefação da Serra"
    row.save()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/assinar/{plan.public_id}/", FORM)
    subscription = Subscription.objects.get()
    page_url = subscription_page_url(subscription)
    title = plan.variant.product.title
    assert page_url.endswith(response["Location"])
    assert [(m.to, m.subject) for m in mail.outbox] == [
        (["fulana@example.com.br"], f"Sua assinatura de {title} na Torrefação da Serra")
    ]
    message = mail.outbox[0]
    assert message.from_email.startswith("Torrefação da Serra <")  # the sender too (QA walk: it was SHOP_NAME)
    assert f"Você assinou {title}: R$ 39,90 por mês." in message.body
    assert "autorize o Pix Automático de Torrefação da Serra no app do seu banco" in message.body
    assert f"A primeira cobrança, de R$ 39,90, vence em {subscription.starts_on:%d/%m/%Y}" in message.body
    assert f"\n{page_url}\n" in message.body
    html, mimetype = message.alternatives[0]
    assert mimetype == "text/html" and f'href="{page_url}"' in html and f"Você assinou {title}" in html

    with django_capture_on_commit_callbacks(execute=True):  # a double click: the same subscription, no new e-mail
        again = client.post(f"/assinar/{plan.public_id}/", FORM)
    assert again["Location"] == response["Location"] and Subscription.objects.count() == 1
    created = SubscriptionEvent.objects.get(subscription=subscription, kind="created")
    assert subscription_event_mail(event_id=created.pk) == "done"  # a replayed task
    assert created.pk not in subscription_emails_pending(older_than=timedelta(0))  # the sweep
    assert len(mail.outbox) == 1

    # A task lost after commit: the sweep sends it; a subscription made before this e-mail existed is not greeted.
    lost = Client().post(f"/assinar/{plan.public_id}/", {**FORM, "buyer_email": "outra@example.com.br"})
    assert lost.status_code == 302
    pending = subscription_emails_pending(older_than=timedelta(0))
    assert pending == [
        SubscriptionEvent.objects.get(kind="created", subscription__buyer_email="outra@example.com.br").pk
    ]
    SubscriptionEvent.objects.filter(pk__in=pending).update(created_at=timezone.now() - timedelta(days=3))
    assert subscription_emails_pending(older_than=timedelta(0)) == []


@pytest.mark.django_db(transaction=True)
def test_a_second_click_arriving_while_the_first_is_written_finds_its_subscription(
    sandbox: None, plan: SubscriptionPlan
) -> None:
    """A double click whose second request comes while the first one's transaction is still open: it waits for the
    plan's lock, then answers the first subscription (one recurrence at the PSP, one e-mail), not a second one."""
    address = address_clean(
        {key: value for key, value in FORM.items() if not key.startswith("buyer_")}, FORM["buyer_name"]
    )
    threads = Threads()
    with transaction.atomic():  # the first click, inside its create transaction
        SubscriptionPlan.objects.select_for_update().get(pk=plan.pk)
        first = Subscription.objects.create(
            plan=plan, buyer_name=FORM["buyer_name"], buyer_tax_id="52998224725", buyer_email=FORM["buyer_email"],
            cycle=plan.cycle, price=plan.price, first_cycle_price=plan.first_cycle_price, min_cycles=plan.min_cycles,
            starts_on=timezone.localdate() + timedelta(days=3), destination=address,
        )  # fmt: skip
        threads.start("second", lambda: Client().post(f"/assinar/{plan.public_id}/", FORM)["Location"])
        _until_someone_waits()

    assert threads.join()["second"] == ("done", f"/assinaturas/{first.access_token}/")
    assert Subscription.objects.count() == 1


def test_bad_subscribe_input_names_the_field_in_portuguese_and_writes_nothing(
    sandbox: None, plan: SubscriptionPlan, client: Client
) -> None:
    response = client.post(f"/assinar/{plan.public_id}/", {**FORM, "postal_code": "123"})

    assert response.status_code == 400
    assert 'data-testid="error-postal_code">Informe o CEP com 8 dígitos.' in response.content.decode()
    assert Subscription.objects.count() == 0
    assert client.get("/assinar/plan_nao_existe/").status_code == 404


def test_every_bad_subscribe_field_is_named_beside_it_at_once_and_the_page_opens_at_the_first(
    sandbox: None, plan: SubscriptionPlan, client: Client
) -> None:
    """Buyer walk at 360 px: a bad CPF and a bad e-mail were said one at a time: the buyer fixed the CPF, submitted,
    and only then learned of the e-mail. Every field at fault is now named beside it, what was typed kept."""
    bad = {**FORM, "buyer_tax_id": "111.111.111-11", "buyer_email": "fulana", "number": "", "state": "S"}

    response = client.post(f"/assinar/{plan.public_id}/", bad)

    assert response.status_code == 400
    page = response.content.decode()
    assert f'data-testid="error-buyer_tax_id">{BAD_TAX_ID}' in page
    assert 'data-testid="error-buyer_email">Informe um e-mail válido, como nome@exemplo.com.br.' in page
    assert 'data-testid="error-number">Informe o número.' in page
    assert 'data-testid="error-state">Informe a UF (duas letras).' in page
    assert page.count("field-invalid") == 4  # the good fields are not marked
    assert 'value="111.111.111-11"' in page and 'value="fulana"' in page and 'value="Avenida Paulista"' in page
    assert 'aria-invalid="true" aria-describedby="sub-buyer_email-error"' in page
    assert "shop/checkout.js" in page  # the checkout's script opens the page at the first field in error
    assert Subscription.objects.count() == 0


def test_the_subscribe_form_asks_a_phone_for_the_right_keyboard_and_autofill(
    sandbox: None, plan: SubscriptionPlan, client: Client
) -> None:
    """QA walk at 360 px: CPF and CEP opened the letters keyboard and nothing was filled in from the phone's
    saved name, e-mail and address (the checkout's fields do both)."""
    page = client.get(f"/assinar/{plan.public_id}/").content.decode()

    inputs = {match[1]: match[0] for match in re.findall(r'(<input id="sub-([a-z_]+)"[^>]*>)', page)}
    assert 'inputmode="numeric"' in inputs["buyer_tax_id"]
    assert 'inputmode="numeric" autocomplete="postal-code"' in inputs["postal_code"]
    assert 'autocomplete="name"' in inputs["buyer_name"]
    assert 'autocomplete="email"' in inputs["buyer_email"]
    assert 'autocomplete="address-line1"' in inputs["street"]
    assert 'autocomplete="address-level2"' in inputs["city"]
    assert 'autocomplete="address-level1" maxlength="2"' in inputs["state"]


def test_the_buyer_skips_changes_the_address_pauses_resumes_and_cancels(
    sandbox: None,
    plan: SubscriptionPlan,
    client: Client,
    django_capture_on_commit_callbacks: Any,
    django_assert_max_num_queries: Any,
) -> None:
    subscription, page = _subscribe(client, plan, django_capture_on_commit_callbacks)
    first = SubscriptionCycle.objects.get(subscription=subscription)

    with django_capture_on_commit_callbacks(execute=True):
        skipped = client.post(page, {"action": "skip"})
    assert skipped["Location"] == f"{page}?ok=skip"
    assert "o próximo ciclo foi pulado" in client.get(skipped["Location"]).content.decode()
    first.refresh_from_db()
    second = SubscriptionCycle.objects.get(subscription=subscription, number=2)
    assert (first.status, second.status) == ("skipped", "scheduled")
    skip_mail = [m.body for m in mail.outbox if m.subject.endswith("Ciclo da sua assinatura pulado")]
    assert len(skip_mail) == 1 and f"Pulamos o ciclo de {first.due_date:%d/%m/%Y} " in skip_mail[0]

    refused = client.post(page, {"action": "address", **FORM, "state": "São Paulo"})
    assert refused.status_code == 400 and "Informe a UF (duas letras)." in refused.content.decode()
    client.post(page, {"action": "address", **FORM, "street": "Rua Augusta", "number": "500"})
    subscription.refresh_from_db()
    assert (subscription.destination["street"], subscription.destination["number"]) == ("Rua Augusta", "500")

    with django_assert_max_num_queries(12):
        client.post(page, {"action": "pause"})
    subscription.refresh_from_db()
    assert subscription.status == "paused"
    assert subscription_cycles_sweep(today=second.due_date).get("charged", 0) == 0  # nothing charged paused
    assert client.post(page, {"action": "skip"}).status_code == 409

    client.post(page, {"action": "resume"})
    subscription.refresh_from_db()
    assert subscription.status == "active"
    assert SubscriptionCycle.objects.filter(subscription=subscription, status="scheduled").count() == 1

    # QA: one press cancelled. The first press asks on the same page, saying what happens to the money (nothing
    # was paid: the only cycle was skipped); "Sim, cancelar assinatura" cancels.
    asked = client.post(page, {"action": "cancel"})
    html = asked.content.decode()
    subscription.refresh_from_db()
    assert (asked.status_code, subscription.status) == (200, "active")
    assert 'data-testid="cancel-consequence">Nada foi cobrado até agora: não há valor a devolver.<' in html
    assert 'name="confirm" value="1"' in html and "Sim, cancelar assinatura" in html
    with django_capture_on_commit_callbacks(execute=True):
        client.post(page, {"action": "cancel", "confirm": "1"})
    subscription.refresh_from_db()
    assert subscription.status == "cancelled"
    html = client.get(page).content.decode()
    assert ">Cancelada<" in html and 'data-testid="cancel"' not in html
    assert not SubscriptionCycle.objects.filter(subscription=subscription, status="scheduled").exists()
    # The sandbox recurrence was cancelled by us (PATCH /rec), so the bank app shows it ended.
    assert client.post(page, {"action": "resume"}).status_code == 409


@pytest.mark.parametrize(
    ("group", "sees_amounts"), [("Atendimento", False), ("Expedição", False), ("Financeiro", True)]
)
def test_the_next_charges_amounts_are_shown_only_to_who_may_see_the_revenue(
    sandbox: None,
    plan: SubscriptionPlan,
    client: Client,
    django_capture_on_commit_callbacks: Any,
    django_user_model: Any,
    group: str,
    sees_amounts: bool,
) -> None:
    """ "Próximas cobranças" listed each charge's amount to every staff member, while the sales, ticket médio and
    chart beside it were gated on `orders.view_revenue` ("Pode ver faturamento"): the amounts follow it; when and
    whose stay for everyone who works the subscriptions."""
    from django.contrib.auth.models import Group
    from django.core.management import call_command

    # given an active subscription of R$ 39,90 and a member of one of the shop's staff groups
    subscription, _page = _subscribe(client, plan, django_capture_on_commit_callbacks)
    call_command("create_staff_groups", verbosity=0)
    member = django_user_model.objects.create_user(f"m-{group}", password="x", is_staff=True)
    member.groups.add(Group.objects.get(name=group))
    staff = Client()
    staff.force_login(member)
    # when the member opens the admin home
    home = staff.get("/admin/").content.decode()
    # then the panel lists the next charges, with the amount only for who may see the revenue
    panel = home[home.index('data-testid="subs-next-charges"') :].split("</div>")[0]
    charges = re.findall(r'data-testid="subs-next-charge"><a href="[^"]+">([^<]+)</a>', panel)
    due = SubscriptionCycle.objects.filter(subscription=subscription).earliest("due_date")
    shown = (
        f"{due.due_date:%d/%m} · R$ 39,90 · Fulana de Tal" if sees_amounts else f"{due.due_date:%d/%m} · Fulana de Tal"
    )
    assert charges[0] == shown
    assert ("R$ 39,90" in panel) is sees_amounts


@pytest.mark.parametrize("revenue", [False, True])
def test_the_subscription_admin_pages_show_prices_only_to_who_may_see_the_revenue(
    sandbox: None,
    plan: SubscriptionPlan,
    client: Client,
    django_capture_on_commit_callbacks: Any,
    django_user_model: Any,
    revenue: bool,
) -> None:
    """Merchant gap (closing note, session 46): the admin home's "Próximas cobranças" hides amounts from staff
    without `orders.view_revenue` ("Pode ver faturamento"), but the subscription's own page, its list and the cycles
    list showed the price per cycle, the first cycle's price, each cycle's amount and the plan named with its price
    to anyone who may view subscriptions. The same rule now gates them; when, whose and which plan stay."""
    # given an active subscription of R$ 39,90 and a staff member who may view subscriptions and their cycles
    subscription, _page = _subscribe(client, plan, django_capture_on_commit_callbacks)
    staff = _staff(django_user_model, "assinaturas", ["view_subscription", "view_subscriptioncycle"], revenue=revenue)
    # when they open the subscription's page, the subscriptions list and the cycles list
    pages = {
        url: staff.get(url)
        for url in (
            f"/admin/shop/subscription/{subscription.pk}/change/",
            "/admin/shop/subscription/",
            "/admin/shop/subscriptioncycle/",
        )
    }
    # then each opens, names the subscription and its plan, and shows a price only to who may see the revenue
    for url, response in pages.items():
        html = response.content.decode()
        assert response.status_code == 200, url
        assert subscription.public_id in html, url
        assert ("R$ 39,90" in html) is revenue, url
    change = pages[f"/admin/shop/subscription/{subscription.pk}/change/"].content.decode()
    assert f"{plan.variant} — {plan.get_cycle_display()}" in change and "Fulana de Tal" in change
    assert ("preço por ciclo" in change.lower()) is revenue


@pytest.mark.parametrize("revenue", [False, True])
def test_the_bulk_cancel_confirmation_shows_prices_only_to_who_may_see_the_revenue(
    sandbox: None,
    plan: SubscriptionPlan,
    client: Client,
    django_capture_on_commit_callbacks: Any,
    django_user_model: Any,
    revenue: bool,
) -> None:
    """Follow-up of the session 47 gate: the subscription's page hid the prices from staff without
    `orders.view_revenue` ("Pode ver faturamento"), but the bulk "Cancelar" confirmation still named the plan with
    its price and each open cycle's amount. Now the same rule: when, whose and which plan for everyone who may
    cancel, how much only for who may see the revenue."""
    # given an active subscription of R$ 39,90 (its first cycle sent to the bank) and a staff member who may cancel
    subscription, _page = _subscribe(client, plan, django_capture_on_commit_callbacks)
    staff = _staff(django_user_model, "cancela", ["view_subscription", "change_subscription"], revenue=revenue)
    # when they choose it and "Cancelar as assinaturas selecionadas"
    chosen = {"action": "cancel_selected", "_selected_action": [subscription.pk]}
    asked = staff.post("/admin/shop/subscription/", chosen)
    # then the confirmation lists it, its plan and the charge's day, with a price only for who may see the revenue
    assert asked.status_code == 200
    page = asked.content.decode()
    listed = re.findall(r"<li data-testid=\"to-cancel\">(.*?</ul>)", page, re.S)
    assert len(listed) == 1 and subscription.public_id in listed[0] and "Fulana de Tal" in listed[0]
    assert f"{plan.variant} — {plan.get_cycle_display()}" in listed[0]
    cycle = SubscriptionCycle.objects.get(subscription=subscription, status="charged")
    amount = " (R$ 39,90)" if revenue else ""
    assert (
        f"A cobrança do ciclo de {cycle.due_date:%d/%m/%Y}{amount}, já enviada ao banco, é retirada"
        " (se o banco ainda aceitar)."
    ) in listed[0]
    assert ("R$" in page) is revenue
    subscription.refresh_from_db()
    assert subscription.status == "active"


def test_staff_see_subscriptions_next_charges_failures_and_churn_and_can_cancel(
    sandbox: None,
    plan: SubscriptionPlan,
    client: Client,
    admin_client: Client,
    django_capture_on_commit_callbacks: Any,
    django_assert_max_num_queries: Any,
) -> None:
    subscription, _page = _subscribe(client, plan, django_capture_on_commit_callbacks)

    with django_assert_max_num_queries(3):
        stats = subscription_stats()
    assert (stats.by_status, stats.failures_30d, stats.churn_30d_percent) == ({"active": 1}, 0, 0.0)
    home = admin_client.get("/admin/").content.decode()
    assert 'data-testid="subscriptions-panel"' in home and "Fulana de Tal" in home and "R$ 39,90" in home
    assert admin_client.get(f"/admin/shop/subscription/{subscription.pk}/change/").status_code == 200
    assert admin_client.get("/admin/shop/subscriptioncycle/?status__exact=failed").status_code == 200

    # The bulk "Cancelar" first asks, like Django's delete: what will be cancelled and what that does, Sim/Não.
    chosen = {"action": "cancel_selected", "_selected_action": [subscription.pk]}
    asked = admin_client.post("/admin/shop/subscription/?status__exact=active", chosen)
    page = asked.content.decode()
    subscription.refresh_from_db()
    assert (asked.status_code, subscription.status) == (200, "active")
    listed = re.findall(r"<li data-testid=\"to-cancel\">(.*?</ul>)", page, re.S)
    assert len(listed) == 1 and subscription.public_id in listed[0] and "Fulana de Tal" in listed[0]
    effects = re.findall(r"<li>([^<]*)</li>", listed[0])
    cycle = SubscriptionCycle.objects.get(subscription=subscription, status="charged")  # sent to the bank already
    assert effects == [
        "Nenhum ciclo novo é cobrado, e o Pix Automático é cancelado no banco do assinante.",
        f"A cobrança do ciclo de {cycle.due_date:%d/%m/%Y} (R$ 39,90), já enviada ao banco, é retirada"
        " (se o banco ainda aceitar).",
        "Pedidos já pagos não mudam: nada é reembolsado.",
    ]
    assert 'value="Sim, cancelar"' in page and 'name="post" value="yes"' in page
    assert 'href="/admin/shop/subscription/?status__exact=active" class="button cancel-link">Não, voltar<' in page

    with django_capture_on_commit_callbacks(execute=True):
        confirmed = admin_client.post("/admin/shop/subscription/", {**chosen, "post": "yes"}, follow=True)
    subscription.refresh_from_db()
    assert subscription.status == "cancelled"
    assert "1 assinatura cancelada." in confirmed.content.decode()
    assert subscription_stats().churn_30d_percent == 100.0
    # A second submit of the same page (double click, back button) cancels nothing twice, and says so.
    with django_capture_on_commit_callbacks(execute=True):
        again = admin_client.post("/admin/shop/subscription/", {**chosen, "post": "yes"}, follow=True)
    html = again.content.decode()
    assert f"Já estava cancelada (nada mudou): {subscription.public_id}." in html
    assert "assinatura cancelada." not in html
    assert SubscriptionEvent.objects.filter(subscription=subscription, kind="status_cancelled").count() == 1
    # and asking again shows it as already cancelled, with no "Sim, cancelar" to press
    page = admin_client.post("/admin/shop/subscription/", chosen).content.decode()
    assert 'data-testid="already-cancelled"' in page and 'value="Sim, cancelar"' not in page


def test_minha_conta_can_list_a_buyers_subscriptions_by_email_in_one_query(
    sandbox: None,
    plan: SubscriptionPlan,
    client: Client,
    django_capture_on_commit_callbacks: Any,
    django_assert_max_num_queries: Any,
) -> None:
    subscription, page = _subscribe(client, plan, django_capture_on_commit_callbacks)

    with django_assert_max_num_queries(1):
        listed = subscriptions_of_buyer(" Fulana@Example.com.br ")

    assert [(s.public_id, s.product, s.status) for s in listed] == [
        (subscription.public_id, "Café especial 500 g", "Ativa")
    ]
    assert listed[0].page_url.endswith(page)
    assert subscriptions_of_buyer("outra@example.com.br") == []


def test_switching_the_language_on_the_subscription_page_makes_its_next_e_mails_and_cycle_orders_follow_it(
    sandbox: None, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    """The switch on an order's page (or a checkout's) carries to the order's next e-mails; on the subscription's
    page it only set the cookie, and the subscription kept writing in the language it was made in."""
    subscription, page = _subscribe(client, plan, django_capture_on_commit_callbacks)
    assert subscription.language == "pt-br"
    # a switch to no language of the site, by a GET, or with a token of no subscription: nothing
    client.post("/i18n/setlang/", {"language": "xx", "next": page})
    client.get("/i18n/setlang/", {"language": "en", "next": page})
    client.post("/i18n/setlang/", {"language": "en", "next": "/assinaturas/not-a-token/"})
    subscription.refresh_from_db()
    assert subscription.language == "pt-br" and not subscription.events.filter(kind="language_changed").exists()

    switched = client.post("/i18n/setlang/", {"language": "en", "next": page})
    assert (switched.status_code, switched["Location"]) == (302, page)
    subscription.refresh_from_db()
    assert subscription.language == "en"
    assert subscription.events.filter(kind="language_changed").get().detail == {"language": "en"}
    # the page's dates are written the English way, as on the order's page (not 07/01 for January 7)
    due = SubscriptionCycle.objects.get(subscription=subscription, number=1).due_date
    assert f"Cycle 1 · {due:%m/%d/%Y} ·" in client.get(page).content.decode()
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(page, {"action": "skip"})
    assert [m.subject.split(": ", 1)[-1] for m in mail.outbox] == ["Your subscription's cycle was skipped"]
    cycle = SubscriptionCycle.objects.get(subscription=subscription, number=2)
    assert _placed(cycle, txid="t" * 32, amount=3990).language == "en"  # the cycle's order and its e-mails too

    client.post("/i18n/setlang/", {"language": "pt-br", "next": page})
    subscription.refresh_from_db()
    assert subscription.language == "pt-br"


def test_a_subscriber_in_english_gets_the_subscription_e_mails_in_english_from_the_worker(
    sandbox: None, plan: SubscriptionPlan, client: Client, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(f"/assinar/{plan.public_id}/", FORM).status_code == 302
    english = Subscription.objects.get()
    assert english.language == "en"
    title = plan.variant.product.title
    assert [m.subject for m in mail.outbox] == [f"Your {title} subscription at {settings.SHOP_NAME}"]
    assert f"You subscribed to {title}: R$39.90 per month." in mail.outbox[0].body
    assert "authorize the Pix Automático" in mail.outbox[0].body
    asked = client.post(f"/assinaturas/{english.access_token}/", {"action": "cancel"}).content.decode()
    assert "R$39.90 per month" in asked and "Yes, cancel the subscription" in asked
    assert 'data-testid="cancel-consequence">Nothing has been charged so far: there is nothing to refund.<' in asked
    portuguese = Client().post(f"/assinar/{plan.public_id}/", {**FORM, "buyer_email": "outra@example.com.br"})
    assert portuguese.status_code == 302
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):  # the worker sends them: no request language there
        subscription_cancel(public_id=english.public_id)
        subscription_cancel(public_id=Subscription.objects.exclude(pk=english.pk).get().public_id)

    subjects = {message.to[0]: message.subject for message in mail.outbox}
    assert subjects["fulana@example.com.br"].endswith("Your subscription has been canceled")
    assert subjects["outra@example.com.br"].endswith("Sua assinatura foi cancelada")


def test_an_invalid_cpf_is_refused_on_the_subscribe_page_with_the_checkouts_message(
    sandbox: None, plan: SubscriptionPlan, client: Client
) -> None:
    """QA: `111.111.111-11` was accepted (only its digits were counted) and every cycle's order and NF-e carried it."""
    response = client.post(f"/assinar/{plan.public_id}/", {**FORM, "buyer_tax_id": "111.111.111-11"})

    assert response.status_code == 400
    assert f'data-testid="error-buyer_tax_id">{BAD_TAX_ID}' in response.content.decode()
    assert Subscription.objects.count() == 0


def test_pause_and_resume_after_a_skip_keep_the_next_cycle_whose_date_has_not_passed(
    sandbox: None, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    """QA: skip, pause, resume in the same minute cancelled the planned cycle and charged the one after it."""
    subscription, page = _subscribe(client, plan, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(page, {"action": "skip"})
    planned = SubscriptionCycle.objects.get(subscription=subscription, status="scheduled")
    assert planned.number == 2

    client.post(page, {"action": "pause"})
    client.post(page, {"action": "resume"})

    cycles = list(SubscriptionCycle.objects.filter(subscription=subscription).values_list("number", "status"))
    assert cycles == [(1, "skipped"), (2, "scheduled")]
    assert SubscriptionCycle.objects.get(subscription=subscription, number=2).due_date == planned.due_date
    next_charge = client.get(page).content.decode().split('data-testid="next-charge">')[1].split("</p>")[0]
    assert next_charge.startswith(f"R$ 39,90 em {planned.due_date:%d/%m/%Y}")


def test_a_refused_action_shows_only_its_error_not_a_success_notice(
    sandbox: None, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    """QA: "Pronto: o próximo ciclo foi pulado." showed above the 409 refusal of that same skip."""
    _subscription, page = _subscribe(client, plan, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        skipped = client.post(page, {"action": "skip"})
    client.post(page, {"action": "pause"})

    for url in (page, skipped["Location"]):  # the page's forms post back to the URL they were shown at
        refused = client.post(url, {"action": "skip"})
        html = refused.content.decode()
        assert refused.status_code == 409
        assert "Só dá para pular um ciclo de uma assinatura ativa." in html
        assert "o próximo ciclo foi pulado" not in html


def test_cancelling_within_the_withdrawal_period_cancels_and_refunds_the_first_order(
    sandbox: None, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    """QA: "Até … você pode desistir sem nenhum custo (CDC art. 49)", yet cancelling the same day left the first
    cycle's paid order to ship, unrefunded. Withdrawing now cancels it and refunds it in full, and says so."""
    subscription, page = _subscribe(client, plan, django_capture_on_commit_callbacks)
    cycle = SubscriptionCycle.objects.get(subscription=subscription)
    subscription_cycles_sweep()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/_sandbox/psp/cobr/{cycle.txid}/settle", {"paid": "1", "next": page})
    order = Order.objects.get()
    assert "o primeiro pedido também é cancelado e o valor devolvido" in client.get(page).content.decode()
    asked = client.post(page, {"action": "cancel"}).content.decode()  # the confirm step names the refund
    assert f"Você recebe de volta R$ 39,90 do primeiro pedido (#{order.number})" in asked
    assert Subscription.objects.get(pk=subscription.pk).status == "active"

    with django_capture_on_commit_callbacks(execute=True):
        client.post(page, {"action": "cancel", "confirm": "1"})

    order.refresh_from_db()
    assert (order.status, order.payment_status, order.refunded_amount) == ("canceled", "refunded", 3990)
    html = client.get(page).content.decode()
    assert f"Direito de arrependimento: o pedido #{order.number} foi cancelado e o valor pago será devolvido." in html


def test_the_withdrawal_cancels_the_first_order_in_the_cancels_own_transaction(
    sandbox: None, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    """A crash after the subscription's cancel committed must not leave the first order to ship unrefunded: the
    order's cancel and its refund's outbox row are written before the cancel's transaction ends."""
    subscription, page = _subscribe(client, plan, django_capture_on_commit_callbacks)
    cycle = SubscriptionCycle.objects.get(subscription=subscription)
    subscription_cycles_sweep()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/_sandbox/psp/cobr/{cycle.txid}/settle", {"paid": "1", "next": page})
    with CaptureQueriesContext(connection) as queries:
        subscription_cancel(public_id=subscription.public_id, by="buyer")
    sql = [query["sql"] for query in queries.captured_queries]
    # the test's own transaction turns the cancel's into the first savepoint: its release ends the cancel's work
    release = next(i for i, text in enumerate(sql) if text.startswith("RELEASE SAVEPOINT"))
    cancelled = next(i for i, text in enumerate(sql) if text.startswith('UPDATE "orders_order"') and "canceled" in text)
    refund = next(i for i, text in enumerate(sql) if 'INSERT INTO "orders_outboxmessage"' in text and "refund" in text)
    assert cancelled < release and refund < release


def _first_order_paid(client: Client, plan: SubscriptionPlan, capture: Any) -> tuple[Subscription, str, Order]:
    subscription, page = _subscribe(client, plan, capture)
    cycle = SubscriptionCycle.objects.get(subscription=subscription)
    subscription_cycles_sweep()
    with capture(execute=True):
        client.post(f"/_sandbox/psp/cobr/{cycle.txid}/settle", {"paid": "1", "next": page})
    return subscription, page, Order.objects.get()


def _payer_revokes_in_the_bank_app(client: Client, subscription: Subscription, page: str, capture: Any) -> None:
    """The sandbox bank app: the payer cancels the authorization; the PSP's signed `/rec` notice reaches us."""
    with capture(execute=True):
        client.post(f"/_sandbox/psp/rec/{subscription.pix_id_rec}/payer-cancel", {"next": page})


def test_revoking_in_the_bank_app_within_the_withdrawal_period_cancels_and_refunds_the_first_order_once(
    sandbox: None, plan: SubscriptionPlan, client: Client, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """QA: revoking the Pix Automático in the bank app the day after subscribing cancelled the subscription but
    left its first order to ship, unrefunded, unlike cancelling on the shop's page (CDC art. 49). Now the same
    withdrawal runs, in the notice's transaction, and a replayed notice (or a re-read of the recurrence) does
    not refund twice."""
    subscription, page, order = _first_order_paid(client, plan, django_capture_on_commit_callbacks)

    _payer_revokes_in_the_bank_app(client, subscription, page, django_capture_on_commit_callbacks)

    subscription.refresh_from_db()
    order.refresh_from_db()
    assert subscription.status == "cancelled"
    assert (order.status, order.payment_status, order.refunded_amount) == ("canceled", "refunded", 3990)
    html = client.get(page).content.decode()
    assert f"Direito de arrependimento: o pedido #{order.number} foi cancelado e o valor pago será devolvido." in html

    notice = PixRecurrenceWebhookEvent.objects.get(id_rec=subscription.pix_id_rec, status="CANCELADA")
    signature = webhook_auth.sign(settings.PIX_SANDBOX_WEBHOOK_SECRET, bytes(notice.raw_body))
    with django_capture_on_commit_callbacks(execute=True):
        replay = client.post(
            "/payments/pix/webhook/rec", data=bytes(notice.raw_body), content_type="application/json",
            headers={webhook_auth.HEADER: signature},
        )  # fmt: skip
        pix_recurrence_refresh(id_rec=subscription.pix_id_rec)  # the recurrence re-read: announced again
    assert replay.json() == {"received": 0, "duplicates": 1}
    assert SubscriptionEvent.objects.filter(subscription=subscription, kind="withdrawal").count() == 1
    assert OutboxMessage.objects.filter(kind__contains="refund").count() == 1
    order.refresh_from_db()
    assert order.refunded_amount == 3990


def test_revoking_in_the_bank_app_after_the_withdrawal_period_only_stops_the_charges(
    sandbox: None, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    subscription, page, order = _first_order_paid(client, plan, django_capture_on_commit_callbacks)
    long_ago = timezone.now() - timedelta(days=10)  # subscribed and first paid 10 days ago: past the 7 days
    Subscription.objects.filter(pk=subscription.pk).update(created_at=long_ago)
    Order.objects.filter(pk=order.pk).update(placed_at=long_ago)

    _payer_revokes_in_the_bank_app(client, subscription, page, django_capture_on_commit_callbacks)

    subscription.refresh_from_db()
    order.refresh_from_db()
    assert subscription.status == "cancelled"
    assert (order.status, order.refunded_amount) != ("canceled", 3990)
    assert order.refunded_amount == 0
    assert not SubscriptionEvent.objects.filter(subscription=subscription, kind="withdrawal").exists()
    assert not SubscriptionCycle.objects.filter(subscription=subscription, status="scheduled").exists()


def test_the_subscribed_e_mail_states_the_first_charge_the_page_shows_when_authorized_after_the_start_date(
    sandbox: None, plan: SubscriptionPlan, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    """QA: the "created" e-mail said the first charge was due on `starts_on` although the buyer authorized the Pix
    Automático after it (its task lost, the sweep sent it later): that period is not charged, the next one is, and
    the page said so. The e-mail now says what the page says: the open cycle's date and amount."""
    plan.first_cycle_discount = 2000  # the first cycle's price applies to cycle 1 only: not charged here
    plan.save()
    response = client.post(f"/assinar/{plan.public_id}/", FORM)  # its e-mail task lost (callbacks not run)
    subscription = Subscription.objects.get()
    today = timezone.localdate()
    Subscription.objects.filter(pk=subscription.pk).update(starts_on=today - timedelta(days=1))  # authorized late
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/_sandbox/psp/rec/{subscription.pix_id_rec}/authorize", {"next": response["Location"]})
    cycle = SubscriptionCycle.objects.get(subscription=subscription)
    assert cycle.number == 2 and cycle.amount == 3990 and cycle.due_date > today

    created = SubscriptionEvent.objects.get(subscription=subscription, kind="created")
    assert subscription_event_mail(event_id=created.pk) == "sent"  # as the sweep sends it
    body, html = mail.outbox[-1].body, mail.outbox[-1].alternatives[0][0]
    page = client.get(response["Location"]).content.decode()
    assert f"R$ 39,90 em {cycle.due_date:%d/%m/%Y}" in page  # "Próxima cobrança" on the page
    assert f"A primeira cobrança, de R$ 39,90, vence em {cycle.due_date:%d/%m/%Y}" in body
    assert f"vence em {cycle.due_date:%d/%m/%Y}" in html
    assert f"{today - timedelta(days=1):%d/%m/%Y}" not in body
    assert "O primeiro ciclo sai por" not in body  # R$ 19,90 is not charged: cycle 1 was skipped


def test_an_unauthorized_subscription_e_mails_the_first_charge_an_authorization_today_would_plan(
    sandbox: None, plan: SubscriptionPlan, client: Client
) -> None:
    """Starting tomorrow, a Pix Automático charge cannot reach the PSP 2 days ahead: the first charge is the next
    period's. The e-mail, sent before the authorization, says that date (the one `cycle_plan` will pick)."""
    client.post(f"/assinar/{plan.public_id}/", FORM)
    subscription = Subscription.objects.get()
    tomorrow = timezone.localdate() + timedelta(days=1)
    Subscription.objects.filter(pk=subscription.pk).update(starts_on=tomorrow)
    created = SubscriptionEvent.objects.get(subscription=subscription, kind="created")
    assert subscription_event_mail(event_id=created.pk) == "sent"
    body = mail.outbox[-1].body
    subscription.refresh_from_db()
    assert f"A primeira cobrança, de R$ 39,90, vence em {due_date_of(subscription, 2):%d/%m/%Y}" in body
    assert f"vence em {tomorrow:%d/%m/%Y}" not in body


def _staff(user_model: Any, username: str, codenames: list[str], *, revenue: bool) -> Client:
    """A logged-in staff member with these shop permissions, and "Pode ver faturamento" when `revenue`."""
    from django.contrib.auth.models import Permission

    member = user_model.objects.create_user(username, password="x", is_staff=True)
    member.user_permissions.add(*Permission.objects.filter(content_type__app_label="shop", codename__in=codenames))
    if revenue:
        member.user_permissions.add(Permission.objects.get(content_type__app_label="orders", codename="view_revenue"))
    staff = Client()
    staff.force_login(member)
    return staff
