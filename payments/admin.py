"""Back-office views of payments: read-only money, no deletes (history is evidence)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from kernel.admin_actions import ReadOnlyAdmin
from kernel.money import format_brl
from payments.boleto.service import boleto_refund_mark_transferred
from payments.exceptions import PaymentInputError
from payments.med.models import psp_status_words, situation_words
from payments.med.selectors import disputes_in_progress, infraction_money
from payments.med.services import infraction_answer
from payments.models import (
    BoletoPayment,
    BoletoRefund,
    CardPayment,
    CardRefund,
    CardWebhookEvent,
    PaymentEvent,
    PixCharge,
    PixInfraction,
    PixInfractionAnswer,
    PixPayment,
    PixRecurrenceWebhookEvent,
    PixRecurringCharge,
    PixRecurringChargeWebhookEvent,
    PixRefund,
    PixWebhookEvent,
)

# Words for the raw codes the rows keep (the gateway's and our own), so staff never read "paid/captured".
STATUS_REASONS = {
    "replaced": _("substituída por um Pix novo"),
    "canceled": _("cancelada"),
    "amount_mismatch": _("valor pago diferente do cobrado"),
    "expired": _("expirada"),
}
GATEWAY_WORDS = {
    "paid": _("paga"),
    "captured": _("capturada"),
    "authorized_pending_capture": _("autorizada, aguardando captura"),
    "not_authorized": _("não autorizada"),
    "pending": _("pendente"),
    "processing": _("em processamento"),
    "failed": _("falhou"),
    "refunded": _("estornada"),
    "canceled": _("cancelada"),
    "voided": _("cancelada"),
    "with_error": _("com erro"),
}
HANDLER_WORDS = {"gpay": _("Cartão (Google Pay / tokenizado)")}


def gateway_words(value: str) -> str:
    """ "paid/captured" → "paga / capturada"; an unknown code stays as it came (with a return code after it)."""
    if not value:
        return "—"
    head, _sep, code = value.partition(" ")
    words = " / ".join(str(GATEWAY_WORDS.get(part, part)) for part in head.split("/"))
    return f"{words} ({code})" if code else words


class StatusReasonFilter(admin.SimpleListFilter):
    title = _("motivo da situação")
    parameter_name = "status_reason"

    def lookups(self, request: HttpRequest, model_admin: object) -> list[tuple[str, str]]:
        return [(code, str(label)) for code, label in STATUS_REASONS.items()]

    def queryset(self, request: HttpRequest, queryset):  # type: ignore[no-untyped-def]
        return queryset.filter(status_reason=self.value()) if self.value() else queryset


class HandlerFilter(admin.SimpleListFilter):
    title = _("meio de pagamento")
    parameter_name = "handler_id"

    def lookups(self, request: HttpRequest, model_admin: object) -> list[tuple[str, str]]:
        handlers = CardPayment.objects.order_by().values_list("handler_id", flat=True).distinct()
        return [(h, str(HANDLER_WORDS.get(h, h))) for h in handlers]

    def queryset(self, request: HttpRequest, queryset):  # type: ignore[no-untyped-def]
        return queryset.filter(handler_id=self.value()) if self.value() else queryset


class MoneyColumns:
    """Money in reais on the list and on the row's own page. QA walk: the pages of a boleto, a Pix charge, a Pix
    received or refunded showed "Valor: 18280" (the centavos column as it is stored). On the row's page each model
    field named in `money_displays` is shown by its display method instead, in the field's place."""

    money_displays: dict[str, str] = {
        "amount": "amount_brl",
        "paid_amount": "paid_amount_brl",
        "refunded_amount": "refunded_amount_brl",
    }

    @admin.display(description=_("valor"), ordering="amount")
    def amount_brl(self, obj: object) -> str:
        return format_brl(getattr(obj, "amount", None)) or "—"

    @admin.display(description=_("valor pago"))
    def paid_amount_brl(self, obj: object) -> str:
        return format_brl(getattr(obj, "paid_amount", None)) or "—"

    @admin.display(description=_("valor devolvido"))
    def refunded_amount_brl(self, obj: object) -> str:
        return format_brl(getattr(obj, "refunded_amount", None)) or "—"

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        shown = list(super().get_readonly_fields(request, obj))  # type: ignore[misc]
        return [*shown, *(name for name in self.money_displays.values() if name not in shown)]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields: list[Any] = []
        for name in super().get_fields(request, obj):  # type: ignore[misc]
            name = self.money_displays.get(name, name) if isinstance(name, str) else name
            if name not in fields:
                fields.append(name)
        # Only the displays of fields the page has (a model without `paid_amount` shows no "valor pago").
        model_fields = getattr(self, "model")._meta.fields  # noqa: B009 (the ModelAdmin's, not this mixin's)
        unused = set(self.money_displays.values()) - {self.money_displays.get(f.name, "") for f in model_fields}
        return [name for name in fields if name not in unused]


