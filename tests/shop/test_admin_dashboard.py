"""The admin home is a dashboard: exact numbers after three orders, each linking to the rows it counts."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone

from orders.models import Order
from orders.services import order_place_from_checkout
from payments.models import BoletoPayment
from payments.services import pix_charge_ensure
from shop.admin.dashboard import dashboard_get
from shop.models import (
    Category,
    Checkout,
    CheckoutReminder,
    PickupLocation,
    Product,
    ProductImage,
    ShippingMethod,
    StoreSettings,
    Variant,
)
from tests.orders.conftest import make_checkout

pytestmark = pytest.mark.django_db


def three_orders() -> list[Order]:
    """Today: 2 paid (R$ 60,00 delivery, R$ 35,90 pickup) + 1 unpaid; 10 days ago: 1 paid R$ 100,00."""
    first = order_place_from_checkout(checkout=make_checkout(lines=[("CAM-A", 3000, 2)], freight=0))
    second = order_place_from_checkout(checkout=make_checkout(lines=[("CAF-B", 3590, 1)], freight=0, method="pickup"))
    unpaid = order_place_from_checkout(checkout=make_checkout(lines=[("CAF-C", 1000, 1)], freight=0, paid=False))
    old = order_place_from_checkout(checkout=make_checkout(lines=[("CAM-D", 10000, 1)], freight=0))
    Order.objects.filter(pk=old.pk).update(placed_at=timezone.now() - timedelta(days=10))
    return [first, second, unpaid, old]


def _rows(html: str) -> int:
    """Rows of an admin changelist's result table (0 when the list is empty)."""
    table = re.search(r'<table id="result_list">.*?<tbody>(.*?)</tbody>', html, re.S)
    return table.group(1).count("<tr") if table else 0


def test_dashboard_numbers_are_exact(admin_client: Client) -> None:
    orders = three_orders()
    assert [o.total_amount for o in orders] == [6000, 3590, 1000, 10000]
    category = Category.objects.create(name="C", slug="c")
    product = Product.objects.create(title="P", slug="p", category=category)
    Variant.objects.create(product=product, sku="LOW-1", price=100, stock=2, low_stock_threshold=3)
    Variant.objects.create(product=product, sku="OK-1", price=100, stock=9, low_stock_threshold=3)
    abandoned = Checkout.objects.create(status="incomplete", buyer_email="bia@example.com.br")
    pix_charge_ensure(reference="checkout_dash", amount=1000)
    # reminders: one sent and bought afterwards (the first order's checkout), one sent, one not sent yet
    bought = Checkout.objects.create(status="completed", buyer_email="ana@example.com.br", order_id="order_x")
    CheckoutReminder.objects.create(checkout=bought, email="ana@example.com.br", sent_at=timezone.now())
    CheckoutReminder.objects.create(checkout=abandoned, email="bia@example.com.br", sent_at=timezone.now())
    CheckoutReminder.objects.create(checkout=Checkout.objects.create(status="canceled"), email="c@example.com.br")

    dashboard = dashboard_get()
    assert [(s.days, s.count, s.revenue, s.average_ticket) for s in dashboard.sales] == [
        (1, 2, 9590, 4795),
        (7, 2, 9590, 4795),
        (30, 3, 19590, 6530),
    ]
    assert {c.key: c.value for c in dashboard.counters} == {
        "to_ship": 2,  # today's delivery order and the one of 10 days ago
        "pickups": 1,
        "pix_pending": 1,
        "boletos_pending": 0,
        "refunds_pending": 0,
        "returns_open": 0,
        "disputes_open": 0,
        "nfe_problems": 0,
        "low_stock": 1,
        "abandoned": 2,  # the reminded one and the cancelled one (created today, no order)
        "reminders_sent": 2,
        "reminders_recovered": 1,
    }
    assert sum(bar.revenue for bar in dashboard.chart) == 19590
    assert dashboard.chart[-1].revenue == 9590

    html = admin_client.get("/admin/").content.decode()
    assert "Loja Exemplo — administração" in html
    card = re.search(r'data-testid="sales-1".*?</a>', html, re.S).group(0)
    assert "R$ 95,90" in card and "2 vendas" in card and "ticket médio R$ 47,95" in card
    # every number links to the list that shows exactly what it counts
    for counter in dashboard.counters:
        href = re.search(rf'href="([^"]+)" data-testid="counter-{counter.key}"', html).group(1)
        listing = admin_client.get(href.replace("&amp;", "&"))
        assert listing.status_code == 200, counter.key
        assert _rows(listing.content.decode()) == counter.value, counter.key
    sales_href = re.search(r'href="([^"]+)" data-testid="sales-30"', html).group(1).replace("&amp;", "&")
    listing = admin_client.get(sales_href).content.decode()
    assert _rows(listing) == 3
    assert all(f"#{o.number}" in listing for o in (orders[0], orders[1], orders[3]))
    assert f"#{orders[2].number}<" not in listing


