"""Subscription plans admin: prices typed and shown in reais, the offer shown in the buyer's words."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import formats
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from kernel.admin_actions import ReadOnlyAdmin, RefusedActionMessage
from kernel.br_validation import tax_id_text
from kernel.money import format_brl
from kernel.text import language_name
from orders.models import Order
from payments.psp import PSPUnavailable
from shop.admin.dashboard import sees_revenue
from shop.admin.money_forms import brl_column, money_model_form
from shop.models import Subscription, SubscriptionCycle, SubscriptionEvent, SubscriptionPlan
from shop.models.subscriptions import subscription_event_words
from shop.subscriptions.offers import plan_offer, plan_terms
from shop.subscriptions.services import SubscriptionStateError, subscription_cancel

SubscriptionPlanForm = money_model_form(SubscriptionPlan, "price", "first_cycle_discount")

# The keys of an event's `detail` as the services write them, in staff words (an unknown key shows as written).
DETAIL_WORDS = {
    "plan": _("plano"),
    "id_rec": _("idRec"),
    "id_solic_rec": _("idSolicRec"),
    "from": _("antes"),
    "reason": _("motivo"),
    "recurrence": _("situação no PSP"),
    "psp_status": _("situação no PSP"),
    "cancelled_by": _("cancelada por"),
    "by": _("por"),
    "staff": _("pessoa da equipe"),
    "cycle": _("ciclo"),
    "number": _("ciclo nº"),
    "due_date": _("vencimento"),
    "retry_on": _("nova tentativa em"),
    "txid": _("txid"),
    "amount": _("valor"),
    "order_id": _("pedido"),
    "order": _("pedido"),
    "outcome": _("resultado"),
    "payment_id": _("pagamento"),
    "language": _("idioma"),
    "e2e": _("endToEndId"),
    "brand": _("bandeira"),
    "last4": _("final do cartão"),
    "card_last4": _("final do cartão"),
}
BY_WORDS = {"shop": _("loja"), "buyer": _("assinante")}
# The withdrawal's outcome (`_withdraw_first_order`) and the recurrence's status at the PSP (payments/psp/recurring.py).
VALUE_WORDS = {
    "outcome": {
        "refunded": _("pedido cancelado e valor devolvido"),
        "shipped": _("pedido já enviado: o assinante pede a devolução"),
        "refused": _("pedido não cancelado"),
    },
    "recurrence": {
        "CREATED": _("criada"),
        "APPROVED": _("aprovada"),
        "REJECTED": _("rejeitada"),
        "EXPIRED": _("expirada"),
        "CANCELLED": _("cancelada"),
    },
}
VALUE_WORDS["psp_status"] = VALUE_WORDS["recurrence"]


def _detail_value(key: str, value: object) -> str:
    if key == "from" and isinstance(value, str):
        return str(Subscription.Status(value).label) if value in Subscription.Status.values else value
    if key == "by" and isinstance(value, str):
        return str(BY_WORDS.get(value, value))
    if key in VALUE_WORDS and isinstance(value, str):
        return str(VALUE_WORDS[key].get(value, value))
    if key == "amount" and isinstance(value, int):
        return format_brl(value)
    if key in ("due_date", "retry_on") and isinstance(value, str):
        try:
            return formats.date_format(date.fromisoformat(value), "SHORT_DATE_FORMAT")
        except ValueError:
            return value
    return str(value)


def event_detail_text(detail: dict[str, object], *, amounts: bool = True) -> str:
    """{"cycle": "cyc_…", "due_date": "2026-12-10"} → "ciclo: cyc_…; vencimento: 10/12/2026"; empty values left out,
    and the amount too for who may not see the revenue (`amounts=False`)."""
    return "; ".join(
        f"{DETAIL_WORDS.get(key, key)}: {_detail_value(key, value)}"
        for key, value in detail.items()
        if value not in ("", None) and (amounts or key != "amount")
    )


# A subscription's prices and each cycle's amount are revenue (admin home's "Próximas cobranças" gates them by
# `sees_revenue`): staff who may view subscriptions without "Pode ver faturamento" read when and whose, not how much.
PRICE_FIELDS = frozenset({"price_display", "first_cycle_price_display", "amount_display"})


def without_prices(request: HttpRequest, names: Sequence[str]) -> list[str]:
    """`names` (fields or columns) as `request`'s user may read them: for who may not see the revenue, the price
    columns are left out and the plan (whose name carries its price) is named without it."""
    if sees_revenue(request.user):
        return list(names)
    swap = {"plan": "plan_without_price", "detail_text": "detail_text_without_amounts"}
    return [swap.get(name, name) for name in names if name not in PRICE_FIELDS]


def plan_words(plan: SubscriptionPlan) -> str:
    """The plan as its `__str__` names it, without the price: "Café 500 g — Mensal"."""
    return f"{plan.variant} — {plan.get_cycle_display()}"


def address_lines(destination: dict[str, str]) -> list[str]:
    """The subscription's shipping address as an envelope reads: name, street and number, district, city/UF, CEP."""
    d = destination
    kept = d.get("postal_code", "")  # "01310-100" (as orders keep it) or, on older rows, the 8 digits
    cep = "".join(ch for ch in kept if ch.isdigit())
    lines = [
        f"{d.get('first_name', '')} {d.get('last_name', '')}".strip(),
        ", ".join(part for part in (d.get("street", ""), d.get("number", ""), d.get("complement", "")) if part),
        d.get("neighborhood", ""),
        "/".join(part for part in (d.get("city", ""), d.get("state", "")) if part),
        f"CEP {cep[:5]}-{cep[5:]}" if len(cep) == 8 else kept,
    ]
    return [line for line in lines if line]


