"""The NF-e list with the shop's re-issue action (fiscal's own admin cannot build an invoice: it imports nothing
of ours), and a link from each note to its order."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from fiscal.admin import FiscalDocumentAdmin
from fiscal.models import FiscalDocument
from fiscal.services import JUSTIFICATION_MAX, CancelReissueRefused
from kernel.admin_actions import RefusedActionMessage
from orders.errors import OrderNotFound
from orders.models import Order
from shop.invoicing.lifecycle import fiscal_cancel_and_reissue, fiscal_reissue
from shop.invoicing.panels import ISSUE_PERMISSION


class ShopFiscalDocumentAdmin(RefusedActionMessage, FiscalDocumentAdmin):
    # The order's number, linked: its public id beside it was a second "Pedido" column of code (QA walk). Not the
    # first column: Django wraps that one in the NF-e's own link, and a link inside a link opens neither.
    list_display = ("document_label", "order_link", *FiscalDocumentAdmin.list_display[2:])
    fields = tuple("order_link" if name == "order_label" else name for name in FiscalDocumentAdmin.fields)
    readonly_fields = fields
    actions = ["reissue_action", "cancel_reissue_action"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[FiscalDocument]:
        # The order's admin key in the same query (no query per row).
        orders = Order.objects.filter(public_id=OuterRef("order_ref")).values("pk")[:1]
        return super().get_queryset(request).annotate(order_pk=Subquery(orders))

    @admin.display(description=_("pedido"), ordering="order_number")
    def order_link(self, document: FiscalDocument) -> str:
        pk = getattr(document, "order_pk", None)
        label = f"#{document.order_number}" if document.order_number else document.order_ref
        if pk is None:
            return label
        return format_html('<a href="{}">{}</a>', reverse("admin:orders_order_change", args=[pk]), label)

    def has_reissue_permission(self, request: HttpRequest) -> bool:
        # The same permission as the order page's "Emitir NF-e" button (shop.invoicing.panels).
        return request.user.has_perm(ISSUE_PERMISSION)

    @admin.action(
        description=_("Emitir novamente as NF-e selecionadas (rejeitadas ou bloqueadas)"), permissions=["reissue"]
    )
    def reissue_action(self, request: HttpRequest, queryset: QuerySet[FiscalDocument]) -> None:
        requested, skipped = 0, 0
        actor = request.user.get_username()
        for order_ref, number in queryset.order_by("id").values_list("order_ref", "order_number"):
            try:
                document = fiscal_reissue(order_id=order_ref, actor=actor)
            except OrderNotFound:
                skipped += 1
                continue
            if document.status == FiscalDocument.Status.PENDING:
                requested += 1
            elif document.status == FiscalDocument.Status.REJECTED:
                self.message_user(
                    request, _("#%(n)s: NF-e não emitida. %(reason)s") % {"n": number, "reason": document.sefaz_reason},
                    messages.WARNING,
                )  # fmt: skip
            else:
                skipped += 1  # authorized, cancelled or already in flight: nothing to re-issue
        if requested:
            self.message_user(request, _("Emissão solicitada para %(n)d NF-e.") % {"n": requested}, messages.SUCCESS)
        if skipped:
            self.message_user(
                request,
                ngettext(
                    "%(n)d NF-e já autorizada, cancelada ou em emissão: nada a fazer.",
                    "%(n)d NF-e já autorizadas, canceladas ou em emissão: nada a fazer.",
                    skipped,
                )
                % {"n": skipped},
                messages.INFO,
            )

    def has_cancel_reissue_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(ISSUE_PERMISSION)  # the order page's "Cancelar e reemitir" asks the same

    @admin.action(
        description=_("Cancelar e reemitir com os dados corrigidos (até 24 h após a autorização)"),
        permissions=["cancel_reissue"],
    )
    def cancel_reissue_action(
        self, request: HttpRequest, queryset: QuerySet[FiscalDocument]
    ) -> TemplateResponse | None:
        """First the page that asks the justification (the SEFAZ's xJust, 15–255 characters), then, posted from it,
        one cancel-and-reissue per selected authorized note (the order's corrected data go on the new one)."""
        documents = list(queryset.order_by("id"))
        if "nfe_justificativa" not in request.POST:
            context = {
                **self.admin_site.each_context(request),
                "title": gettext("Cancelar e reemitir NF-e"),
                "opts": self.model._meta,
                "documents": documents,
                "justification_max": JUSTIFICATION_MAX,
            }
            return TemplateResponse(request, "admin/fiscal/fiscaldocument/cancel_reissue.html", context)
        requested = 0
        for document in documents:
            label = document.order_number or document.order_ref
            if document.status != FiscalDocument.Status.AUTHORIZED:  # a cancelled, pending or rejected note
                self.message_user(
                    request, gettext("#%(n)s: NF-e nº %(number)s %(status)s, não autorizada: nada a cancelar.")
                    % {"n": label, "number": document.number or "—", "status": document.status_text().lower()},
                    messages.WARNING,
                )  # fmt: skip
                continue
            try:
                fiscal_cancel_and_reissue(
                    order_id=document.order_ref, justification=request.POST["nfe_justificativa"],
                    actor=request.user.get_username(),
                )  # fmt: skip
            except (CancelReissueRefused, OrderNotFound) as exc:
                reason = str(exc) if isinstance(exc, CancelReissueRefused) else gettext("Pedido não encontrado.")
                self.message_user(request, f"#{label}: {reason}", messages.ERROR)
                continue
            requested += 1
        if requested:
            self.message_user(
                request,
                ngettext(
                    "Cancelamento solicitado para %(n)d NF-e; a nova nota, com os dados atuais do pedido, é emitida "
                    "assim que o cancelamento for confirmado.",
                    "Cancelamento solicitado para %(n)d NF-e; as novas notas, com os dados atuais dos pedidos, são "
                    "emitidas assim que cada cancelamento for confirmado.",
                    requested,
                )
                % {"n": requested},
                messages.SUCCESS,
            )
        return None


admin.site.unregister(FiscalDocument)
admin.site.register(FiscalDocument, ShopFiscalDocumentAdmin)