def test_sales_count_the_day_the_money_came_in_and_open_exactly_those_orders(admin_client: Client) -> None:
    """A boleto issued 8 days ago and paid today is today's money (the finance export's payment date,
    orders_with_payment_date): "Hoje" counted it 8 days ago, where no money had come in, and its link listed by
    order date. Now each figure counts by payment date and its link opens a list of exactly those orders."""
    from orders.services import order_payment_confirm

    today = order_place_from_checkout(checkout=make_checkout(lines=[("CAM-A", 3000, 1)], freight=0))
    boleto = order_place_from_checkout(
        checkout=make_checkout(lines=[("CAF-B", 5000, 1)], freight=0, payment_type="boleto", paid=False)
    )
    unpaid_old = order_place_from_checkout(checkout=make_checkout(lines=[("CAF-C", 1000, 1)], freight=0, paid=False))
    eight_days_ago = timezone.now() - timedelta(days=8)
    Order.objects.filter(pk__in=[boleto.pk, unpaid_old.pk]).update(placed_at=eight_days_ago)
    order_payment_confirm(order_id=boleto.public_id, paid_amount=5000)

    dashboard = dashboard_get()
    assert [(s.days, s.count, s.revenue) for s in dashboard.sales] == [(1, 2, 8000), (7, 2, 8000), (30, 2, 8000)]
    assert dashboard.chart[-1].revenue == 8000
    html = admin_client.get("/admin/").content.decode()
    for figure in dashboard.sales:
        href = re.search(rf'href="([^"]+)" data-testid="sales-{figure.days}"', html).group(1).replace("&amp;", "&")
        listing = admin_client.get(href)
        assert {o.number for o in listing.context["cl"].result_list} == {boleto.number, today.number}
        assert _rows(listing.content.decode()) == figure.count
        assert "pago desde" in listing.content.decode().lower()


def _boleto(order: Order, status: str, number: int) -> BoletoPayment:
    return BoletoPayment.objects.create(
        payment_id=f"bol_{number}", reference=order.checkout_id, handler_id="br.dev.bcp.boleto",
        amount=order.total_amount, status=status, due_date=date(2026, 12, 10), gateway="sandbox",
        gateway_charge_id=f"ch_{number}", line="0" * 47,
    )  # fmt: skip


def test_boletos_awaiting_payment_have_their_counter_linking_to_them(admin_client: Client) -> None:
    """QA walk: the home counted Pix awaiting payment but not boletos: a merchant selling by boleto could not see
    how many orders still wait for the bank's payment report."""
    # given two orders awaiting their boleto, one whose boleto was paid and one whose boleto expired
    orders = [
        order_place_from_checkout(
            checkout=make_checkout(lines=[(f"BOL-{n}", 5000, 1)], freight=0, payment_type="boleto", paid=False)
        )
        for n in range(4)
    ]
    for number, (order, status) in enumerate(zip(orders, ("issued", "issued", "paid", "expired"), strict=True)):
        _boleto(order, status, number)
    # when the owner opens the admin home
    html = admin_client.get("/admin/").content.decode()
    # then the tile says 2 and opens exactly those boletos
    tile = re.search(r'href="([^"]+)" data-testid="counter-boletos_pending">(.*?)</a>', html, re.S)
    assert tile is not None
    assert re.search(r'data-role="value">2<', tile.group(2)) and "Boletos aguardando pagamento" in tile.group(2)
    listing = admin_client.get(tile.group(1).replace("&amp;", "&"))
    assert {b.payment_id for b in listing.context["cl"].result_list} == {"bol_0", "bol_1"}


