"""Admin for checkouts (read-mostly), shipping methods with rates, pickup locations and coupons."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import formats, timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from kernel.admin_actions import RefusedActionMessage
from kernel.money import format_brl
from shop.admin.br_fields import CepNumberField, check_cep_in_uf, clean_cep, clean_uf
from shop.admin.money_forms import (
    CHECKOUT_STATUS_LABELS,
    brl_column,
    coupon_rules,
    money_model_form,
    shipping_rate_rules,
    shipping_rules,
)
from shop.checkout.services import checkout_cancel
from shop.checkout.types import TERMINAL_STATUSES
from shop.models import (
    Checkout,
    CheckoutEvent,
    CheckoutLine,
    Coupon,
    CouponRedemption,
    PickupLocation,
    ShippingMethod,
    ShippingRate,
)


class ShippingRateInline(admin.TabularInline):
    model = ShippingRate
    form = money_model_form(
        ShippingRate,
        "price",
        rules=shipping_rate_rules,
        fields={
            "cep_start": CepNumberField(label=_("CEP inicial"), required=False),
            "cep_end": CepNumberField(label=_("CEP final"), required=False),
        },
    )
    extra = 1
    fields = ["uf", "cep_start", "cep_end", "price", "days_min", "days_max"]


class ShippingMethodForm(
    money_model_form(ShippingMethod, "flat_price", "free_above", "price_per_extra_kg", rules=shipping_rules)
):
    """Prices typed and shown in reais (the model keeps centavos); the code and the flat price explained.

    QA walk (new merchant): "Motoboy BH" as the code answered Django's 'Informe um “slug” válido…', and a motoboy
    with a flat price beside its CEP ranges was offered in São Paulo and Manaus: nothing said that the flat price
    is charged wherever no rate of the table applies."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        code = self.fields["code"]
        code.help_text = _(
            "Identifica a opção no checkout e para os agentes de compra: só letras sem acento, números, hífen ou "
            "sublinhado, sem espaços (ex.: motoboy-bh, correios-pac)."
        )
        code.error_messages["invalid"] = _(
            "Código inválido: use só letras sem acento, números, hífen ou sublinhado, sem espaços (ex.: motoboy-bh)."
        )
        self.fields["flat_price"].help_text = _(
            "Cobrado em todo o Brasil onde nenhuma tarifa da tabela abaixo vale. Vazio: o método só aparece para "
            "as UFs e faixas de CEP da tabela (ex.: motoboy só na sua cidade)."
        )


@admin.register(ShippingMethod)
class ShippingMethodAdmin(admin.ModelAdmin):
    form = ShippingMethodForm
    list_display = ["title", "code", "kind", "carrier", "flat_brl", "free_above_brl", "days_min", "days_max", "active"]
    flat_brl = brl_column("flat_price", _("preço fixo"))
    free_above_brl = brl_column("free_above", _("frete grátis a partir de"))
    list_editable = ["active"]
    list_filter = ["kind", "active"]
    inlines = [ShippingRateInline]

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        method: ShippingMethod = form.instance
        if method.kind == ShippingMethod.KIND_SHIPPING and method.flat_price is not None and method.rates.exists():
            # A table with a flat price beside it serves every CEP: said once saved, while it can still be undone.
            messages.warning(
                request,
                _(
                    "“%(title)s” tem preço fixo (%(price)s): ele vale para qualquer CEP do Brasil fora das tarifas da "
                    "tabela, e o método aparece para todos os compradores. Para atender só as UFs e faixas de CEP "
                    "da tabela, deixe o preço fixo vazio."
                )
                % {"title": method.title, "price": format_brl(method.flat_price)},
            )


class PickupLocationForm(forms.ModelForm):
    """The address a buyer is sent to: a CEP as "01002-000" in the UF it belongs to, the UF in capitals."""

    class Meta:
        model = PickupLocation
        fields = [
            "name",
            "street",
            "number",
            "complement",
            "neighborhood",
            "city",
            "uf",
            "cep",
            "opening_hours",
            "preparation_days",
            "active",
            "position",
        ]

    def clean_cep(self) -> str:
        return clean_cep(self.cleaned_data.get("cep", ""))  # required: an empty one never gets here

    def clean_uf(self) -> str:
        return clean_uf(self.cleaned_data.get("uf", ""))

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        check_cep_in_uf(self, cleaned, cep="cep", uf="uf")
        return cleaned