class PixPaymentInline(admin.TabularInline):
    model = PixPayment
    extra = 0
    can_delete = False
    fields = ("end_to_end_id", "amount_brl", "paid_at", "outcome", "source")
    readonly_fields = fields

    @admin.display(description=_("valor"))
    def amount_brl(self, obj: PixPayment) -> str:
        return format_brl(obj.amount) or "—"

    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: object | None = None) -> bool:
        return False


@admin.register(PixCharge)
class PixChargeAdmin(MoneyColumns, ReadOnlyAdmin):
    list_display = (
        "txid",
        "reference",
        "kind",
        "amount_brl",
        "status",
        "status_reason_words",
        "due_date",
        "expires_at",
        "paid_at",
        "created_at",
    )
    list_filter = ("status", "kind", StatusReasonFilter)
    search_fields = ("txid", "reference", "end_to_end_id")
    date_hierarchy = "created_at"
    inlines = [PixPaymentInline]

    @admin.display(description=_("motivo da situação"), ordering="status_reason")
    def status_reason_words(self, obj: PixCharge) -> str:
        return str(STATUS_REASONS.get(obj.status_reason, obj.status_reason)) if obj.status_reason else "—"


@admin.register(PixPayment)
class PixPaymentAdmin(MoneyColumns, ReadOnlyAdmin):
    list_display = ("end_to_end_id", "txid", "amount_brl", "outcome", "source", "paid_at")
    list_filter = ("outcome", "source")
    search_fields = ("end_to_end_id", "txid")


@admin.register(PixWebhookEvent)
class PixWebhookEventAdmin(ReadOnlyAdmin):
    list_display = ("end_to_end_id", "txid", "source", "refund_state", "received_at", "processed_at", "outcome")
    list_filter = ("source", "outcome")
    search_fields = ("end_to_end_id", "txid", "body_sha256")
    exclude = ("raw_body",)
    readonly_fields = ("raw_body_text",)

    @admin.display(description="corpo recebido")
    def raw_body_text(self, obj: PixWebhookEvent) -> str:
        return bytes(obj.raw_body).decode("utf-8", "replace")


@admin.register(PixRefund)
class PixRefundAdmin(MoneyColumns, ReadOnlyAdmin):
    list_display = ("refund_id", "reference", "end_to_end_id", "amount_brl", "status", "kind", "attempts", "created_at")
    list_filter = ("status", "kind")
    search_fields = ("refund_id", "psp_refund_id", "reference", "end_to_end_id", "rtr_id")


@admin.register(CardPayment)
class CardPaymentAdmin(MoneyColumns, ReadOnlyAdmin):
    list_display = (
        "payment_id",
        "reference",
        "amount_brl",
        "installments",
        "status",
        "gateway_status_words",
        "refunded_brl",
        "created_at",
    )
    list_filter = ("status", HandlerFilter, "gateway")
    search_fields = ("payment_id", "reference", "gateway_reference", "gateway_order_id")
    money_displays = {
        **MoneyColumns.money_displays,
        "refunded_amount": "refunded_brl",
        "gateway_status": "gateway_status_words",
        "handler_id": "handler_words",
    }

    @admin.display(description=_("situação no gateway"), ordering="gateway_status")
    def gateway_status_words(self, obj: CardPayment) -> str:
        return gateway_words(obj.gateway_status)

    @admin.display(description=_("meio de pagamento"))
    def handler_words(self, obj: CardPayment) -> str:
        return str(HANDLER_WORDS.get(obj.handler_id) or gettext("Cartão"))

    @admin.display(description=_("valor estornado"), ordering="refunded_amount")
    def refunded_brl(self, obj: CardPayment) -> str:
        return format_brl(obj.refunded_amount)


