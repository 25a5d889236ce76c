"""Staff who are not superusers (QA walk h40staff): what changes money, a subscription or an NF-e is neither offered
nor done for an account without its permission; the project's groups give a small shop sensible roles."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group, Permission, User
from django.core.management import call_command
from django.test import Client, RequestFactory
from django.urls import reverse

from bcp_app.models import WebhookDelivery
from bcp_app.service.platforms import platform_create
from fiscal.models import FiscalDocument, FiscalJob
from orders.models import Adjustment, Order, OrderEvent
from payments.med.models import PixInfraction, PixInfractionAnswer
from shop.admin.subscriptions import event_detail_text
from shop.models import Checkout, Product, Subscription, SubscriptionEvent
from shop.subscriptions.services import subscription_create
from tests.shop.checkout_factories import make_variant
from tests.shop.test_admin_subscription_words import ADDRESS, cancelled  # noqa: F401  (the fixture: a plan and a subscription)
from tests.shop.test_fiscal_lifecycle import fiscal_store  # noqa: F401  (the fixture: a store that issues NF-e)
from tests.shop.test_fiscal_lifecycle import paid_order as fiscal_paid_order
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
    clerk.post(
        "/admin/shop/subscription/", {"action": "cancel_selected", "_selected_action": [active.pk], "post": "yes"}
    )
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
    clerk = _staff("nfe", "fiscal.view_fiscaldocument", "fiscal.issue_fiscaldocument")
    assert "reissue_action" in clerk.get("/admin/fiscal/fiscaldocument/").content.decode()


def test_issuing_an_nfe_needs_the_nfe_permission_not_the_order_one(fiscal_store: None) -> None:  # noqa: F811
    """Changing an order (notes, e-mails, the CPF) does not issue an NF-e: the button is not shown, its POST gets
    the Portuguese "Sem permissão" page and the bulk action is refused in words; nothing is requested."""
    order = fiscal_paid_order(ncm="")  # blocked: the product has no NCM
    Product.objects.update(ncm="09012100")  # fixed: a re-issue would now go out
    document = FiscalDocument.objects.get(order_ref=order.public_id)
    clerk = _staff("atend", "orders.view_order", "orders.change_order", "fiscal.view_fiscaldocument")
    page = clerk.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert 'data-testid="admin-fiscal"' in page and 'data-testid="fiscal-reissue"' not in page
    refused = clerk.post(f"/admin/fiscal/{order.public_id}/reissue/")
    assert refused.status_code == 403
    assert "Sem permissão" in refused.content.decode() and "nada foi alterado" in refused.content.decode()
    crafted = clerk.post(
        "/admin/fiscal/fiscaldocument/", {"action": "reissue_action", "_selected_action": [document.pk]}, follow=True
    )
    assert _messages(crafted) == [REFUSED.format("Emitir novamente as NF-e selecionadas (rejeitadas ou bloqueadas)")]
    assert FiscalDocument.objects.get(pk=document.pk).attempt == document.attempt  # nothing requested
    assert not OrderEvent.objects.filter(order=order).exclude(actor="").exists()

    fiscal = _staff("fiscal", "orders.view_order", "fiscal.view_fiscaldocument", "fiscal.issue_fiscaldocument")
    assert 'data-testid="fiscal-reissue"' in fiscal.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert fiscal.post(f"/admin/fiscal/{order.public_id}/reissue/").status_code == 302
    assert OrderEvent.objects.filter(order=order, kind="fiscal_requested", actor="fiscal").exists()
    assert str(Permission.objects.get(codename="issue_fiscaldocument").name) == NFE_PERMISSION


NFE_PERMISSION = "Pode emitir, cancelar e reemitir NF-e"


def test_an_existing_nfe_permission_row_is_renamed_for_cancel_and_reissue() -> None:
    """Django names a permission once, when it creates the row: a shop migrated before cancel-and-reissue kept
    "Pode emitir e emitir novamente NF-e" on its groups' page until fiscal 0009 renames it."""
    from importlib import import_module

    from django.apps import apps

    Permission.objects.filter(codename="issue_fiscaldocument").update(name="Pode emitir e emitir novamente NF-e")
    import_module("fiscal.migrations.0009_nfe_permission_names_cancel").rename_permission(apps, None)
    assert Permission.objects.get(codename="issue_fiscaldocument").name == NFE_PERMISSION


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
    form = {"amount": "10,00", "reason": "Frete", "known_refunds": "0", "confirm": "on"}
    assert people["Atendimento"].post(refund, form).status_code == 403
    assert people["Expedição"].post(refund, form).status_code == 403
    assert people["Atendimento"].get(f"/admin/orders/order/{paid_order.pk}/change/").status_code == 200
    assert people["Financeiro"].post(refund, form).status_code == 302
    assert Adjustment.objects.filter(order=paid_order, type="refund").count() == 1
    ship = f"/admin/orders/order/{paid_order.public_id}/action/ship/"
    assert people["Expedição"].get(ship).status_code == 200
    assert people["Financeiro"].get(ship).status_code == 403
    # issuing an NF-e by hand is Financeiro's, not Atendimento's (which changes orders: notes, e-mails, the CPF)
    reissue = f"/admin/fiscal/{paid_order.public_id}/reissue/"
    assert people["Atendimento"].post(reissue).status_code == 403
    assert people["Expedição"].post(reissue).status_code == 403
    assert people["Financeiro"].post(reissue).status_code == 302


