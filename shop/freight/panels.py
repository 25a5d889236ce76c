"""The label box on the admin's order page (`ORDERS_ADMIN_PANELS`), the views behind its buttons, the bulk
"Comprar etiqueta" action (`ORDERS_ADMIN_ACTIONS`) and the Melhor Envio webhook."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

import carriers
from carriers import WebhookRejected
from carriers.melhorenvio import parse_webhook
from kernel.br_validation import phone_display
from orders.models import Order
from shop.freight.labels import NO_CARRIER, FreightError, label_cancel, label_pdf, label_request
from shop.freight.tracking import tracking_from_webhook
from shop.models import ShippingLabel
from shop.store.services import store_row

logger = logging.getLogger(__name__)
MAX_WEBHOOK_BYTES = 64 * 1024


def admin_panel(request: HttpRequest, order: Order) -> str:
    if order.fulfillment_method != "shipping":
        return ""
    labels = list(ShippingLabel.objects.filter(order=order).order_by("-created_at", "-id")[:5])
    live = next((label for label in labels if label.status in ShippingLabel.LIVE), None)
    can = request.user.has_perm("orders.ship_order")
    return render_to_string(
        "shop/freight/admin_panel.html",
        {
            "labels": labels,
            "live": live,
            "configured": bool(settings.CARRIER),
            "can_buy": can and live is None and order.status != "canceled" and bool(settings.CARRIER),
            # A label whose tracking ended (delivered) is past cancelling; a returned one is not live any more.
            "can_cancel": can
            and live is not None
            and live.status == ShippingLabel.Status.PURCHASED
            and live.finished_at is None,
            # QA walk: an order cancelled after its label was bought kept the label, paid and unsaid.
            "canceled_with_label": order.status == "canceled"
            and live is not None
            and live.status == ShippingLabel.Status.PURCHASED
            and live.finished_at is None,
            "buy_url": reverse("shop_label_buy", args=[order.public_id]),
            "cancel_url": reverse("shop_label_cancel", args=[live.public_id]) if live else "",
            "pdf_url": reverse("shop_label_pdf", args=[live.public_id]) if live and live.status == "purchased" else "",
            "address_url": reverse("shop_address_label", args=[order.public_id]),
        },
    )


@staff_member_required
@require_GET
def address_label_view(request: HttpRequest, order_id: str) -> HttpResponse:
    """A page to print and tape on the parcel: recipient and sender, for an order sent without a bought label
    (the store's own courier, a motoboy, the Correios counter). QA walk: a new merchant with no carrier found
    nothing to print."""
    if not request.user.has_perm("orders.view_order"):
        raise PermissionDenied  # the buyer's name and address: for who may see the order
    order = Order.objects.filter(public_id=order_id, fulfillment_method="shipping").first()
    if order is None:
        messages.error(request, _("Pedido não encontrado."))
        return HttpResponseRedirect(reverse("admin:orders_order_changelist"))
    lines = [line for line in order.lines.all() if line.quantity_total > 0]
    return render(
        request,
        "shop/freight/address_label.html",
        {
            "order": order,
            "to": order.destination or {},
            "phone": phone_display(order.buyer_phone),
            "sender": store_row(),
            "lines": lines,
        },
    )


def _back(order: Order) -> HttpResponseRedirect:
    return HttpResponseRedirect(reverse("admin:orders_order_change", args=[order.pk]))


@staff_member_required
@require_POST
def buy_view(request: HttpRequest, order_id: str) -> HttpResponse:
    if not request.user.has_perm("orders.ship_order"):
        return HttpResponseForbidden(_("Sem permissão para comprar etiquetas."))
    order = Order.objects.filter(public_id=order_id).first()
    if order is None:
        messages.error(request, _("Pedido não encontrado."))
        return HttpResponseRedirect(reverse("admin:orders_order_changelist"))
    try:
        label = label_request(order_id=order_id, actor=request.user.get_username())
    except FreightError as error:
        messages.error(request, error.message)
        return _back(order)
    label.refresh_from_db()
    if label.status == ShippingLabel.Status.FAILED:
        messages.error(request, _("Etiqueta não comprada: %(reason)s") % {"reason": label.last_error})
    elif label.status == ShippingLabel.Status.PURCHASED:
        messages.success(request, _("Etiqueta comprada."))
    else:
        messages.success(request, _("Compra da etiqueta solicitada: ela aparece aqui em instantes."))
    return _back(order)


@staff_member_required
@require_http_methods(["GET", "POST"])
def cancel_view(request: HttpRequest, label_id: str) -> HttpResponse:
    """GET asks first, like Django's delete (QA walk: one click cancelled a bought label); the confirmation's POST
    cancels. A POST without it (the order page's button of an older page) asks too."""
    if not request.user.has_perm("orders.ship_order"):
        return HttpResponseForbidden(_("Sem permissão para cancelar etiquetas."))
    label = ShippingLabel.objects.select_related("order").filter(public_id=label_id).first()
    if label is None:
        messages.error(request, _("Etiqueta não encontrada."))
        return HttpResponseRedirect(reverse("admin:orders_order_changelist"))
    if request.method == "GET" or request.POST.get("post") != "yes":
        context = {
            **admin.site.each_context(request),
            "title": _("Cancelar etiqueta"),
            "label": label,
            "back_url": reverse("admin:orders_order_change", args=[label.order.pk]),
        }
        return render(request, "shop/freight/label_cancel_confirmation.html", context)
    try:
        label_cancel(label_id=label_id, actor=request.user.get_username())
    except FreightError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, _("Etiqueta cancelada."))
    return _back(label.order)


@staff_member_required
@require_GET
def pdf_view(request: HttpRequest, label_id: str) -> HttpResponse:
    if not request.user.has_perm("orders.view_order"):
        raise PermissionDenied  # the label carries the buyer's name and address: for who may see the order
    label = ShippingLabel.objects.select_related("order").filter(public_id=label_id).first()
    if label is None:
        messages.error(request, _("Etiqueta não encontrada."))
        return HttpResponseRedirect(reverse("admin:orders_order_changelist"))
    try:
        pdf = label_pdf(label_id=label_id)
    except FreightError as error:
        messages.error(request, error.message)
        return _back(label.order)
    response = HttpResponse(pdf, content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="etiqueta-{label.order.number}.pdf"'
    return response


@admin.action(description=gettext_lazy("Comprar etiqueta de envio"), permissions=["ship"])
def buy_labels_action(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Order]) -> None:
    """Per order: refused here, refused by the carrier (with its reason, at error level), bought, or still being
    bought by a worker (then a refusal shows on the order page and under the "Etiqueta: não comprada" filter)."""
    if carriers.configured() is None:
        modeladmin.message_user(request, NO_CARRIER, messages.ERROR)  # once, not once per order selected
        return
    bought = asked = 0
    for order in queryset.order_by("pk"):
        try:
            label = label_request(order_id=order.public_id, actor=request.user.get_username())
        except FreightError as error:
            modeladmin.message_user(request, f"#{order.number}: {error.message}", messages.ERROR)
            continue
        label.refresh_from_db()  # with no broker the purchase already ran after label_request's commit
        if label.status == ShippingLabel.Status.FAILED:
            refused = _("#%(number)s: etiqueta não comprada: %(reason)s")
            modeladmin.message_user(request, refused % {"number": order.number, "reason": label.last_error},
                                    messages.ERROR)  # fmt: skip
        elif label.status == ShippingLabel.Status.PURCHASED:
            bought += 1
        else:
            asked += 1
    if bought:
        bought_text = ngettext("Etiqueta comprada para %(n)d pedido.", "Etiqueta comprada para %(n)d pedidos.", bought)
        modeladmin.message_user(request, bought_text % {"n": bought}, messages.SUCCESS)
    if asked:
        # Bought by a worker after this answer: where to look if the carrier refuses (not a green "done").
        asked_text = ngettext(
            "Etiqueta solicitada para %(n)d pedido: a compra segue na transportadora.",
            "Etiqueta solicitada para %(n)d pedidos: a compra segue na transportadora.",
            asked,
        ) % {"n": asked}
        failed_url = reverse("admin:orders_order_changelist") + "?label=failed"
        asked_html = format_html('{} <a href="{}">{}</a>', asked_text, failed_url, _("Ver etiquetas não compradas"))
        modeladmin.message_user(request, asked_html, messages.INFO)


class LabelFailedFilter(admin.SimpleListFilter):
    """Orders whose latest label the carrier refused (no balance, service gone, …) and that still need one: a
    purchase run by a worker fails after the action's answer, so it is found here (`ORDERS_ADMIN_LIST_FILTERS`)."""

    title = gettext_lazy("etiqueta")
    parameter_name = "label"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("failed", _("Etiqueta não comprada"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Order]) -> QuerySet[Order]:
        if self.value() != "failed":
            return queryset
        latest = ShippingLabel.objects.filter(order=OuterRef("pk")).order_by("-created_at", "-id").values("status")
        return (
            queryset.annotate(_label_status=Subquery(latest[:1]))
            .filter(_label_status=ShippingLabel.Status.FAILED)
            .exclude(status="canceled")
        )


@csrf_exempt
@require_POST
def melhorenvio_webhook(request: HttpRequest) -> HttpResponse:
    """Melhor Envio's label events (https://docs.melhorenvio.com.br/docs/webhooks), signed with the app secret."""
    body = request.body[: MAX_WEBHOOK_BYTES + 1]
    if len(body) > MAX_WEBHOOK_BYTES:
        return JsonResponse({"error": "payload too large"}, status=413)
    if not settings.MELHOR_ENVIO_CLIENT_SECRET:
        return JsonResponse({"error": "webhook not configured"}, status=503)
    try:
        events = parse_webhook(
            secret=settings.MELHOR_ENVIO_CLIENT_SECRET, headers=dict(request.headers.items()), body=body
        )
    except WebhookRejected as exc:
        logger.warning("Melhor Envio webhook refused: %s", exc)
        return JsonResponse({"error": str(exc)}, status=401)
    created = tracking_from_webhook(events=events)
    return JsonResponse({"received": True, "events": created})