def test_a_hand_edited_paid_since_link_lists_every_order_and_says_why(admin_client: Client) -> None:
    order_place_from_checkout(checkout=make_checkout(lines=[("CAM-A", 3000, 1)], freight=0))
    response = admin_client.get("/admin/orders/order/", {"pago_desde": "ontem"}, follow=True)
    assert response.status_code == 200
    assert _rows(response.content.decode()) == 1
    assert "“Pago desde” precisa de uma data AAAA-MM-DD" in response.content.decode()


def test_dashboard_home_costs_a_fixed_number_of_queries(admin_client: Client, django_assert_max_num_queries) -> None:
    three_orders()
    reminded = Checkout.objects.create(status="completed", buyer_email="ana@example.com.br", order_id="order_x")
    CheckoutReminder.objects.create(checkout=reminded, email="ana@example.com.br", sent_at=timezone.now())
    # 14 + the MED disputes counter (issue 37) + the first steps' one + the boletos awaiting payment
    with django_assert_max_num_queries(17):
        assert admin_client.get("/admin/").status_code == 200


def test_a_day_without_sales_says_nenhuma_venda(admin_client: Client) -> None:
    # given no order at all (gettext's pt_BR plural takes 0 as singular: "0 venda")
    html = admin_client.get("/admin/").content.decode()
    card = re.search(r'data-testid="sales-1".*?</a>', html, re.S).group(0)
    assert re.search(r'data-role="count">nenhuma venda<', card)


def test_an_nfe_blocked_by_missing_data_is_counted_and_links_to_what_to_fix(admin_client: Client, settings) -> None:
    from tests.shop.test_fiscal_lifecycle import paid_order

    # given NF-e issuing on and a paid order whose product has no NCM (its NF-e is blocked)
    settings.FISCAL_ISSUE_ON, settings.FISCAL_PROVIDER = "paid", "sandbox"
    StoreSettings.objects.create(cnpj="11.222.333/0001-81", state_registration="110042490114", state="SP")
    paid_order(ncm="")
    # when staff open the admin home
    html = admin_client.get("/admin/").content.decode()
    # then the problem is counted there, and its list says why
    card = re.search(r'href="([^"]+)" data-testid="counter-nfe_problems">(.*?)</a>', html, re.S)
    assert card is not None and "NF-e com problema" in card.group(2)
    assert re.search(r"data-role=\"value\">1<", card.group(2))
    listing = admin_client.get(card.group(1).replace("&amp;", "&")).content.decode()
    assert _rows(listing) == 1
    assert "NCM não informado" in listing


def test_refunds_of_orders_paid_outside_the_shop_count_until_settled(admin_client: Client) -> None:
    from orders.services import adjustment_settle_offline, order_cancel, order_refund

    # given two orders paid outside the shop today: one cancelled (R$ 50,00 to give back), one refunded in part
    cancelled = order_place_from_checkout(
        checkout=make_checkout(lines=[("A", 5000, 1)], freight=0, payment_type="manual")
    )
    kept = order_place_from_checkout(checkout=make_checkout(lines=[("B", 8000, 1)], freight=0, payment_type="manual"))
    order_cancel(order_id=cancelled.public_id, reason="Desistiu")
    partial = order_refund(order_id=kept.public_id, amount=3000, reason="Avaria")
    dashboard = dashboard_get()
    # the cancelled order is not revenue, even before its money goes back; both refunds are pending
    assert [(s.count, s.revenue) for s in dashboard.sales] == [(1, 8000)] * 3
    counters = {c.key: c for c in dashboard.counters}
    assert counters["refunds_pending"].value == 2
    listing = admin_client.get(counters["refunds_pending"].url).content.decode()
    assert _rows(listing) == 2

    adjustment_settle_offline(adjustment_id=partial.public_id, means="transferencia", note="TED 42")
    dashboard = dashboard_get()
    assert [(s.count, s.revenue) for s in dashboard.sales] == [(1, 5000)] * 3  # net of what went back
    assert {c.key: c.value for c in dashboard.counters}["refunds_pending"] == 1