class CycleOrderLink:
    """A paid cycle's order as a link to its admin page; the order's primary key comes in the list's own query
    (`order_id` holds the order's public id), so the link costs no query per row."""

    def get_queryset(self, request: HttpRequest) -> QuerySet[SubscriptionCycle]:
        queryset: QuerySet[SubscriptionCycle] = super().get_queryset(request)  # type: ignore[misc]
        order = Order.objects.filter(public_id=OuterRef("order_id"))
        return queryset.annotate(
            order_pk=Subquery(order.values("pk")[:1]), order_number=Subquery(order.values("number")[:1])
        )

    @admin.display(description=_("pedido"), ordering="order_id")
    def order_link(self, cycle: SubscriptionCycle) -> str:
        pk = getattr(cycle, "order_pk", None)
        if pk is None:
            return cycle.order_id or "—"
        # Staff know an order by its number (as on the order list and the buyer's e-mails), not by its public id.
        label = _("Pedido #%(number)s") % {"number": getattr(cycle, "order_number", "")}
        return format_html('<a href="{}">{}</a>', reverse("admin:orders_order_change", args=[pk]), label)


@admin.register(SubscriptionPlan)
class SubscriptionPlanAdmin(admin.ModelAdmin):
    form = SubscriptionPlanForm
    fields = ("variant", "cycle", "price", "first_cycle_discount", "min_cycles", "ships_each_cycle", "active")
    list_display = ("variant", "cycle", "price_display", "offer", "terms", "active")
    list_filter = ("cycle", "active")
    list_select_related = ("variant", "variant__product")
    search_fields = ("variant__sku", "variant__product__title")
    autocomplete_fields = ("variant",)
    price_display = brl_column("price", _("preço por ciclo"))

    @admin.display(description=_("oferta na página do produto"))
    def offer(self, obj: SubscriptionPlan) -> str:
        return plan_offer(obj)

    @admin.display(description=_("condições"))
    def terms(self, obj: SubscriptionPlan) -> str:
        return "; ".join(plan_terms(obj))


