"""Staff back-office for orders. Read-only data; every change goes through an action page → a service.

Permissions: `orders.view_order` to look, `orders.ship_order` to register shipments and deliveries,
`orders.refund_order` to refund and cancel, `orders.change_order` to add notes and resend e-mails.
Pix charges live in `payments` (which orders may not import): the order shows its payment reference/txid.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, Prefetch, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import formats, timezone
from django.utils.html import format_html, format_html_join
from django.utils.module_loading import import_string
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from kernel.admin_actions import ReadOnlyAdmin, RefusedActionMessage
from kernel.br_validation import tax_id_text
from kernel.money import format_brl
from kernel.text import language_name
from orders.admin_actions import ACTIONS, action_refusal, available_actions, perform_action
from orders.admin_export import csv_rows, finance_csv_rows, xlsx_bytes
from orders.admin_inlines import (
    AdjustmentInline,
    ExpectationInline,
    FulfillmentEventInline,
    OrderLineInline,
    ReturnRequestInline,
    TimelineInline,
)
from orders.arrival import expectation_promise
from orders.choices import ReturnRequester
from orders.errors import OrderError
from orders.labels import (
    payment_type_label,
    total_label,
)
from orders.models import (
    Adjustment,
    FulfillmentEvent,
    FulfillmentEventType,
    Order,
    OrderLine,
    OrderStatus,
    ReturnRequest,
)
from orders.panels import render_panels
from orders.selectors import (
    adjustments_with_drops,
    order_search,
    orders_money_summary,
    orders_paid_between,
    orders_with_payment_date,
)
from orders.services import (
    order_mark_delivered,
)
from orders.services.adjustments import refund_goes_through_psp
from orders.summary import installments_text, money_rows


class PendingRefundFilter(admin.SimpleListFilter):
    """Orders with money promised back and not settled yet (the dashboard's "Reembolsos pendentes"), or with a
    refund the payment provider refused (QA walk: the bookkeeper could not find the failed ones)."""

    title = _("reembolso")
    parameter_name = "refund"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("pending", _("Reembolso pendente")), ("failed", _("Reembolso com falha"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Order]) -> QuerySet[Order]:
        if self.value() not in ("pending", "failed"):
            return queryset
        refunds = Adjustment.objects.filter(order=OuterRef("pk"), type="refund", status=self.value())
        return queryset.filter(Exists(refunds))


MONEY_SUMMARY_MAX_ORDERS = 5000  # about a year of a small shop; more: the list asks for a month filter
MONEY_SUMMARY_ROWS = [
    ("count", _("Pedidos")),
    ("gross", _("Total dos pedidos (bruto)")),
    ("discount", _("Descontos (cupons, Pix)")),
    ("freight", _("Frete")),
    ("interest", _("Juros do parcelamento")),
    ("paid", _("Pago")),
    ("refunded", _("Reembolsado")),
    ("refund_pending", _("Reembolso pendente")),
    ("net", _("Líquido recebido (pago − reembolsado)")),
]


def _month_start(year: int, month: int) -> datetime:
    return timezone.make_aware(datetime(year, month, 1))  # midnight in the shop's zone (America/Sao_Paulo)


class PaidMonthFilter(admin.SimpleListFilter):
    """The month the money came in, Brasília time (QA walk, closing the month): the date filter counts a boleto
    issued on 28/11 and paid on 02/12 in November, when the accountant books it in December."""

    title = _("mês do pagamento")
    parameter_name = "pago_em"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        # A year's months, this one included (it listed 13: the oldest, a year back, mostly empty and one more row on
        # a phone); an older month is still a `?pago_em=AAAA-MM` link away.
        today = timezone.localdate()
        months = []
        year, month = today.year, today.month
        for _step in range(12):
            months.append((f"{year:04d}-{month:02d}", f"{month:02d}/{year:04d}"))
            year, month = (year, month - 1) if month > 1 else (year - 1, 12)
        return months

    def queryset(self, request: HttpRequest, queryset: QuerySet[Order]) -> QuerySet[Order]:
        value = self.value() or ""
        try:
            year, month = (int(part) for part in value.split("-"))
            start = _month_start(year, month)
        except ValueError:
            return queryset
        end = _month_start(year + 1, 1) if month == 12 else _month_start(year, month + 1)
        return orders_paid_between(queryset, start, end)


class PaidSinceFilter(admin.SimpleListFilter):
    """Orders whose payment was confirmed on or after a day, Brasília time (`orders_with_payment_date`, the rule of
    the finance export and "Mês do pagamento"): the admin home's "Hoje / 7 dias / 30 dias" open this list, so a
    boleto issued last week and paid today is in today's money and in the list that number opens."""

    title = _("pago desde")
    parameter_name = "pago_desde"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        today = timezone.localdate()
        return [
            (today.isoformat(), str(_("Hoje"))),
            ((today - timedelta(days=6)).isoformat(), str(_("Últimos 7 dias"))),
            ((today - timedelta(days=29)).isoformat(), str(_("Últimos 30 dias"))),
        ]

    def __init__(self, request: HttpRequest, params: dict[str, Any], model: Any, model_admin: Any) -> None:
        super().__init__(request, params, model, model_admin)
        if self.value() and paid_since_start(self.value() or "") is None:
            # a hand-edited link: say so once and list every order (the list, its sums and exports never fail)
            del self.used_parameters[self.parameter_name]
            messages.error(request, _("“Pago desde” precisa de uma data AAAA-MM-DD: a lista mostra todos os pedidos."))

    def queryset(self, request: HttpRequest, queryset: QuerySet[Order]) -> QuerySet[Order]:
        start = paid_since_start(self.value() or "")
        if start is None:
            return queryset
        return orders_with_payment_date(queryset).filter(payment_confirmed_at__gte=start)


def paid_since_start(value: str) -> datetime | None:
    """Midnight (the shop's zone) of the day `value` names (AAAA-MM-DD), or None when it names no day."""
    try:
        day = date.fromisoformat(value)
    except ValueError:
        return None
    return timezone.make_aware(datetime.combine(day, time.min))


def with_pickup_ready(queryset: QuerySet[Order]) -> QuerySet[Order]:
    """Orders with `pickup_ready`: whether the store said a pickup order is ready, in the same query (what
    `OrderAdmin.status_words` reads on the list, the order and its action pages)."""
    ready = FulfillmentEvent.objects.filter(order=OuterRef("pk"), type=FulfillmentEventType.READY_FOR_PICKUP)
    return queryset.annotate(pickup_ready=Exists(ready))


@admin.register(Order)
class OrderAdmin(RefusedActionMessage, ReadOnlyAdmin):
    # Fits 1280 px next to the app sidebar and the filters: short date, name over e-mail, compact statuses.
    list_display = ["number_display", "placed_display", "buyer", "total_display", "situation"]
    list_display_links = ["number_display"]
    list_filter = [
        "status",
        "payment_status",
        PendingRefundFilter,
        "payment_dispute",
        "fulfillment_method",
        "payment_type",
        "placed_at",
        PaidMonthFilter,
        PaidSinceFilter,
    ]
    show_facets = admin.ShowFacets.ALWAYS
    search_fields = ["buyer_email"]  # the real search is order_search (see get_search_results)
    search_help_text = _("Número, nome, e-mail, CPF/CNPJ, telefone, SKU ou código de rastreio")
    date_hierarchy = "placed_at"
    list_per_page = 50
    change_form_template = "orders/admin/change_form.html"
    change_list_template = "orders/admin/change_list.html"
    inlines = [
        OrderLineInline,
        ExpectationInline,
        FulfillmentEventInline,
        AdjustmentInline,
        ReturnRequestInline,
        TimelineInline,
    ]
    actions = ["mark_delivered_action"]
    fieldsets = [
        (
            _("Pedido"),
            {
                "fields": [
                    "number",
                    "public_id",
                    "status_display",
                    "placed_at",
                    "origin_display",
                    "language_display",
                    "permalink",
                ]
            },
        ),
        (
            _("Comprador"),
            {"fields": ["buyer_first_name", "buyer_last_name", "buyer_email", "phone_display", "tax_id_display"]},
        ),
        (_("Entrega"), {"fields": ["fulfillment_method", "fulfillment_title", "promise_display", "address"]}),
        (
            _("Valores"),
            {
                "fields": [
                    "totals_display",
                    "paid_display",
                    "refunded_display",
                    "refunds_display",
                    "payment_status",
                    "payment_dispute",
                ]
            },
        ),
        (
            _("Pagamento (cobrança Pix ou cartão no app de pagamentos)"),
            {
                "fields": [
                    "payment_type",
                    "installments_display",
                    "payment_id_display",
                ]
            },
        ),
    ]

    # --- read-only data (ReadOnlyAdmin): changes happen only through the action pages (services) -----------
    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [field for _name, options in self.fieldsets for field in options["fields"]]

    def get_search_results(self, request: HttpRequest, queryset: QuerySet[Order], search_term: str):
        if not search_term.strip():
            return queryset, False
        return queryset.filter(pk__in=order_search(query=search_term).values("pk")), False

    # --- columns ------------------------------------------------------------------------------------------
    @admin.display(description=_("nº"), ordering="number")
    def number_display(self, order: Order) -> str:
        return f"#{order.number}"

    @admin.display(description=_("data"), ordering="placed_at")
    def placed_display(self, order: Order) -> str:
        local = timezone.localtime(order.placed_at)
        return format_html(
            "{}<small>{}</small>",
            formats.date_format(local, "SHORT_DATE_FORMAT"),
            formats.time_format(local, "TIME_FORMAT"),
        )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Order]:
        return with_pickup_ready(super().get_queryset(request))

    @staticmethod
    def status_words(order: Order) -> str:
        """The status, or "Pronto para retirada" for a pickup order the store said is ready (still "placed")."""
        if (
            getattr(order, "pickup_ready", False)
            and order.fulfillment_method == "pickup"
            and order.status == OrderStatus.PLACED
        ):
            return str(FulfillmentEventType.READY_FOR_PICKUP.label)
        return order.get_status_display()

    @admin.display(description=_("situação"))
    def status_display(self, order: Order) -> str:
        return self.status_words(order)

    @admin.display(description=_("situação"), ordering="status")
    def situation(self, order: Order) -> str:
        return format_html(
            '{}<small class="orders-payment-{}">{}</small>',
            self.status_words(order),
            order.payment_status,
            order.get_payment_status_display(),
        )

    @admin.display(description=_("comprador"), ordering="buyer_email")
    def buyer(self, order: Order) -> str:
        return format_html(
            '<span class="orders-buyer">{}<small title="{}">{}</small></span>',
            order.buyer_name,
            order.buyer_email,
            order.buyer_email,
        )

    @admin.display(description=_("idioma"))
    def language_display(self, order: Order) -> str:
        return language_name(order.language)

    @admin.display(description=_("prazo"))
    def promise_display(self, order: Order) -> str:
        """The promise's words with the store's "prazo de postagem" when the order counts from the payment (as the
        buyer's checkout said it under the options), not only the carrier's days (closing note 45)."""
        words = order.fulfillment_description
        if order.fulfillment_method == "shipping":
            for expectation in order.expectations.all():
                if expectation.method_type == "shipping":
                    return expectation_promise(expectation, words)
        return words

    @admin.display(description=_("total"), ordering="total_amount")
    def total_display(self, order: Order) -> str:
        return format_brl(order.total_amount)

    @admin.display(description=_("pago"))
    def paid_display(self, order: Order) -> str:
        return format_brl(order.paid_amount)

    @admin.display(description=_("origem"))
    def origin_display(self, order: Order) -> str:
        """Where the order came from, in words; the checkout's code (checkout_…) stays in the API and the search."""
        if order.platform_id:
            return str(_("Agente de compras (BCP): %(platform)s")) % {"platform": order.platform_id}
        if order.payment_type == "manual" or order.payment_handler_id == "manual":
            return str(_("Venda registrada pela loja (Nova venda)"))
        return str(_("Loja (site)"))

    @admin.display(description=_("identificador do pagamento"))
    def payment_id_display(self, order: Order) -> str:
        """`payment_txid` holds the Pix txid or the card gateway's payment id: named as what it is."""
        if not order.payment_txid:
            return "—"
        kinds = {"pix": _("txid Pix"), "card": _("pagamento no cartão")}
        return f"{kinds.get(order.payment_type, _('pagamento'))}: {order.payment_txid}"

    @admin.display(description=_("parcelamento"))
    def installments_display(self, order: Order) -> str:
        return installments_text(order) or "—"

    @admin.display(description=_("reembolsado"))
    def refunded_display(self, order: Order) -> str:
        return format_brl(order.refunded_amount)

    @admin.display(description=_("reembolsos"))
    def refunds_display(self, order: Order) -> str:
        """Paid, refunded, under way, refused by the provider and what the order comes to: the rows the buyer's page
        shows after the totals (a refund in progress counted), plus the failed ones staff must redo or dropped; every
        amount unsigned."""
        adjustments = list(adjustments_with_drops().filter(order=order))  # one statement, as order.adjustments.all()
        rows = money_rows(order, adjustments, staff=True)[len(order.totals) :]
        if not rows:
            return "—"
        # Money back as the amount it is, as the "reembolsado" field beside it shows it (the buyer's page and e-mails
        # sign it, as rows taken off the total): "Reembolsado: -R$ 14,90" beside "Reembolsado: R$ 14,90" read as two
        # different sums (merchant gap, session 48).
        html = format_html_join(
            "",
            '<div class="money-{}">{}: {}</div>',
            ((row.kind, row.label, format_brl(abs(row.amount))) for row in rows),
        )
        pending = next((row for row in rows if row.kind == "refund_pending"), None)
        if pending is not None and not refund_goes_through_psp(order):
            # Paid outside the shop: nobody else pays this refund back (QA walk: staff waited for it).
            html += format_html(
                '<div class="money-offline-note help">{}</div>',
                _(
                    "Pago fora da loja: a loja devolve %(amount)s ao comprador (Pix, dinheiro ou transferência) e "
                    "depois usa “Marcar como reembolsado (fora da loja)”."
                )
                % {"amount": format_brl(-pending.amount)},
            )
        return html

    @admin.display(description=_("totais"))
    def totals_display(self, order: Order) -> str:
        return format_html_join(
            "",
            "<div>{}: {}</div>",
            ((total_label(e), format_brl(e["amount"])) for e in order.totals),
        )

    @admin.display(description=_("endereço"))
    def address(self, order: Order) -> str:
        d = order.destination
        parts = [
            d.get("name", ""),
            f"{d.get('street', '')}, {d.get('number', '')} {d.get('complement', '')}".strip(" ,"),
            d.get("neighborhood", ""),
            f"{d.get('city', '')}/{d.get('state', '')}".strip("/"),
            d.get("postal_code", ""),
        ]
        return ", ".join(part for part in parts if part)

    @admin.display(description=_("telefone"))
    def phone_display(self, order: Order) -> str:
        # Stored as E.164 ("+5511987654321"); staff read "(11) 98765-4321" and may open the WhatsApp chat.
        digits = order.buyer_phone.removeprefix("+55")
        if not order.buyer_phone.startswith("+55") or not digits.isdigit() or len(digits) not in (10, 11):
            return order.buyer_phone or "-"
        shown = f"({digits[:2]}) {digits[2:-4]}-{digits[-4:]}"
        return format_html('<a href="https://wa.me/55{}" target="_blank" rel="noopener">{}</a>', digits, shown)

    @admin.display(description=_("CPF/CNPJ"))
    def tax_id_display(self, order: Order) -> str:
        return tax_id_text(order.buyer_tax_id) or "-"

    @admin.display(description=_("página do comprador"))
    def permalink(self, order: Order) -> str:
        return format_html('<a href="{}" target="_blank" rel="noreferrer">{}</a>', order.permalink_url, _("abrir"))

    # --- bulk action without input ------------------------------------------------------------------------
    @admin.action(description=_("Marcar como entregue (tudo o que foi enviado)"), permissions=["ship"])
    def mark_delivered_action(self, request: HttpRequest, queryset: QuerySet[Order]) -> None:
        done = 0
        for order in queryset.order_by("pk"):
            try:
                order_mark_delivered(order_id=order.public_id, actor=request.user.get_username())
                done += 1
            except OrderError as error:
                self.message_user(request, f"#{order.number}: {error.message}", messages.WARNING)
        if done:
            delivered = ngettext("%(n)d pedido marcado como entregue.", "%(n)d pedidos marcados como entregues.", done)
            self.message_user(request, delivered % {"n": done}, messages.SUCCESS)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Bulk actions other apps add (`settings.ORDERS_ADMIN_ACTIONS`, dotted paths of admin action functions)
        # without orders importing them: the shop's "Comprar etiqueta" for a selection.
        self.actions = [*self.actions, *(import_string(p) for p in getattr(settings, "ORDERS_ADMIN_ACTIONS", ()))]
        # and list filters (`settings.ORDERS_ADMIN_LIST_FILTERS`): the shop's "Etiqueta não comprada".
        self.list_filter = [
            *self.list_filter,
            *(import_string(p) for p in getattr(settings, "ORDERS_ADMIN_LIST_FILTERS", ())),
        ]

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        # Under the list, the money of what the filters select, per payment method (QA walk, closing the month:
        # "how much did we sell, discount, charge in interest, refund, receive net?" had no answer on screen).
        response = super().changelist_view(request, extra_context)
        changelist = getattr(response, "context_data", None) and response.context_data.get("cl")
        if changelist is None or not self.has_revenue_permission(request):
            return response  # the sums of a month are the shop's revenue: Atendimento and Expedição list without them
        if changelist.result_count > MONEY_SUMMARY_MAX_ORDERS:
            # Summing every order of the shop's life on each list view costs too much: ask for a month instead.
            response.context_data["money_summary_hint"] = _(
                "Filtre por mês (data do pedido ou mês do pagamento) para ver os valores dos pedidos filtrados."
            )
        else:
            columns = orders_money_summary(changelist.queryset, method_label=payment_type_label)
            # One row per measure, one column per payment method and the total: fits beside the filters.
            response.context_data["money_summary"] = (
                {
                    "methods": [column.label for column in columns],
                    "rows": [
                        (
                            label,
                            [
                                str(getattr(c, field)) if field == "count" else format_brl(getattr(c, field))
                                for c in columns
                            ],
                        )
                        for field, label in MONEY_SUMMARY_ROWS
                    ],
                }
                if columns
                else None
            )
        return response

    def has_ship_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("orders.ship_order")

    def has_revenue_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("orders.view_revenue")

    # --- URLs: action pages and CSV export ----------------------------------------------------------------
    def get_urls(self) -> list:
        wrap: Callable = self.admin_site.admin_view
        custom = [
            path("export.csv", wrap(self.export_csv_view), name="orders_order_export_csv"),
            path("export.xlsx", wrap(self.export_xlsx_view), name="orders_order_export_xlsx"),
            path("export-financeiro.csv", wrap(self.export_finance_view), name="orders_order_export_finance_csv"),
            path("<str:public_id>/action/<slug:slug>/", wrap(self.action_view), name="orders_order_action"),
        ]
        return custom + super().get_urls()

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None):
        order = self.get_object(request, object_id)
        allowed = []
        if order is not None:
            offered = available_actions(order)
            for slug, (perm, title, _form) in ACTIONS.items():
                if slug in offered and request.user.has_perm(perm):
                    allowed.append((reverse("admin:orders_order_action", args=[order.public_id, slug]), title))
        panels = render_panels("ORDERS_ADMIN_PANELS", request, order) if order is not None else []
        lead = render_panels("ORDERS_ADMIN_LEAD_PANELS", request, order) if order is not None else []
        context = {**(extra_context or {}), "order_actions": allowed, "order_panels": panels, "order_lead_panels": lead}
        return super().change_view(request, object_id, form_url, context)

    def action_view(self, request: HttpRequest, public_id: str, slug: str) -> HttpResponse:
        if slug not in ACTIONS:
            raise Http404
        perm, title, form_class = ACTIONS[slug]
        if not request.user.has_perm(perm):
            raise PermissionDenied
        # Annotated as the list is: the page's summary said "Pedido recebido" for a pickup order already ready.
        order = with_pickup_ready(Order.objects.prefetch_related("lines")).filter(public_id=public_id).first()
        if order is None:
            raise Http404
        change_url = reverse("admin:orders_order_change", args=[order.pk])
        if slug not in available_actions(order):
            # A stale page or a typed URL: refuse in words, change nothing.
            refusal = action_refusal(order, slug) or _(
                "“%(action)s” não se aplica ao pedido #%(n)s na situação atual (%(status)s, %(payment)s)."
            ) % {
                "action": title,
                "n": order.number,
                "status": self.status_words(order),
                "payment": order.get_payment_status_display(),
            }
            self.message_user(request, refusal, messages.ERROR)
            return HttpResponseRedirect(change_url)
        # A link may preselect a choice (?request=… from the returns queue); only the form's own fields.
        initial = {name: value for name, value in request.GET.items() if name in form_class.base_fields}
        form = form_class(request.POST if request.method == "POST" else None, order=order, initial=initial)
        if request.method == "POST" and form.is_valid():
            try:
                warnings: list[str] = []
                message = perform_action(slug, order, form, request.user.get_username(), warnings)
            except OrderError as error:
                form.add_service_error(error)
            else:
                self.message_user(request, message, messages.SUCCESS)
                for warning in warnings:
                    self.message_user(request, warning, messages.WARNING)
                return HttpResponseRedirect(reverse("admin:orders_order_change", args=[order.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "order": order,
            "status_words": self.status_words(order),
            "form": form,
            "title": f"{title} — #{order.number}",
            "action_title": title,
            "change_url": reverse("admin:orders_order_change", args=[order.pk]),
        }
        return TemplateResponse(request, "orders/admin/action_form.html", context)

    def _filtered_queryset(self, request: HttpRequest) -> QuerySet[Order]:
        if not self.has_view_permission(request):
            raise PermissionDenied
        changelist = self.get_changelist_instance(request)  # the export follows the list's filters
        return changelist.get_queryset(request)

    def _export_queryset(self, request: HttpRequest) -> QuerySet[Order]:
        return self._filtered_queryset(request).prefetch_related(
            Prefetch("lines", queryset=OrderLine.objects.order_by("position", "id")),
            Prefetch("fulfillment_events", queryset=FulfillmentEvent.objects.order_by("occurred_at", "id")),
            Prefetch("adjustments", queryset=Adjustment.objects.order_by("occurred_at", "id")),
        )

    def export_csv_view(self, request: HttpRequest) -> StreamingHttpResponse:
        queryset = self._export_queryset(request)
        response = StreamingHttpResponse(
            csv_rows(queryset.iterator(chunk_size=500)), content_type="text/csv; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="pedidos-{timezone.localdate():%Y%m%d}.csv"'
        return response

    def export_finance_view(self, request: HttpRequest) -> StreamingHttpResponse:
        """One row per order with the money the accountant closes the month with, and the order's NF-e: the
        revenue, for who may see it (`orders.view_revenue`)."""
        if not self.has_revenue_permission(request):
            raise PermissionDenied
        queryset = orders_with_payment_date(self._filtered_queryset(request)).prefetch_related(
            Prefetch("adjustments", queryset=Adjustment.objects.order_by("occurred_at", "id")),
        )
        response = StreamingHttpResponse(
            finance_csv_rows(queryset.iterator(chunk_size=500)), content_type="text/csv; charset=utf-8"
        )
        name = f"pedidos-financeiro-{timezone.localdate():%Y%m%d}.csv"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response

    def export_xlsx_view(self, request: HttpRequest) -> HttpResponse:
        queryset = self._export_queryset(request)
        response = HttpResponse(
            xlsx_bytes(queryset.iterator(chunk_size=500)),
            content_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        )
        response["Content-Disposition"] = f'attachment; filename="pedidos-{timezone.localdate():%Y%m%d}.xlsx"'
        return response


class RequestedByFilter(admin.SimpleListFilter):
    # The field's own name ("pedida por") made Django's filter title read "Por pedida por".
    title = _("quem pediu")
    parameter_name = "requested_by"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(value, str(label)) for value, label in ReturnRequester.choices]

    def queryset(self, request: HttpRequest, queryset: QuerySet[ReturnRequest]) -> QuerySet[ReturnRequest]:
        return queryset.filter(requested_by=self.value()) if self.value() else queryset


@admin.register(ReturnRequest)
class ReturnRequestAdmin(ReadOnlyAdmin):
    """The queue of returns buyers and platforms asked for (issue 35). Read-only: each step is the order's
    "Devolução solicitada" action (approve, reject, receive, refund), which calls orders.services.returns."""

    list_display = ["public_id", "order_link", "status", "reason_code", "requested_by", "created_at", "next_step"]
    list_filter = ["status", "reason_code", RequestedByFilter]
    search_fields = ["public_id", "order__public_id", "order__buyer_email"]
    list_select_related = ["order"]
    # Read-only: each field as staff read it (items by title, money in reais) rather than as stored.
    fields = [
        "public_id", "order", "status", "reason_code", "reason", "items", "requested_by", "platform_id",
        "request_key", "staff_note", "refund", "return_adjustment_id", "refund_adjustment_id", "created_at",
        "updated_at",
    ]  # fmt: skip
    readonly_fields = fields

    @admin.display(description=_("pedido"), ordering="order__number")
    def order_link(self, obj: ReturnRequest) -> str:
        return format_html(
            '<a href="{}">#{}</a>', reverse("admin:orders_order_change", args=[obj.order_id]), obj.order.number
        )

    @admin.display(description=_("itens"))
    def items(self, obj: ReturnRequest) -> str:
        lines = {line.public_id: line for line in obj.order.lines.all()}
        rows = []
        for item in obj.line_items:
            line = lines.get(str(item["id"]))
            rows.append((item["quantity"], f"{line.title} ({line.sku})" if line else item["id"]))
        return format_html_join(mark_safe("<br>"), "{} × {}", rows)

    @admin.display(description=_("valor reembolsado"))
    def refund(self, obj: ReturnRequest) -> str:
        return format_brl(obj.refund_amount)

    @admin.display(description=_("próximo passo"))
    def next_step(self, obj: ReturnRequest) -> str:
        if obj.status in ("rejected", "refund_pending", "refunded"):  # nothing for staff to do on the request
            return ""
        url = reverse("admin:orders_order_action", args=[obj.order.public_id, "return-request"])
        return format_html('<a class="button" href="{}?request={}">{}</a>', url, obj.public_id, _("Analisar"))