def test_returns_waiting_for_the_store_are_counted_and_listed(admin_client: Client) -> None:
    from orders.services import (
        fulfillment_event_create,
        order_ship,
        return_request_approve,
        return_request_create,
        return_request_receive,
    )
    from orders.types import LineQuantity

    # given three delivered orders, each with a buyer's return: one just asked, one approved (the parcel is on its
    # way back), one received (to refund)
    requests = []
    for sku in ("R-1", "R-2", "R-3"):
        order = order_place_from_checkout(checkout=make_checkout(lines=[(sku, 3000, 1)], freight=0))
        order_ship(order_id=order.public_id, tracking_number="BR123456785BR")
        fulfillment_event_create(order_id=order.public_id, type="delivered", occurred_at=timezone.now())
        line = order.lines.get()
        requests.append(
            return_request_create(
                order_id=order.public_id, lines=[LineQuantity(line.public_id, 1)], reason_code="defective"
            )
        )
    return_request_approve(return_id=requests[1].public_id)
    return_request_approve(return_id=requests[2].public_id)
    return_request_receive(return_id=requests[2].public_id)
    # when staff open the admin home
    counters = {c.key: c for c in dashboard_get().counters}
    # then the asked and the received ones wait for the store (no number said so: only the order page did)
    assert counters["returns_open"].value == 2
    html = admin_client.get("/admin/").content.decode()
    assert 'data-testid="counter-returns_open"' in html and "Devoluções a responder ou reembolsar" in html
    listing = admin_client.get(counters["returns_open"].url).content.decode()
    assert _rows(listing) == 2
    assert requests[0].public_id in listing and requests[2].public_id in listing
    assert requests[1].public_id not in listing


def _steps(client: Client) -> dict[str, str] | None:
    """The first-steps list of the admin home: step → "true"/"false" (done), or None when not shown."""
    html = client.get("/admin/").content.decode()
    if 'data-testid="first-steps"' not in html:
        return None
    block = html.split('data-testid="first-steps"')[1].split("</section>")[0]
    return dict(re.findall(r'data-step="([a-z]+)" data-done="(true|false)"', block))