class SubscriptionCycleInline(CycleOrderLink, admin.TabularInline):
    model = SubscriptionCycle
    extra = 0
    can_delete = False
    # `retry_on`: the day of a refused cycle's next attempt (card or Pix Automático), as the buyer's page says it.
    fields = (
        "number", "due_date", "amount_display", "status", "retry_on", "stock_short", "order_link", "txid",
    )  # fmt: skip
    readonly_fields = fields
    ordering = ("-number",)

    def get_fields(self, request: HttpRequest, obj: Subscription | None = None) -> list[str]:
        return without_prices(request, super().get_fields(request, obj))

    @admin.display(description=_("valor"))
    def amount_display(self, obj: SubscriptionCycle) -> str:
        return format_brl(obj.amount)

    def has_add_permission(self, request: HttpRequest, obj: Subscription | None = None) -> bool:
        return False


class SubscriptionEventInline(admin.TabularInline):
    model = SubscriptionEvent
    extra = 0
    can_delete = False
    fields = ("created_at", "kind_words", "detail_text")
    readonly_fields = (*fields, "detail_text_without_amounts")

    def get_fields(self, request: HttpRequest, obj: Subscription | None = None) -> list[str]:
        return without_prices(request, super().get_fields(request, obj))

    def has_add_permission(self, request: HttpRequest, obj: Subscription | None = None) -> bool:
        return False  # append-only timeline, written by the services

    @admin.display(description=_("tipo"))
    def kind_words(self, event: SubscriptionEvent) -> str:
        return subscription_event_words(event.kind)

    @admin.display(description=_("detalhe"))
    def detail_text(self, event: SubscriptionEvent) -> str:
        return event_detail_text(event.detail) or "—"

    @admin.display(description=_("detalhe"))
    def detail_text_without_amounts(self, event: SubscriptionEvent) -> str:
        return event_detail_text(event.detail, amounts=False) or "—"