def test_an_nfe_reissue_names_the_staff_member_on_the_timeline(fiscal_store: None) -> None:  # noqa: F811
    order = fiscal_paid_order(ncm="")  # blocked: the product has no NCM
    clerk = _staff("nfe", "orders.view_order", "fiscal.issue_fiscaldocument", "fiscal.view_fiscaldocument")
    User.objects.filter(username="nfe").update(first_name="Nara", last_name="Fonseca")
    document = FiscalDocument.objects.get(order_ref=order.public_id)
    # the NF-e list's bulk action, before the fix: blocked again, and who asked is on the timeline
    clerk.post("/admin/fiscal/fiscaldocument/", {"action": "reissue_action", "_selected_action": [document.pk]})
    Product.objects.update(ncm="09012100")
    # the order page's "Emitir novamente", after the fix
    assert clerk.post(f"/admin/fiscal/{order.public_id}/reissue/").status_code == 302
    events = OrderEvent.objects.filter(order=order, kind__startswith="fiscal_").order_by("id")
    assert list(events.values_list("kind", "actor")) == [
        ("fiscal_blocked", ""),  # the placement's own request: nobody's
        ("fiscal_blocked", "nfe"),
        ("fiscal_requested", "nfe"),
    ]
    page = clerk.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert page.count('<td class="field-actor_label"><p>Nara Fonseca</p></td>') == 2


REFUSED = "Você não tem permissão para a ação “{}”. Nada foi alterado."


def test_a_crafted_subscription_action_without_the_permission_says_so(cancelled: Subscription) -> None:  # noqa: F811
    active = subscription_create(
        plan_id=cancelled.plan.public_id, buyer_name="Bia Lima", buyer_tax_id="390.533.447-05",
        buyer_email="bia@example.com.br", starts_on=cancelled.starts_on, destination=ADDRESS,
    )  # fmt: skip
    viewer = _staff("subviewer", "shop.view_subscription")
    crafted = viewer.post(
        "/admin/shop/subscription/",
        {"action": "cancel_selected", "_selected_action": [active.pk], "index": "0"},
        follow=True,
    )
    assert _messages(crafted) == [REFUSED.format("Cancelar as assinaturas selecionadas")]
    active.refresh_from_db()
    assert active.status == "pending_authorization"
    # an action the list does not have at all is still Django's own answer
    unknown = viewer.post("/admin/shop/subscription/", {"action": "nada", "_selected_action": [active.pk]}, follow=True)
    assert not any("permissão" in message for message in _messages(unknown))


