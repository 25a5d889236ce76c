"""The boleto refunds list with the order and the buyer to contact (payments' own admin imports nothing of ours):
a boleto is refunded by a transfer staff make, so they must reach the buyer for a Pix key or bank account. The MED
disputes name their order by its number ("ver o pedido" alone did not say which sale was contested)."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from kernel.br_validation import phone_display
from orders.models import Order
from payments.admin import BoletoRefundAdmin, PixInfractionAdmin
from payments.med.models import PixInfraction
from payments.models import BoletoRefund


class ShopBoletoRefundAdmin(BoletoRefundAdmin):
    list_display = ("refund_id", "order_link", "buyer_name", *BoletoRefundAdmin.list_display[2:])
    fields = ("refund_id", "order_link", "buyer_name", "buyer_email", "buyer_phone",
              *BoletoRefundAdmin.fields[2:])  # fmt: skip
    readonly_fields = ("order_link", "buyer_name", "buyer_email", "buyer_phone", *BoletoRefundAdmin.readonly_fields)

    def get_queryset(self, request: HttpRequest) -> QuerySet[BoletoRefund]:
        # The order of each refund (its `reference` is the order's checkout) in the same query: no query per row.
        order = Order.objects.filter(checkout_id=OuterRef("reference"))
        return (
            super()
            .get_queryset(request)
            .annotate(
                order_pk=Subquery(order.values("pk")[:1]),
                order_number=Subquery(order.values("number")[:1]),
                order_first_name=Subquery(order.values("buyer_first_name")[:1]),
                order_last_name=Subquery(order.values("buyer_last_name")[:1]),
                order_email=Subquery(order.values("buyer_email")[:1]),
                order_phone=Subquery(order.values("buyer_phone")[:1]),
            )
        )

    @admin.display(description=_("pedido"), ordering="order_number")
    def order_link(self, refund: BoletoRefund) -> str:
        pk = getattr(refund, "order_pk", None)
        if pk is None:
            return refund.reference
        url = reverse("admin:orders_order_change", args=[pk])
        return format_html('<a href="{}">#{}</a>', url, getattr(refund, "order_number", ""))

    @admin.display(description=_("comprador"))
    def buyer_name(self, refund: BoletoRefund) -> str:
        name = f"{getattr(refund, 'order_first_name', '') or ''} {getattr(refund, 'order_last_name', '') or ''}"
        return name.strip() or "—"

    @admin.display(description=_("e-mail do comprador"))
    def buyer_email(self, refund: BoletoRefund) -> str:
        email = getattr(refund, "order_email", "") or ""
        return format_html('<a href="mailto:{}">{}</a>', email, email) if email else "—"

    @admin.display(description=_("telefone do comprador"))
    def buyer_phone(self, refund: BoletoRefund) -> str:
        phone = getattr(refund, "order_phone", "") or ""
        return phone_display(phone) if phone else "—"


admin.site.unregister(BoletoRefund)
admin.site.register(BoletoRefund, ShopBoletoRefundAdmin)


class ShopPixInfractionAdmin(PixInfractionAdmin):
    """The MED dispute's order named by its number, linked to its page (payments stores only the checkout id)."""

    def get_queryset(self, request: HttpRequest) -> QuerySet[PixInfraction]:
        # The order of each dispute (its `reference` is the order's checkout) in the same query: no query per row.
        order = Order.objects.filter(checkout_id=OuterRef("reference"))
        return (
            super()
            .get_queryset(request)
            .annotate(order_pk=Subquery(order.values("pk")[:1]), order_number=Subquery(order.values("number")[:1]))
        )

    def order_link_html(self, infraction: PixInfraction) -> str:
        if hasattr(infraction, "order_pk"):
            pk, number = getattr(infraction, "order_pk", None), getattr(infraction, "order_number", None)
        else:  # the answer page reads the dispute alone: one query for its order
            found = Order.objects.filter(checkout_id=infraction.reference).values_list("pk", "number").first()
            pk, number = found if found else (None, None)
        if pk is None or not infraction.reference:
            return super().order_link_html(infraction)  # no order (yet): the list searched for the checkout
        url = reverse("admin:orders_order_change", args=[pk])
        return format_html('<a href="{}">{}</a>', url, _("ver o pedido #%(number)s") % {"number": number})


admin.site.unregister(PixInfraction)
admin.site.register(PixInfraction, ShopPixInfractionAdmin)