@admin.register(PickupLocation)
class PickupLocationAdmin(admin.ModelAdmin):
    form = PickupLocationForm
    list_display = ["name", "city", "uf", "cep", "opening_hours", "active"]
    list_filter = ["active", "uf"]
    readonly_fields = ["location_id"]

    @admin.display(description=_("identificador"))
    def location_id(self, location: PickupLocation) -> str:
        return location.public_id or "—"


@admin.register(Coupon)
class CouponAdmin(admin.ModelAdmin):
    form = money_model_form(Coupon, "amount", "min_subtotal", rules=coupon_rules)
    list_display = [
        "code",
        "title",
        "kind",
        "percent",
        "amount_brl",
        "min_subtotal_brl",
        "ends_at",
        "stackable",
        "active",
    ]
    amount_brl = brl_column("amount", _("valor"))
    min_subtotal_brl = brl_column("min_subtotal", _("subtotal mínimo"))
    list_filter = ["kind", "active", "stackable"]
    search_fields = ["code", "title"]
    empty_value_display = "—"  # as the R$ columns show an empty value (Django's default is "-")


@admin.register(CouponRedemption)
class CouponRedemptionAdmin(admin.ModelAdmin):
    list_display = ["coupon", "checkout", "email", "amount_brl", "created_at"]
    amount_brl = brl_column("amount", _("valor"))
    list_select_related = ["coupon", "checkout"]
    search_fields = ["coupon__code", "email", "checkout__public_id"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


class CheckoutLineInline(admin.TabularInline):
    model = CheckoutLine
    extra = 0
    can_delete = False
    fields = ["public_id", "sku", "title", "unit_price", "quantity"]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


# The engine's event codes (shop/checkout) in the merchant's words; an unknown code is shown as it is.
CHECKOUT_EVENT_LABELS = {
    "created": _("Checkout criado"),
    "consent_changed": _("Consentimento de e-mails alterado"),
    "status_changed": _("Situação alterada"),
    "stock_reserved": _("Estoque reservado"),
    "stock_unavailable": _("Sem estoque para finalizar"),
    "payment_pending": _("Pagamento iniciado"),
    "card_pending": _("Pagamento com cartão em análise"),
    "complete_accepted": _("Finalização aceita, aguardando o pagamento"),
    "complete_refused": _("Finalização recusada"),
    "completed": _("Concluído (pedido criado)"),
    "canceled": _("Cancelado"),
    "expired": _("Expirado"),
    "payment_failed": _("Pagamento falhou"),
    "payment_rejected": _("Pagamento recusado"),
    "pix_unavailable": _("Pix indisponível"),
    "pix_expired": _("Pix expirado"),
    "pix_paid_before_complete": _("Pix pago antes de finalizar"),
    "pix_withdrawn": _("Cobrança Pix retirada"),
    "boleto_expired": _("Boleto vencido"),
    "completion_grace_elapsed": _("Prazo para finalizar esgotado"),
    "agent_complete_forbidden_refunded": _("Pagamento devolvido: o agente não podia finalizar"),
    "mandate_missing_refunded": _("Pagamento devolvido: sem mandato AP2 válido"),
}


class CheckoutEventInline(admin.TabularInline):
    model = CheckoutEvent
    extra = 0
    can_delete = False
    fields = ["created_at", "event", "from_label", "to_label", "detail"]
    readonly_fields = fields

    @admin.display(description=_("evento"))
    def event(self, obj: CheckoutEvent) -> str:
        return str(CHECKOUT_EVENT_LABELS.get(obj.kind, obj.kind))

    @admin.display(description=_("situação anterior"))
    def from_label(self, obj: CheckoutEvent) -> str:
        return str(CHECKOUT_STATUS_LABELS.get(obj.from_status, obj.from_status)) if obj.from_status else "—"

    @admin.display(description=_("nova situação"))
    def to_label(self, obj: CheckoutEvent) -> str:
        return str(CHECKOUT_STATUS_LABELS.get(obj.to_status, obj.to_status)) if obj.to_status else "—"

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class CheckoutStatusFilter(admin.SimpleListFilter):
    """The engine's status codes (BCP's, in English) in the merchant's words."""

    title = _("situação")
    parameter_name = "status__exact"

    def lookups(self, request: HttpRequest, model_admin: object) -> list[tuple[str, str]]:
        return [(code, str(label)) for code, label in CHECKOUT_STATUS_LABELS.items()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Checkout]) -> QuerySet[Checkout]:
        return queryset.filter(status=self.value()) if self.value() else queryset