def test_a_crafted_order_or_nfe_action_without_the_permission_says_so(paid_order: Order) -> None:  # noqa: F811
    viewer = _staff("looker", "orders.view_order", "fiscal.view_fiscaldocument")
    crafted = viewer.post(
        "/admin/orders/order/",
        {"action": "mark_delivered_action", "_selected_action": [paid_order.pk], "index": "0"},
        follow=True,
    )
    assert _messages(crafted) == [REFUSED.format("Marcar como entregue (tudo o que foi enviado)")]
    document = FiscalDocument.objects.get()
    crafted = viewer.post(
        "/admin/fiscal/fiscaldocument/", {"action": "reissue_action", "_selected_action": [document.pk]}, follow=True
    )
    assert _messages(crafted) == [REFUSED.format("Emitir novamente as NF-e selecionadas (rejeitadas ou bloqueadas)")]
    assert FiscalDocument.objects.get().attempt == document.attempt
    assert not OrderEvent.objects.filter(order=paid_order).exclude(actor="").exists()


def test_bulk_actions_that_change_catalogue_checkouts_or_platforms_need_more_than_viewing(
    admin_client: Client,
) -> None:
    """QA (h40st2): activating products, cancelling checkouts, revoking a platform's API key and re-sending webhooks
    were open to any staff member who could open the list."""
    product = make_variant().product
    Product.objects.filter(pk=product.pk).update(active=False)
    platform = platform_create(name="Agente", profile_url="https://agente.example.com/perfil.json").platform
    delivery = WebhookDelivery.objects.create(
        order_id="ord_x", platform_id=platform.public_id, url="https://agente.example.com/h", event="placed",
        body="{}", status="failed",
    )  # fmt: skip
    viewer = _staff(
        "olhar", "shop.view_product", "shop.view_checkout", "bcp_app.view_platform", "bcp_app.view_webhookdelivery"
    )
    cases = [
        ("/admin/shop/product/", "make_active", product.pk, "Ativar produtos selecionados"),
        ("/admin/bcp_app/platform/", "revoke", platform.pk, "Revogar a chave de API das plataformas selecionadas"),
        ("/admin/bcp_app/webhookdelivery/", "retry_now", delivery.pk, "Tentar entregar de novo agora"),
    ]
    for url, action, pk, description in cases:
        assert f'value="{action}"' not in viewer.get(url).content.decode()  # not offered
        crafted = viewer.post(url, {"action": action, "_selected_action": [pk]}, follow=True)
        assert f"Você não tem permissão para a ação “{description}" in " ".join(_messages(crafted))
        assert f'value="{action}"' in admin_client.get(url).content.decode()  # offered to who may
    product.refresh_from_db()
    platform.refresh_from_db()
    delivery.refresh_from_db()
    assert (product.active, platform.active, delivery.status) == (False, True, "failed")  # nothing changed
    # The checkout list shows no action form while it is empty: ask its admin what each person is offered.
    checkout_admin = admin.site._registry[Checkout]
    request = RequestFactory().get("/admin/shop/checkout/")
    request.user = User.objects.get(username="olhar")
    assert "cancel_checkouts" not in checkout_admin.get_actions(request)
    request.user = User.objects.filter(is_superuser=True).first()
    assert "cancel_checkouts" in checkout_admin.get_actions(request)