@admin.register(Subscription)
class SubscriptionAdmin(RefusedActionMessage, ReadOnlyAdmin):
    """Read-only for now: subscriptions change through their services (buyer, PSP notices), not by hand. Never
    deleted either: that would take the cycles and the timeline with it and leave the buyer's Pix Automático
    authorized at the PSP (or the card in the gateway's wallet); a subscription ends by being cancelled."""

    list_display = (
        "public_id", "buyer_name", "plan", "status", "payment_method", "price_display", "starts_on", "created_at"
    )  # fmt: skip
    list_filter = ("status", "cycle", "payment_method")  # Pix Automático or a card stored at the gateway
    list_select_related = ("plan", "plan__variant")
    search_fields = ("public_id", "buyer_name", "buyer_email", "pix_id_rec")
    inlines = (SubscriptionCycleInline, SubscriptionEventInline)
    actions = ("cancel_selected",)
    price_display = brl_column("price", _("preço por ciclo"))
    fields = (
        "public_id", "plan", "status", "payment_method", "buyer_name", "buyer_tax_id_text", "buyer_email", "cycle",
        "price_display", "first_cycle_price_display", "min_cycles", "starts_on", "address", "pix_id_rec",
        "pix_id_solic_rec", "pix_authorization_location", "card_brand", "card_last4", "card_customer_id", "card_id",
        "language_display", "platform_id", "cancelled_at", "created_at",
    )  # fmt: skip
    readonly_fields = (*fields, "plan_without_price")
    first_cycle_price_display = brl_column("first_cycle_price", _("preço do primeiro ciclo"))

    def get_fields(self, request: HttpRequest, obj: Subscription | None = None) -> list[str]:
        return without_prices(request, super().get_fields(request, obj))

    def get_list_display(self, request: HttpRequest) -> list[str]:
        return without_prices(request, super().get_list_display(request))

    @admin.display(description=_("plano"), ordering="plan")
    def plan_without_price(self, obj: Subscription) -> str:
        return plan_words(obj.plan)

    @admin.display(description=_("idioma"))
    def language_display(self, obj: Subscription) -> str:
        return language_name(obj.language)  # QA walk: the page read "pt-br"

    @admin.display(description=_("CPF/CNPJ do assinante"))
    def buyer_tax_id_text(self, obj: Subscription) -> str:
        return tax_id_text(obj.buyer_tax_id) or "—"

    @admin.display(description=_("endereço de entrega"))
    def address(self, obj: Subscription) -> str:
        lines = address_lines(obj.destination or {})
        return format_html_join(mark_safe("<br>"), "{}", ((line,) for line in lines)) if lines else "—"

    def has_cancel_permission(self, request: HttpRequest) -> bool:
        # Rows stay read-only (no change form), but stopping a buyer's recurrence at the PSP is a change: a staff
        # member who may only look at subscriptions is neither offered the action nor allowed to post it.
        return request.user.has_perm("shop.change_subscription")

    @admin.action(description=_("Cancelar as assinaturas selecionadas"), permissions=["cancel"])
    def cancel_selected(self, request: HttpRequest, queryset: QuerySet[Subscription]) -> TemplateResponse | None:
        """First a confirmation page (what will be cancelled and what that does, like Django's delete), then, on
        "Sim, cancelar", the cancel. A second submit of the page (a double click, the back button) cancels nothing
        twice: `subscription_cancel` locks the row and leaves a cancelled one alone, and the message says so."""
        subscriptions = list(queryset.select_related("plan").order_by("pk"))
        if request.POST.get("post") != "yes":
            return self._cancel_confirmation(request, subscriptions)
        done, already = 0, []
        actor = request.user.get_username()
        for subscription in subscriptions:
            if subscription.status == Subscription.Status.CANCELLED:
                already.append(subscription.public_id)
                continue
            try:
                subscription_cancel(public_id=subscription.public_id, by="shop", actor=actor)
            except (SubscriptionStateError, PSPUnavailable) as exc:
                self.message_user(request, f"{subscription.public_id}: {exc}", level=messages.WARNING)
                continue
            done += 1
        if done or not already:
            self.message_user(
                request, ngettext("%(n)d assinatura cancelada.", "%(n)d assinaturas canceladas.", done) % {"n": done}
            )
        if already:
            self.message_user(
                request,
                ngettext(
                    "Já estava cancelada (nada mudou): %(ids)s.",
                    "Já estavam canceladas (nada mudou): %(ids)s.",
                    len(already),
                )
                % {"ids": ", ".join(already)},
                level=messages.WARNING,
            )
        return None

    def _cancel_confirmation(self, request: HttpRequest, subscriptions: list[Subscription]) -> TemplateResponse:
        live = [s for s in subscriptions if s.status != Subscription.Status.CANCELLED]
        cycles: dict[int, list[SubscriptionCycle]] = {s.pk: [] for s in live}
        for cycle in SubscriptionCycle.objects.filter(subscription__in=live, status__in=OPEN_CYCLES).order_by(
            "due_date", "number"
        ):
            cycles[cycle.subscription_id].append(cycle)
        opts = self.model._meta
        revenue = sees_revenue(request.user)
        context = {
            **self.admin_site.each_context(request),
            "title": _("Cancelar assinaturas"),
            "subtitle": None,
            "opts": opts,
            # The plan named with its price and each cycle's amount only for who may see the revenue (as the
            # subscription's own page, `without_prices`).
            "to_cancel": [
                {
                    "subscription": s,
                    "plan": str(s.plan) if revenue else plan_words(s.plan),
                    "effects": cancel_effects(s, cycles[s.pk], amounts=revenue),
                }
                for s in live
            ],
            "already": [s for s in subscriptions if s.status == Subscription.Status.CANCELLED],
            "to_cancel_or_already": subscriptions,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "back_url": reverse("admin:shop_subscription_changelist") + _preserved_query(request),
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, "admin/shop/subscription/cancel_selected_confirmation.html", context)