def test_a_new_store_gets_first_steps_ticked_from_the_database(admin_client: Client, settings) -> None:
    """Closing note: a new merchant had no list of what the store still lacks before it sells. The admin home lists
    the first steps, each a link to where it is done and ticked from the data; once all are done the list goes."""
    html = admin_client.get("/admin/").content.decode()
    assert "Primeiros passos" in html
    assert _steps(admin_client) == dict.fromkeys(("store", "pix", "delivery", "product", "fiscal", "order"), "false")
    block = html.split('data-testid="first-steps"')[1].split("</section>")[0]
    for href in re.findall(r'<a href="([^"]+)"', block):
        assert admin_client.get(href).status_code in (200, 302), href  # every link opens where the step is done

    StoreSettings.objects.update_or_create(
        pk=1, defaults={"cnpj": "11.222.333/0001-81", "street": "Rua A", "postal_code": "01310-100"}
    )  # (opening the store page above made the row)
    assert _steps(admin_client)["store"] == "false"  # still the example's razão social: the Pix would name it
    StoreSettings.objects.update(legal_name="Ateliê Ana Ltda")
    method = ShippingMethod.objects.create(code="pac", title="PAC", active=False)
    PickupLocation.objects.create(
        name="Loja", street="Rua A", number="1", neighborhood="Centro", city="São Paulo", uf="SP", cep="01310-100",
        opening_hours="9h às 18h",
    )  # fmt: skip
    product = Product.objects.create(title="Vestido", slug="vestido", category=Category.objects.create(name="R"))
    Variant.objects.create(product=product, sku="VEST", price=18990, stock=2)  # in stock, no photo yet
    steps = _steps(admin_client)
    assert steps is not None
    assert (steps["store"], steps["delivery"], steps["product"], steps["fiscal"]) == ("true", "true", "false", "false")

    ProductImage.objects.create(product=product, source="shop/demo/vestido.jpg")
    StoreSettings.objects.update(state_registration="110042490114", tax_regime="simples")
    PickupLocation.objects.update(active=False)
    method.save()  # an inactive shipping method does not count
    steps = _steps(admin_client)
    assert steps is not None
    assert (steps["delivery"], steps["product"], steps["fiscal"]) == ("false", "true", "true")

    ShippingMethod.objects.update(active=True)
    order_place_from_checkout(checkout=make_checkout(lines=[("CAM-A", 3000, 1)], freight=0))
    settings.PIX_KEY = "ana@atelie.com.br"
    assert _steps(admin_client) is None  # all done: the list goes


def test_first_steps_list_only_what_the_staff_member_may_do(client: Client, django_user_model) -> None:
    catalog = django_user_model.objects.create_user("catalogo", password="x", is_staff=True)
    catalog.user_permissions.add(Permission.objects.get(codename="change_product"))
    client.force_login(catalog)
    assert _steps(client) == {"product": "false"}
    nobody = django_user_model.objects.create_user("leitura", password="x", is_staff=True)
    client.force_login(nobody)
    assert _steps(client) is None


def test_first_steps_are_not_shown_to_teams_that_set_nothing_up(
    admin_client: Client, client: Client, django_user_model
) -> None:
    """Closing note: Atendimento's "Primeiros passos" was one step, the test order ("feito" from the first day): a
    list of nothing for staff who set up no store data, delivery or product. Not shown to them; the owner keeps it."""
    from django.contrib.auth.models import Group
    from django.core.management import call_command

    # given a new store with an order already, and its staff groups
    three_orders()
    call_command("create_staff_groups", verbosity=0)
    for name in ("Atendimento", "Financeiro", "Expedição"):
        member = django_user_model.objects.create_user(f"m-{name}", password="x", is_staff=True)
        member.groups.add(Group.objects.get(name=name))
        client.force_login(member)
        # when each opens the admin home, then no first steps
        assert _steps(client) is None, name
    steps = _steps(admin_client)
    assert steps is not None and steps["order"] == "true" and steps["store"] == "false"


def test_the_home_links_only_to_what_each_team_member_may_open(
    admin_client: Client, client: Client, django_user_model
) -> None:
    from django.contrib.auth.models import Group
    from django.core.management import call_command

    # given the shop's staff groups, Ana in Atendimento and Eva in all three
    three_orders()
    call_command("create_staff_groups", verbosity=0)
    ana = django_user_model.objects.create_user("ana", password="x", is_staff=True)
    ana.groups.add(Group.objects.get(name="Atendimento"))
    eva = django_user_model.objects.create_user("eva", password="x", is_staff=True)
    eva.groups.add(*Group.objects.filter(name__in=["Atendimento", "Expedição", "Financeiro"]))
    for member, absent in ((ana, {"pix_pending", "low_stock", "abandoned"}), (eva, {"low_stock", "abandoned"})):
        client.force_login(member)
        # when each opens the admin home
        html = client.get("/admin/").content.decode()
        dashboard = html.split('data-testid="dashboard"')[1].split("</figure>")[0]
        # then every link on it opens (the Pix, stock, cart counters and "Nova venda" answered 403 "Sem permissão")
        for href in re.findall(r'href="([^"]+)"', dashboard):
            assert client.get(href.replace("&amp;", "&")).status_code == 200, (member.username, href)
        assert 'data-testid="new-manual-order"' not in dashboard
        assert 'data-testid="counter-to_ship"' in dashboard
        assert not any(f'data-testid="counter-{key}"' in dashboard for key in absent), member.username
    # and the owner still sees every counter and the manual sale
    html = admin_client.get("/admin/").content.decode()
    assert 'data-testid="new-manual-order"' in html and 'data-testid="counter-low_stock"' in html