FULFILLMENT_LABELS = {"shipping": _("Entrega"), "pickup": _("Retirada na loja"), "digital": _("Digital")}


class CheckoutFulfillmentFilter(admin.SimpleListFilter):
    title = _("entrega")
    parameter_name = "fulfillment_type__exact"

    def lookups(self, request: HttpRequest, model_admin: object) -> list[tuple[str, str]]:
        return [(code, str(label)) for code, label in FULFILLMENT_LABELS.items()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Checkout]) -> QuerySet[Checkout]:
        return queryset.filter(fulfillment_type=self.value()) if self.value() else queryset


@admin.register(Checkout)
class CheckoutAdmin(RefusedActionMessage, admin.ModelAdmin):
    """Checkouts change only through the engine; the admin shows them and can cancel."""

    list_display = ["code", "status_label", "email", "total_brl", "origin", "expires", "created"]
    total_brl = brl_column("total_amount", _("total"))

    @admin.display(description=_("código"), ordering="public_id")
    def code(self, obj: Checkout) -> str:
        return obj.public_id

    @admin.display(description=_("e-mail do comprador"), ordering="buyer_email")
    def email(self, obj: Checkout) -> str:
        return obj.buyer_email or "—"

    @admin.display(description=_("origem"), ordering="platform_id")
    def origin(self, obj: Checkout) -> str:
        return obj.platform_id or str(_("Loja (site)"))

    @admin.display(description=_("expira em"), ordering="expires_at")
    def expires(self, obj: Checkout) -> str:
        return formats.localize(timezone.localtime(obj.expires_at)) if obj.expires_at else "—"

    @admin.display(description=_("criado em"), ordering="created_at")
    def created(self, obj: Checkout) -> str:
        return formats.localize(timezone.localtime(obj.created_at))

    @admin.display(description=_("situação"), ordering="status")
    def status_label(self, obj: Checkout) -> str:
        return str(CHECKOUT_STATUS_LABELS.get(obj.status, obj.status))

    list_filter = [CheckoutStatusFilter, CheckoutFulfillmentFilter]
    search_fields = ["public_id", "buyer_email", "order_id"]
    inlines = [CheckoutLineInline, CheckoutEventInline]
    actions = ["cancel_checkouts"]

    def get_readonly_fields(self, request: HttpRequest, obj: Checkout | None = None) -> list[str]:
        return [f.name for f in Checkout._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Checkout | None = None) -> bool:
        # A checkout holding stock or awaiting its payment is cancelled (which releases both), never
        # deleted: a deleted row would leak its reserved units and orphan its Pix charge.
        if obj is not None and (obj.stock_reserved or obj.status not in TERMINAL_STATUSES):
            return False
        return super().has_delete_permission(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Checkout]) -> None:
        # The bulk "delete selected" action skips the per-object check above: apply it here too.
        kept = queryset.filter(stock_reserved=False, status__in=TERMINAL_STATUSES)
        refused = queryset.count() - kept.count()
        super().delete_queryset(request, kept)
        if refused:
            self.message_user(
                request,
                ngettext(
                    "%(n)d checkout em andamento não foi excluído; cancele-o para liberar o estoque.",
                    "%(n)d checkouts em andamento não foram excluídos; cancele-os para liberar o estoque.",
                    refused,
                )
                % {"n": refused},
                messages.WARNING,
            )

    @admin.action(description=_("Cancelar checkouts selecionados (libera estoque)"), permissions=["change"])
    def cancel_checkouts(self, request: HttpRequest, queryset: QuerySet[Checkout]) -> None:
        done = 0
        for public_id in queryset.values_list("public_id", flat=True):
            if checkout_cancel(checkout_id=public_id).checkout.status == "canceled":
                done += 1
        text = ngettext("%(n)d checkout cancelado.", "%(n)d checkouts cancelados.", done) % {"n": done}
        self.message_user(request, text, messages.SUCCESS)