@admin.register(CardRefund)
class CardRefundAdmin(MoneyColumns, ReadOnlyAdmin):
    list_display = ("refund_id", "reference", "amount_brl", "status", "kind", "attempts", "gateway_status")
    list_filter = ("status", "kind")
    search_fields = ("refund_id", "reference")


@admin.register(BoletoPayment)
class BoletoPaymentAdmin(MoneyColumns, ReadOnlyAdmin):
    """Boletos issued through the card gateway (issue 37); due date from the store setting
    `boleto_due_business_days`, given up after BOLETO_EXPIRY_GRACE_DAYS (the `payments.tasks.sweep_boletos` beat)."""

    list_display = ("payment_id", "reference", "amount_brl", "status", "due_date", "paid_at", "gateway_status_words")
    list_filter = ("status", "gateway")
    search_fields = ("payment_id", "reference", "gateway_charge_id", "line", "nosso_numero")
    money_displays = {
        **MoneyColumns.money_displays,
        "gateway_status": "gateway_status_words",
        "handler_id": "handler_words",
    }

    @admin.display(description=_("situação no gateway"), ordering="gateway_status")
    def gateway_status_words(self, obj: BoletoPayment) -> str:
        return gateway_words(obj.gateway_status)

    @admin.display(description=_("meio de pagamento"))
    def handler_words(self, obj: BoletoPayment) -> str:
        return gettext("Boleto bancário")  # the handler's id (br.dev.bcp.boleto) is the protocol's, not staff's


class BoletoRefundForm(forms.ModelForm):
    """The transfer's description is checked here, on its field: a refused save stays on the page with its error
    (the service's own check came after the admin had said "saved" and gone back to the list)."""

    class Meta:
        model = BoletoRefund
        fields = ("transfer_note",)

    def clean_transfer_note(self) -> str:
        note = (self.cleaned_data.get("transfer_note") or "").strip()
        if not 4 <= len(note) <= 200:
            raise forms.ValidationError(
                _("Descreva a transferência (banco, data, id do Pix) em 4 a 200 caracteres."), code="transfer_note"
            )
        return note


@admin.register(BoletoRefund)
class BoletoRefundAdmin(MoneyColumns, admin.ModelAdmin):
    """A boleto is refunded by bank transfer to the buyer (no card to reverse): staff make the transfer, then
    fill "comprovante da transferência" and save; that completes the refund once, through the service
    (`boleto_refund_mark_transferred`), and the order's adjustment with it."""

    form = BoletoRefundForm
    list_display = ("refund_id", "reference", "amount_brl", "status", "kind", "created_at", "finished_at")
    list_filter = ("status", "kind")
    search_fields = ("refund_id", "reference")
    fields = ("refund_id", "reference", "amount_brl", "reason", "kind", "status", "transfer_note", "finished_by",
              "finished_at")  # fmt: skip
    readonly_fields = ("refund_id", "reference", "amount_brl", "reason", "kind", "status", "finished_by",
                       "finished_at")  # fmt: skip

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object | None = None) -> bool:
        awaiting = obj is None or getattr(obj, "status", "") == BoletoRefund.Status.AWAITING_TRANSFER
        return awaiting and super().has_change_permission(request, obj)

    def save_model(self, request: HttpRequest, obj: BoletoRefund, form: Any, change: bool) -> None:
        try:
            boleto_refund_mark_transferred(
                refund_id=obj.refund_id, note=obj.transfer_note, actor=request.user.get_username()
            )
        except PaymentInputError:
            messages.error(request, _("Descreva a transferência (banco, data, id do Pix) em 4 a 200 caracteres."))


@admin.register(CardWebhookEvent)
class CardWebhookEventAdmin(ReadOnlyAdmin):
    list_display = ("event_id", "type", "charge_id", "received_at", "processed_at", "outcome", "attempts")
    list_filter = ("type", "outcome")
    search_fields = ("event_id", "charge_id")