def test_revenue_is_shown_only_to_who_may_see_it(admin_client: Client, client: Client, django_user_model) -> None:
    """Atendimento and Expedição saw the shop's revenue, ticket médio and daily chart on the admin home, the money
    summary under the orders list and the finance export: `orders.view_revenue` ("Pode ver faturamento") now
    decides, Financeiro has it, the superuser sees all."""
    from django.contrib.auth.models import Group
    from django.core.management import call_command

    # given three orders (R$ 95,90 today) and the shop's staff groups, one member in each
    three_orders()
    call_command("create_staff_groups", verbosity=0)
    month = f"/admin/orders/order/?pago_em={timezone.localdate():%Y-%m}"
    finance = "/admin/orders/order/export-financeiro.csv"
    for name, sees in (("Atendimento", False), ("Expedição", False), ("Financeiro", True)):
        member = django_user_model.objects.create_user(f"m-{name}", password="x", is_staff=True)
        member.groups.add(Group.objects.get(name=name))
        client.force_login(member)
        # when each opens the admin home, the orders of this month and the finance export
        home = client.get("/admin/").content.decode()
        listed = client.get(month).content.decode()
        exported = client.get(finance)
        # then only Financeiro sees the money the shop made
        shown = {
            "sales": 'data-testid="sales-1"' in home,
            "ticket": "ticket médio" in home,
            "chart": 'data-testid="sales-chart"' in home,
            "revenue": "R$ 95,90" in home,
            "summary": "Valores dos pedidos filtrados" in listed,
            "export link": "export-financeiro.csv" in listed,
            "export": exported.status_code == 200,
        }
        assert shown == dict.fromkeys(shown, sees), name
        # and everyone still works the orders: the counters and the list are there
        assert 'data-testid="counter-to_ship"' in home and "result_list" in listed, name
    # and the superuser sees all of it
    home = admin_client.get("/admin/").content.decode()
    assert 'data-testid="sales-1"' in home and 'data-testid="sales-chart"' in home and "R$ 95,90" in home
    assert "Valores dos pedidos filtrados" in admin_client.get(month).content.decode()
    assert admin_client.get(finance).status_code == 200


def test_the_revenue_permission_goes_to_the_groups_that_hold_the_money() -> None:
    """orders 0029 makes "Pode ver faturamento" and grants it to the groups that refund (Financeiro, an owner's
    group), so nobody who saw the revenue loses it on upgrade; Atendimento and Expedição do not get it."""
    from importlib import import_module

    from django.apps import apps
    from django.contrib.auth.models import Group

    # given a shop upgraded from before the permission: an owner's group that refunds, and Atendimento
    Permission.objects.filter(codename="view_revenue").delete()
    owner = Group.objects.create(name="Dono")
    owner.permissions.add(Permission.objects.get(content_type__app_label="orders", codename="refund_order"))
    desk = Group.objects.create(name="Atendimento")
    desk.permissions.add(Permission.objects.get(content_type__app_label="orders", codename="change_order"))
    # when the data migration runs
    import_module("orders.migrations.0029_revenue_permission").grant_revenue(apps, None)
    # then the permission exists with its Portuguese name and only the money group holds it
    revenue = Permission.objects.get(content_type__app_label="orders", codename="view_revenue")
    assert revenue.name == "Pode ver faturamento"
    assert list(revenue.group_set.values_list("name", flat=True)) == ["Dono"]
