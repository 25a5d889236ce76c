"""Staff who are not superusers (QA walk h40staff): what changes money, a subscription or an NF-e is neither offered
nor done for an account without its permission; the project's groups give a small shop sensible roles."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from fiscal.models import FiscalDocument
from orders.models import Adjustment, Order
from payments.med.models import PixInfraction, PixInfractionAnswer
from shop.admin.subscriptions import event_detail_text
from shop.models import Subscription, SubscriptionEvent
from shop.subscriptions.services import subscription_create
from tests.shop.test_admin_subscription_words import ADDRESS, cancelled  # noqa: F401  (the fixture: a plan and a subscription)
from tests.shop.test_med_disputes import _open, paid_order, psp  # noqa: F401

pytestmark = pytest.mark.django_db


def _staff(username: str, *dotted: str) -> Client:
    user = User.objects.create_user(username, password="pw-12345678", is_staff=True)
    for item in dotted:
        app_label, codename = item.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    client = Client()
    client.force_login(user)
    return client


def _messages(response: Any) -> list[str]:
    return re.findall(r'<li class="[a-z]+">(.*?)</li>', response.content.decode())


def test_cancelling_a_subscription_needs_more_than_viewing_it_and_names_who(cancelled: Subscription) -> None:  # noqa: F811
    active = subscription_create(
        plan_id=cancelled.plan.public_id, buyer_name="Bia Lima", buyer_tax_id="390.533.447-05",
        buyer_email="bia@example.com.br", starts_on=cancelled.starts_on, destination=ADDRESS,
    )  # fmt: skip
    viewer = _staff("subviewer", "shop.view_subscription")
    assert "cancel_selected" not in viewer.get("/admin/shop/subscription/").content.decode()
    crafted = viewer.post(
        "/admin/shop/subscription/", {"action": "cancel_selected", "_selected_action": [active.pk]}, follow=True
    )
    active.refresh_from_db()
    assert active.status == "pending_authorization"  # unchanged
    assert "assinatura cancelada" not in " ".join(_messages(crafted))

    clerk = _staff("rita", "shop.view_subscription", "shop.change_subscription")
    assert "cancel_selected" in clerk.get("/admin/shop/subscription/").content.decode()
    clerk.post("/admin/shop/subscription/", {"action": "cancel_selected", "_selected_action": [active.pk]})
    active.refresh_from_db()
    assert active.status == "cancelled"
    event = SubscriptionEvent.objects.get(subscription=active, kind="status_cancelled")
    assert (event.detail["by"], event.detail["staff"]) == ("shop", "rita")
    assert "pessoa da equipe: rita" in event_detail_text(event.detail)


def test_the_med_answer_button_is_only_for_who_may_answer(
    client: Client,
    paid_order: Order,  # noqa: F811
    psp: Any,  # noqa: F811
    django_capture_on_commit_callbacks: Any,
) -> None:
    _open(client, psp, paid_order, django_capture_on_commit_callbacks)
    infraction = PixInfraction.objects.get()
    page_url = f"/admin/payments/pixinfraction/{infraction.pk}/change/"
    viewer = _staff("medviewer", "payments.view_pixinfraction")
    assert "Responder a disputa" not in viewer.get(page_url).content.decode()
    crafted = viewer.post(
        f"/admin/payments/pixinfraction/{infraction.pk}/responder/",
        {"decision": "accept", "justification": "Não reconhecemos esta compra, devolver."},
    )
    assert crafted.status_code == 403 and "Sem permissão" in crafted.content.decode()
    assert not PixInfractionAnswer.objects.exists()
    answerer = _staff("fin", "payments.view_pixinfraction", "payments.change_pixinfraction")
    assert "Responder a disputa" in answerer.get(page_url).content.decode()


def test_nfe_reissue_action_is_offered_only_with_the_permission(paid_order: Order) -> None:  # noqa: F811
    assert FiscalDocument.objects.exists()  # the list shows its actions only above rows
    viewer = _staff("fiscalviewer", "fiscal.view_fiscaldocument")
    assert "reissue_action" not in viewer.get("/admin/fiscal/fiscaldocument/").content.decode()
    clerk = _staff("nfe", "fiscal.view_fiscaldocument", "orders.change_order")
    assert "reissue_action" in clerk.get("/admin/fiscal/fiscaldocument/").content.decode()


def test_a_label_pdf_needs_the_permission_to_see_orders() -> None:
    url = reverse("shop_label_pdf", args=["lbl_unknown"])
    refused = _staff("nobody").get(url)
    assert refused.status_code == 403 and "Sem permissão" in refused.content.decode()
    assert _staff("looker", "orders.view_order").get(url).status_code == 302  # allowed: "Etiqueta não encontrada."


def test_create_staff_groups_gives_a_small_shop_its_roles_idempotently(
    paid_order: Order,  # noqa: F811
) -> None:
    call_command("create_staff_groups")
    call_command("create_staff_groups")  # again: nothing doubled, nothing removed
    assert set(Group.objects.values_list("name", flat=True)) == {"Atendimento", "Expedição", "Financeiro"}
    people = {}
    for name in ("Atendimento", "Expedição", "Financeiro"):
        user = User.objects.create_user(name.lower(), password="pw-12345678", is_staff=True)
        user.groups.add(Group.objects.get(name=name))
        people[name] = Client()
        people[name].force_login(user)
    refund = f"/admin/orders/order/{paid_order.public_id}/action/refund/"
    form = {"amount": "10,00", "reason": "Frete", "known_refunds": "0"}
    assert people["Atendimento"].post(refund, form).status_code == 403
    assert people["Expedição"].post(refund, form).status_code == 403
    assert people["Atendimento"].get(f"/admin/orders/order/{paid_order.pk}/change/").status_code == 200
    assert people["Financeiro"].post(refund, form).status_code == 302
    assert Adjustment.objects.filter(order=paid_order, type="refund").count() == 1
    ship = f"/admin/orders/order/{paid_order.public_id}/action/ship/"
    assert people["Expedição"].get(ship).status_code == 200
    assert people["Financeiro"].get(ship).status_code == 403