@pytest.mark.parametrize(
    ("path", "field", "text", "action", "event"),
    [
        ("cancel-reissue", "nfe_justificativa", "CPF do destinatário informado errado", "cancel",
         "fiscal_cancel_requested"),
        ("correction", "nfe_correcao", "Onde se lê transportadora Rápida, leia-se transportadora Veloz Ltda.",
         "correct", "fiscal_correction_requested"),
    ],
)  # fmt: skip
def test_an_nfe_action_needs_the_nfe_permission(
    client: Client,
    fiscal_store: None,  # noqa: F811
    path: str,
    field: str,
    text: str,
    action: str,
    event: str,
) -> None:
    """Cancelling an authorized note spends a number at the SEFAZ like issuing one, and a carta de correção is a
    fiscal event there too: only staff with the NF-e permission see their fields, and a crafted POST of anyone else
    changes nothing."""
    from fiscal.services import job_run

    order = fiscal_paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    url = f"/admin/fiscal/{order.public_id}/{path}/"
    form = {field: text}
    assert "/admin/login/" in client.post(url, form)["Location"]  # not staff: the login page
    clerk = _staff("atend", "orders.view_order", "orders.change_order", "fiscal.view_fiscaldocument")
    page = clerk.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert 'data-testid="admin-fiscal"' in page and f'name="{field}"' not in page
    refused = clerk.post(url, form)
    assert refused.status_code == 403 and "Sem permissão" in refused.content.decode()
    assert not FiscalJob.objects.filter(action=action).exists()

    fiscal = _staff("fiscal", "orders.view_order", "fiscal.view_fiscaldocument", "fiscal.issue_fiscaldocument")
    assert f'name="{field}"' in fiscal.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert fiscal.post(url, form).status_code == 302
    assert FiscalJob.objects.filter(action=action).count() == 1
    assert OrderEvent.objects.filter(order=order, kind=event, actor="fiscal").exists()


def test_the_nfe_de_devolucao_needs_the_nfe_permission(
    client: Client,
    fiscal_store: None,  # noqa: F811
    django_capture_on_commit_callbacks: Any,
    settings: Any,
) -> None:
    """An NF-e de devolução spends a number at the SEFAZ like the sale's note: only staff with the NF-e permission
    see its button on the order page, and a crafted POST of anyone else changes nothing."""
    from fiscal.services import job_run
    from tests.shop.test_fiscal_pages import _received_return

    order = fiscal_paid_order()
    job_run(job_id=FiscalJob.objects.get().pk)
    settings.FISCAL_ISSUE_ON = "off"  # the button issues it (a shop issuing its notes asks it on the receipt itself)
    request = _received_return(order, django_capture_on_commit_callbacks)
    url = f"/admin/fiscal/{order.public_id}/return-note/"
    form = {"nfe_devolucao": request.public_id}
    assert "/admin/login/" in client.post(url, form)["Location"]  # not staff: the login page
    clerk = _staff("atend", "orders.view_order", "orders.change_order", "fiscal.view_fiscaldocument")
    page = clerk.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert 'data-testid="fiscal-return-notes"' in page and 'name="nfe_devolucao"' not in page
    refused = clerk.post(url, form)
    assert refused.status_code == 403 and "Sem permissão" in refused.content.decode()
    assert not FiscalJob.objects.filter(action="return").exists()

    fiscal = _staff("fiscal", "orders.view_order", "fiscal.view_fiscaldocument", "fiscal.issue_fiscaldocument")
    assert 'name="nfe_devolucao"' in fiscal.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert fiscal.post(url, form).status_code == 302
    assert FiscalJob.objects.filter(action="return").count() == 1
    assert OrderEvent.objects.filter(order=order, kind="fiscal_return_note_requested", actor="fiscal").exists()
    # The Financeiro group reads the NF-e de devolução list (the accountant's month); Atendimento does not.
    call_command("create_staff_groups", verbosity=0)
    for group, status in (("Financeiro", 200), ("Atendimento", 403)):
        member = User.objects.create_user(f"m-{group}", is_staff=True)
        member.groups.add(Group.objects.get(name=group))
        browser = Client()
        browser.force_login(member)
        assert browser.get("/admin/fiscal/fiscalreturnnote/").status_code == status