@admin.register(PaymentEvent)
class PaymentEventAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "reference", "kind", "txid")
    list_filter = ("kind",)
    search_fields = ("reference", "txid")


# --- Pix Automático (issue 38): the /rec and /cobr inboxes and the recurring charges, read-only ---------------


def linked(kind: str, value: str, text: str = "") -> str:
    """A link to the admin list that owns this id, searched for it: `settings.PAYMENTS_ADMIN_LINKS[kind]` names
    that list's URL (payments imports nothing of ours; config wires the subscription and order lists). Builds a
    URL only, no query; plain text when the list is not wired."""
    if not value:
        return "—"
    name = getattr(settings, "PAYMENTS_ADMIN_LINKS", {}).get(kind, "")
    try:
        url = reverse(name) if name else ""
    except NoReverseMatch:
        url = ""
    if not url:
        return text or value
    return format_html('<a href="{}?{}">{}</a>', url, urlencode({"q": value}), text or value)


class RawBodyColumn:
    @admin.display(description=_("corpo recebido"))
    def raw_body_text(self, obj: Any) -> str:
        return bytes(obj.raw_body).decode("utf-8", "replace")


@admin.register(PixRecurringCharge)
class PixRecurringChargeAdmin(MoneyColumns, ReadOnlyAdmin):
    """Each cycle's charge (`PUT /cobr/{txid}`): the amount and due date are the PSP's record, never edited here."""

    list_display = ("txid", "id_rec", "amount_brl", "due_date", "status", "retries", "settled_at", "subscription",
                    "order")  # fmt: skip
    list_filter = ("status", "due_date")
    search_fields = ("txid", "id_rec", "reference", "end_to_end_id")
    date_hierarchy = "due_date"
    fields = ("txid", "id_rec", "reference", "order", "subscription", "amount_brl", "due_date", "status", "retries",
              "failures_told", "end_to_end_id", "settled_at", "created_at", "updated_at")  # fmt: skip
    readonly_fields = fields

    @admin.display(description=_("assinatura"))
    def subscription(self, obj: PixRecurringCharge) -> str:
        return linked("id_rec", obj.id_rec, str(_("ver assinatura")))

    @admin.display(description=_("pedido"), ordering="reference")
    def order(self, obj: PixRecurringCharge) -> str:
        return linked("reference", obj.reference) if obj.settled_at else obj.reference


@admin.register(PixRecurringChargeWebhookEvent)
class PixRecurringChargeWebhookEventAdmin(RawBodyColumn, ReadOnlyAdmin):
    """The `/cobr` inbox: each notice stored raw before processing (append-only)."""

    list_display = ("txid", "status", "received_at", "processed_at", "charge")
    list_filter = ("status",)
    search_fields = ("txid", "item_sha256")
    date_hierarchy = "received_at"
    fields = ("txid", "charge", "status", "received_at", "processed_at", "payload", "headers", "item_sha256",
              "raw_body_text")  # fmt: skip
    readonly_fields = fields

    @admin.display(description=_("cobrança"))
    def charge(self, obj: PixRecurringChargeWebhookEvent) -> str:
        url = reverse("admin:payments_pixrecurringcharge_changelist")
        return format_html('<a href="{}?{}">{}</a>', url, urlencode({"q": obj.txid}), _("ver cobrança"))


@admin.register(PixRecurrenceWebhookEvent)
class PixRecurrenceWebhookEventAdmin(RawBodyColumn, ReadOnlyAdmin):
    """The `/rec` inbox: the recurrences' changes (authorized in the bank app, cancelled by the payer), raw."""

    list_display = ("id_rec", "status", "cancelled_by", "cancellation_code", "received_at", "processed_at",
                    "subscription")  # fmt: skip
    list_filter = ("status", "cancelled_by")
    search_fields = ("id_rec", "body_sha256")
    date_hierarchy = "received_at"
    fields = ("id_rec", "subscription", "status", "cancelled_by", "cancellation_code", "received_at", "processed_at",
              "payload", "headers", "body_sha256", "raw_body_text")  # fmt: skip
    readonly_fields = fields

    @admin.display(description=_("assinatura"))
    def subscription(self, obj: PixRecurrenceWebhookEvent) -> str:
        return linked("id_rec", obj.id_rec, str(_("ver assinatura")))