OPEN_CYCLES = (
    SubscriptionCycle.Status.SCHEDULED,
    SubscriptionCycle.Status.CHARGED,
    SubscriptionCycle.Status.RETRYING,
)


def _preserved_query(request: HttpRequest) -> str:
    # the list's filters, as Django's admin keeps them in `_changelist_filters`
    filters = request.GET.urlencode()
    return f"?{filters}" if filters else ""


CYCLE_CANCELLED = _("O ciclo de %(day)s (%(amount)s) é cancelado.")
CARD_CHARGE_IN_FLIGHT = _(
    "A cobrança no cartão do ciclo de %(day)s (%(amount)s) já está em andamento e termina como estiver."
)
PIX_CHARGE_WITHDRAWN = _(
    "A cobrança do ciclo de %(day)s (%(amount)s), já enviada ao banco, é retirada (se o banco ainda aceitar)."
)
# The same, for who may not see the revenue (`sees_revenue`): when, not how much.
CYCLE_CANCELLED_NO_AMOUNT = _("O ciclo de %(day)s é cancelado.")
CARD_CHARGE_IN_FLIGHT_NO_AMOUNT = _(
    "A cobrança no cartão do ciclo de %(day)s já está em andamento e termina como estiver."
)
PIX_CHARGE_WITHDRAWN_NO_AMOUNT = _(
    "A cobrança do ciclo de %(day)s, já enviada ao banco, é retirada (se o banco ainda aceitar)."
)


def cancel_effects(
    subscription: Subscription, open_cycles: list[SubscriptionCycle], *, amounts: bool = True
) -> list[str]:
    """What cancelling `subscription` does, in the staff's words (the confirmation page); each cycle's amount only
    with `amounts` (who may see the revenue)."""
    if subscription.payment_method == Subscription.Method.CARD:
        effects = [str(_("Nenhum ciclo novo é cobrado, e o cartão guardado sai da carteira da operadora."))]
    elif subscription.pix_id_rec:
        effects = [str(_("Nenhum ciclo novo é cobrado, e o Pix Automático é cancelado no banco do assinante."))]
    else:
        effects = [str(_("O pedido de autorização do Pix Automático deixa de valer: nada é cobrado."))]
    for cycle in open_cycles:
        words = {"day": formats.date_format(cycle.due_date, "SHORT_DATE_FORMAT"), "amount": format_brl(cycle.amount)}
        if cycle.status == SubscriptionCycle.Status.SCHEDULED:
            sentence = CYCLE_CANCELLED if amounts else CYCLE_CANCELLED_NO_AMOUNT
        elif subscription.payment_method == Subscription.Method.CARD:
            sentence = CARD_CHARGE_IN_FLIGHT if amounts else CARD_CHARGE_IN_FLIGHT_NO_AMOUNT
        else:
            sentence = PIX_CHARGE_WITHDRAWN if amounts else PIX_CHARGE_WITHDRAWN_NO_AMOUNT
        effects.append(str(sentence) % words)
    effects.append(str(_("Pedidos já pagos não mudam: nada é reembolsado.")))
    return effects


@admin.register(SubscriptionCycle)
class SubscriptionCycleAdmin(CycleOrderLink, ReadOnlyAdmin):
    """Cycles, read-only: next charges, failures (filter by status) and the order of each paid one."""

    list_display = ("public_id", "subscription", "number", "due_date", "amount_display", "status", "order_link")
    list_filter = ("status", "stock_short")
    list_select_related = ("subscription",)
    search_fields = ("public_id", "txid", "order_id", "subscription__public_id", "subscription__buyer_email")
    ordering = ("due_date",)

    def get_list_display(self, request: HttpRequest) -> list[str]:
        return without_prices(request, super().get_list_display(request))

    @admin.display(description=_("valor"), ordering="amount")
    def amount_display(self, obj: SubscriptionCycle) -> str:
        return format_brl(obj.amount)
