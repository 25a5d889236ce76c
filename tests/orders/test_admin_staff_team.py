"""Staff who are not superusers working the same orders (QA walk h40staff): a refund a colleague registered while
the page was open is not sent twice, every money step names who did it, a refusal is in Portuguese."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from orders.errors import OrderError
from orders.models import Adjustment, Order, OrderEvent
from orders.services import order_refund

pytestmark = pytest.mark.django_db


def _staff(username: str, *codenames: str) -> Client:
    user = User.objects.create_user(username, password="pw-12345678", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="orders", codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


def _action(order: Order, slug: str) -> str:
    return f"/admin/orders/order/{order.public_id}/action/{slug}/"


def _known_refunds(html: str) -> str:
    return re.search(r'name="known_refunds" value="(\d+)"', html).group(1)


def _refunds(order: Order) -> list[int]:
    return list(Adjustment.objects.filter(order=order, type="refund").order_by("id").values_list("amount", flat=True))


def test_two_staff_refunding_the_same_complaint_send_the_money_once_and_the_second_is_told_who(place_order):
    order = place_order(lines=[("CAM", 3000, 1)], freight=800)  # R$ 38,00 paid
    ana = _staff("ana", "view_order", "refund_order")
    bia = _staff("bia", "view_order", "refund_order")
    ana_page = ana.get(_action(order, "refund")).content.decode()
    bia_page = bia.get(_action(order, "refund")).content.decode()
    assert _known_refunds(ana_page) == _known_refunds(bia_page) == "0"
    assert "Known refunds" not in bia_page and "known_refunds" not in re.sub(r"<input[^>]+>", "", bia_page)

    sent = {"amount": "10,00", "reason": "Frete atrasou", "known_refunds": "0", "confirm": "on"}
    assert ana.post(_action(order, "refund"), sent).status_code == 302
    again = bia.post(_action(order, "refund"), sent)

    assert again.status_code == 200
    html = again.content.decode()
    assert "Enquanto esta página estava aberta, ana registrou um reembolso de R$ 10,00 neste pedido." in html
    assert "Reembolsável: R$ 28,00" in html
    assert _refunds(order) == [-1000]  # the second R$ 10,00 did not go out
    # the page is now as the order is: sending it again is a decision taken knowingly
    assert _known_refunds(html) == "1"
    assert bia.post(_action(order, "refund"), {**sent, "known_refunds": "1"}).status_code == 302
    assert _refunds(order) == [-1000, -1000]
    actors = OrderEvent.objects.filter(order=order, kind="refund_requested").order_by("id")
    assert list(actors.values_list("actor", flat=True)) == ["ana", "bia"]


def test_a_refund_at_the_same_instant_is_refused_under_the_order_lock(place_order):
    """Both pages showed 0 refunds; the service compares with the order locked, so the later press is refused
    even when both forms validated before either refund existed (BCP-ORD adjustments: no money out twice)."""
    order = place_order(lines=[("CAM", 3000, 1)], freight=800)
    order_refund(order_id=order.public_id, amount=1000, reason="Frete", actor="ana", known_refunds=0)
    with pytest.raises(OrderError) as refused:
        order_refund(order_id=order.public_id, amount=1000, reason="Frete", actor="bia", known_refunds=0)
    assert refused.value.code == "refund_changed"
    assert _refunds(order) == [-1000]
    # a refund the cancel made counts too: a cancel meanwhile refused the refund typed before it
    other = place_order()
    _staff("caio", "view_order", "refund_order").post(
        _action(other, "cancel"), {"reason": "Sem estoque", "confirm": "on"}
    )
    with pytest.raises(OrderError, match="caio registrou um reembolso de R\\$ 38,00"):
        order_refund(order_id=other.public_id, amount=500, reason="x", actor="bia", known_refunds=0)


def test_the_refund_result_recorded_by_staff_names_them_on_the_timeline(place_order):
    order = place_order(payment_type="card")
    dani = _staff("dani", "view_order", "refund_order")
    dani.post(_action(order, "refund"), {"amount": "5,00", "reason": "Cartão", "known_refunds": "0", "confirm": "on"})
    refund = Adjustment.objects.get(order=order, type="refund")
    dani.post(_action(order, "refund-result"), {"adjustment": refund.public_id, "status": "completed"})
    event = OrderEvent.objects.get(order=order, kind="refund_completed")
    assert event.actor == "dani"


@pytest.mark.parametrize("slug", ["refund", "cancel", "refund-result", "return"])
def test_a_view_only_staff_member_is_refused_in_portuguese_and_nothing_changes(place_order, slug):
    order = place_order()
    viewer = _staff("viewer", "view_order")
    for response in (
        viewer.get(_action(order, slug)),
        viewer.post(_action(order, slug), {"amount": "38,00", "reason": "x", "confirm": "on", "known_refunds": "0"}),
    ):
        html = response.content.decode()
        assert response.status_code == 403
        assert "Sem permissão" in html and "nada foi alterado" in html and "403 Forbidden" not in html
        # in the admin's layout (its header and the way back to the panel), not the storefront's
        assert 'id="site-name"' in html and "Voltar ao início do painel" in html and "Carrinho" not in html
    assert not Adjustment.objects.filter(order=order).exists()
    order.refresh_from_db()
    assert (order.status, order.refunded_amount) == ("placed", 0)


def _named(username: str, first_name: str, last_name: str, *codenames: str) -> Client:
    client = _staff(username, *codenames)
    User.objects.filter(username=username).update(first_name=first_name, last_name=last_name)
    return client


def _timeline_actors(html: str) -> list[str]:
    return re.findall(r'<td class="field-actor_label"><p>(.*?)</p></td>', html)


def test_the_timeline_names_staff_by_their_full_name_else_the_username_and_the_buyer_page_never(place_order):
    order = place_order()
    line = order.lines.get()
    ana = _named("carla", "Carla", "Mendes", "view_order", "change_order", "ship_order")
    bia = _staff("bia", "view_order", "change_order")  # no name on her account: her username
    assert ana.post(_action(order, "note"), {"text": "Cliente pediu embrulho"}).status_code == 302
    assert bia.post(_action(order, "note"), {"text": "Embrulho feito"}).status_code == 302
    shipment = {"tracking_number": "BR123456785BR", f"qty_{line.public_id}": str(line.quantity_total)}
    assert ana.post(_action(order, "ship"), shipment).status_code == 302

    page = bia.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    actors = [actor for actor in _timeline_actors(page) if actor]
    assert actors == ["Carla Mendes", "bia", "Carla Mendes"]
    # what is stored stays the username (a renamed person is still the same account)
    assert set(OrderEvent.objects.filter(order=order).exclude(actor="").values_list("actor", flat=True)) == {
        "carla",
        "bia",
    }
    buyer_page = Client().get(order.permalink_url).content.decode()
    assert "BR123456785BR" in buyer_page  # the shipment is there, who registered it is not
    assert "Mendes" not in buyer_page and "carla" not in buyer_page and "Embrulho" not in buyer_page


def _queries(client: Client, url: str) -> tuple[int, str]:
    count = 0

    def counter(execute, sql, params, many, context):
        nonlocal count
        count += 1
        return execute(sql, params, many, context)

    client.get(url)  # warm: process caches (store settings, content types) filled on a first load are not counted
    with connection.execute_wrapper(counter):
        html = client.get(url).content.decode()
    return count, html


def test_the_timeline_of_many_named_staff_costs_no_query_per_person(place_order, django_assert_max_num_queries):
    order = place_order()
    url = f"/admin/orders/order/{order.pk}/change/"
    viewer = _staff("viewer", "view_order")
    _named("staff0", "Pessoa", "Número 0", "view_order", "change_order").post(_action(order, "note"), {"text": "N"})
    one, _html = _queries(viewer, url)
    for index in range(1, 5):
        _named(f"staff{index}", "Pessoa", f"Número {index}", "view_order", "change_order").post(
            _action(order, "note"), {"text": f"Nota {index}"}
        )
    five, page = _queries(viewer, url)
    assert five <= one  # the names come with the timeline's own query
    assert [actor for actor in _timeline_actors(page) if actor] == [f"Pessoa Número {i}" for i in range(5)]
    with django_assert_max_num_queries(one):
        viewer.get(url)


def _api(username: str, first_name: str = "", last_name: str = "") -> APIClient:
    """A staff account working through the back-office API (`/api/v1/`, token auth)."""
    user = User.objects.create_user(username, is_staff=True, first_name=first_name, last_name=last_name)
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="orders", codename__in=["view_order", "change_order"])
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_a_change_made_through_the_api_names_the_person_followed_by_api_without_a_query_each(place_order):
    order = place_order()
    url = f"/admin/orders/order/{order.pk}/change/"
    viewer = _staff("viewer", "view_order")
    note = f"/api/v1/orders/{order.public_id}/notes/"
    assert _api("nara", "Nara", "Fonseca").post(note, {"text": "Separado"}, format="json").status_code == 201
    one, _html = _queries(viewer, url)
    assert _api("erp").post(note, {"text": "Faturado no ERP"}, format="json").status_code == 201
    _named("nara2", "Nara", "Fonseca", "view_order", "change_order").post(_action(order, "note"), {"text": "Admin"})
    three, page = _queries(viewer, url)

    assert [actor for actor in _timeline_actors(page) if actor] == ["Nara Fonseca (API)", "erp (API)", "Nara Fonseca"]
    assert "api:" not in page
    assert three <= one
    # what is stored still tells the API apart, by username
    assert list(OrderEvent.objects.filter(order=order, kind="note").order_by("id").values_list("actor", flat=True)) == [
        "api:nara",
        "api:erp",
        "nara2",
    ]


def test_the_colleague_who_refunded_first_is_named_by_their_full_name(place_order):
    order = place_order(lines=[("CAM", 3000, 1)], freight=800)
    ana = _named("ana", "Ana", "Souza", "view_order", "refund_order")
    bia = _staff("bia", "view_order", "refund_order")
    bia_page = bia.get(_action(order, "refund")).content.decode()
    sent = {"amount": "10,00", "reason": "Frete atrasou", "known_refunds": _known_refunds(bia_page), "confirm": "on"}
    assert ana.post(_action(order, "refund"), sent).status_code == 302
    html = bia.post(_action(order, "refund"), sent).content.decode()
    assert "Enquanto esta página estava aberta, Ana Souza registrou um reembolso de R$ 10,00 neste pedido." in html