class InfractionAnswerForm(forms.Form):
    decision = forms.ChoiceField(
        label=_("Decisão"),
        choices=[
            ("contest", _("Contestar: a venda é legítima (o envio é liberado)")),
            ("accept", _("Aceitar devolver o valor ao pagador (o envio segue retido)")),
        ],
        widget=forms.RadioSelect,
    )
    justification = forms.CharField(
        label=_("Justificativa e evidências"),
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text=_(
            "O que o PSP pede para analisar: código de rastreio e data da entrega, número da NF-e, conversa com o "
            "comprador, dados do cadastro. De 20 a 2000 caracteres; enviado ao PSP uma única vez."
        ),
    )
    # Accepting returns the money and is sent to the PSP once, with no way back: confirmed like an order's refund.
    confirm_return = forms.BooleanField(required=False)

    def __init__(self, *args: Any, amount: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.amount = amount
        self.fields["confirm_return"].label = _("Confirmo devolver %(amount)s ao pagador (não dá para desfazer)") % {
            "amount": format_brl(amount)
        }

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("decision") == "accept" and not cleaned.get("confirm_return"):
            self.add_error(
                "confirm_return",
                _("Para aceitar, confirme que %(amount)s serão devolvidos ao pagador.")
                % {"amount": format_brl(self.amount)},
            )
        return cleaned


class PixInfractionAnswerInline(admin.StackedInline):
    model = PixInfractionAnswer
    extra = 0
    can_delete = False
    fields = ("accept", "justification", "actor", "status", "sent_at", "attempts", "last_error")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: object | None = None) -> bool:
        return False


def answer_deadline_html(infraction: PixInfraction) -> str:
    """ "dd/mm/aaaa HH:MM" in Brasília time while the dispute waits for staff, marked once past (MED's window,
    `payments.med.models.ANSWER_WINDOW`); "—" once answered, closed or cancelled."""
    if infraction.status != PixInfraction.Status.OPEN:
        return "—"
    when = timezone.localtime(infraction.answer_deadline).strftime("%d/%m/%Y %H:%M")
    if infraction.answer_overdue(timezone.now()):
        return format_html('<strong class="med-overdue">{} — {}</strong>', when, _("prazo vencido"))
    return when


