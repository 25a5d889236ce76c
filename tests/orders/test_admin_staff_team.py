"""Staff who are not superusers working the same orders (QA walk h40staff): a refund a colleague registered while
the page was open is not sent twice, every money step names who did it, a refusal is in Portuguese."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

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

    sent = {"amount": "10,00", "reason": "Frete atrasou", "known_refunds": "0"}
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
    dani.post(_action(order, "refund"), {"amount": "5,00", "reason": "Cartão", "known_refunds": "0"})
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
    assert not Adjustment.objects.filter(order=order).exists()
    order.refresh_from_db()
    assert (order.status, order.refunded_amount) == ("placed", 0)