@admin.register(PixInfraction)
class PixInfractionAdmin(MoneyColumns, ReadOnlyAdmin):
    """MED disputes: read-only rows (the PSP's notifications write them) and the staff's answer form."""

    list_display = (
        "public_id", "status", "answer_by", "amount_brl", "situation_text", "order_link", "opened_at", "outcome"
    )  # fmt: skip
    list_filter = ("status", "outcome")
    search_fields = ("public_id", "psp_id", "end_to_end_id", "reference")
    fields = (
        "public_id", "psp_id", "end_to_end_id", "payment", "order_link", "disputed_brl", "situation_text", "details",
        "psp_status_text", "status", "answer_by", "outcome", "returned_brl", "refund_check", "analysis_details",
        "opened_at", "closed_at",
        "answer_link",
    )  # fmt: skip
    readonly_fields = fields
    inlines = [PixInfractionAnswerInline]
    change_list_template = "admin/payments/pixinfraction/change_list.html"

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        # "Which disputes are open and how much is blocked?" (QA walk, closing the month): said above the list.
        held = disputes_in_progress()
        summary = ngettext(
            "%(count)d disputa em andamento (aberta ou respondida): %(amount)s bloqueados pelo PSP.",
            "%(count)d disputas em andamento (abertas ou respondidas): %(amount)s bloqueados pelo PSP.",
            held.count,
        ) % {"count": held.count, "amount": format_brl(held.amount)}
        return super().changelist_view(request, {**(extra_context or {}), "disputes_summary": summary})

    def get_fields(self, request: HttpRequest, obj: object | None = None) -> Any:
        # The answer button only for who may answer (the answer page refuses the others anyway).
        if request.user.has_perm("payments.change_pixinfraction"):
            return self.fields
        return tuple(field for field in self.fields if field != "answer_link")

    @admin.display(description=_("reembolsos antes da disputa"))
    def refund_check(self, obj: PixInfraction) -> str:
        money = infraction_money(obj)
        if money.excess:
            return format_html(
                '<strong class="errornote">{}</strong>',
                _(
                    "O MED devolveu %(returned)s, mas %(refunded)s deste Pix já tinham sido reembolsados: "
                    "%(excess)s saíram duas vezes. Confira com o PSP e peça de volta ao pagador."
                )
                % {
                    "returned": format_brl(obj.returned_amount),
                    "refunded": format_brl(money.refunded),
                    "excess": format_brl(money.excess),
                },
            )
        if money.refunded:
            return _("%(refunded)s deste Pix já reembolsados pela loja.") % {"refunded": format_brl(money.refunded)}
        return "—"

    # The deadline follows the opening time (a fixed window), so sorting by it is sorting by `opened_at`.
    @admin.display(description=_("responder até"), ordering="opened_at")
    def answer_by(self, obj: PixInfraction) -> str:
        return answer_deadline_html(obj)

    @admin.display(description=_("pedido"), ordering="reference")
    def order_link(self, obj: PixInfraction) -> str:
        return self.order_link_html(obj)

    def order_link_html(self, infraction: PixInfraction) -> str:
        """The disputed sale as staff find it (the order list searched for its checkout), not a bare checkout_… id.
        payments knows no order number: the shop's admin (shop/admin/payments.py) names the order instead."""
        return linked("reference", infraction.reference, str(_("ver o pedido")))

    @admin.display(description=_("valor contestado"), ordering="amount")
    def disputed_brl(self, obj: PixInfraction) -> str:
        return format_brl(obj.amount)

    @admin.display(description=_("valor devolvido"), ordering="returned_amount")
    def returned_brl(self, obj: PixInfraction) -> str:
        return format_brl(obj.returned_amount)

    @admin.display(description=_("tipo de fraude"), ordering="situation")
    def situation_text(self, obj: PixInfraction) -> str:
        return situation_words(obj.situation)

    @admin.display(description=_("situação no PSP"), ordering="psp_status")
    def psp_status_text(self, obj: PixInfraction) -> str:
        return psp_status_words(obj.psp_status)

    @admin.display(description=_("responder"))
    def answer_link(self, obj: PixInfraction) -> str:
        if obj.status != PixInfraction.Status.OPEN:
            return "—"
        url = reverse("admin:payments_pixinfraction_answer", args=[obj.pk])
        return format_html('<a class="button" href="{}">{}</a>', url, _("Responder a disputa"))

    def get_urls(self) -> list[Any]:
        return [
            path(
                "<int:pk>/responder/",
                self.admin_site.admin_view(self.answer_view),
                name="payments_pixinfraction_answer",
            ),
            *super().get_urls(),
        ]

    def answer_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        infraction = get_object_or_404(PixInfraction, pk=pk)
        if not request.user.has_perm("payments.change_pixinfraction"):
            raise PermissionDenied
        form = InfractionAnswerForm(request.POST or None, amount=infraction.amount)
        if request.method == "POST" and form.is_valid():
            try:
                infraction_answer(
                    infraction_id=infraction.public_id, accept=form.cleaned_data["decision"] == "accept",
                    justification=form.cleaned_data["justification"], actor=request.user.get_username(),
                )  # fmt: skip
            except PaymentInputError as exc:
                form.add_error("justification" if exc.field == "justification" else None, exc.message)
            else:
                messages.success(request, _("Resposta registrada; será enviada ao PSP."))
                return HttpResponseRedirect(reverse("admin:payments_pixinfraction_change", args=[pk]))
        refunded = infraction_money(infraction).refunded
        paid = infraction.payment.amount if infraction.payment else infraction.amount
        overlap = max(0, infraction.amount - max(0, paid - refunded))  # would leave twice if the PSP returns it all
        context = {
            **self.admin_site.each_context(request),
            "title": _("Responder a disputa Pix (MED)"),
            "infraction": infraction,
            "order_link": self.order_link_html(infraction),
            "answer_by": answer_deadline_html(infraction),
            "amount": format_brl(infraction.amount),
            "refunded": format_brl(refunded) if refunded else "",
            "overlap": format_brl(overlap) if overlap else "",
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/payments/pixinfraction/answer.html", context, status=200)
