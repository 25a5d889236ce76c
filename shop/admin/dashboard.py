"""The admin home's numbers (a selector: reads only, a fixed number of queries).

Definitions, so every number means one thing and its link opens exactly the rows it counts:
- sales: orders whose payment was confirmed in the period (local days, America/Sao_Paulo; the payment date of
  the finance export, `orders_with_payment_date`: a boleto or Pix com vencimento paid today for last week's order
  is today's money) that was received and kept (payment "pago" or "reembolsado em parte") and that were not
  cancelled (a cancelled order's refund may still be pending: the money is promised back); revenue = Σ (order
  total − refunded); average ticket = revenue ÷ count, rounded down to the centavo; the chart by the same date;
- to ship: paid delivery orders with something still to send ("pedido recebido" / "enviado em parte");
- pickups waiting: the same for store pickup;
- Pix awaiting payment: active Pix charges; boletos awaiting payment: issued boletos (not paid, not expired);
  refunds pending: orders with a refund promised and not settled yet,
  whatever the means (Pix devolução, card estorno, or one the merchant gives back outside the shop);
- low stock: active variants with 0 < stock ≤ their alert threshold;
- abandoned today: checkouts created today that did not become an order;
- reminders sent: abandoned-checkout reminder e-mails sent (ever); recovered: those checkouts bought after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db.models import Count, Exists, F, Func, IntegerField, Max, OuterRef, Q, Subquery, Sum
from django.db.models.functions import TruncDate
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from fiscal.models import FiscalDocument
from orders.models import Adjustment, Order, ReturnRequest
from orders.selectors import orders_with_payment_date
from payments.models import BoletoPayment, PixCharge, PixInfraction
from shop.checkout.reminders import reminder_stats
from shop.models import Checkout, Variant

PAID_KEPT = ("paid", "partially_refunded")
OPEN_TO_FULFIL = ("placed", "partially_shipped")
NOT_CANCELED = ("placed", "partially_shipped", "shipped", "delivered", "returned")
CHART_DAYS = 30
RETURNS_WAITING = ("requested", "received")  # the store answers, or refunds what came back


@dataclass(frozen=True)
class SalesFigure:
    label: str
    days: int
    count: int
    revenue: int
    average_ticket: int
    url: str


@dataclass(frozen=True)
class Counter:
    key: str
    label: str
    value: int
    url: str
    permission: str  # to open `url`: the home shows the counter only to who has it (a link that 403s is no help)


@dataclass(frozen=True)
class DayBar:
    day: date
    revenue: int


@dataclass(frozen=True)
class Dashboard:
    sales: tuple[SalesFigure, ...]
    counters: tuple[Counter, ...]
    chart: tuple[DayBar, ...]


def _start_of(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=ZoneInfo(settings.TIME_ZONE))


def _url(name: str, **params: str) -> str:
    return f"{reverse(name)}?{urlencode(params)}" if params else reverse(name)


def _sales(today: date, since: dict[int, datetime]) -> tuple[tuple[SalesFigure, ...], tuple[DayBar, ...]]:
    """The sales figures ("Hoje", 7 and 30 days) and the 30 days' chart: the shop's revenue."""
    sold = orders_with_payment_date(Order.objects.filter(payment_status__in=PAID_KEPT).exclude(status="canceled"))
    net = F("total_amount") - F("refunded_amount")
    aggregates = sold.aggregate(
        **{f"n{days}": Count("pk", filter=Q(payment_confirmed_at__gte=start)) for days, start in since.items()},
        **{f"r{days}": Sum(net, filter=Q(payment_confirmed_at__gte=start)) for days, start in since.items()},
    )
    labels = {1: _("Hoje"), 7: _("Últimos 7 dias"), 30: _("Últimos 30 dias")}
    sales = []
    for days, start in since.items():
        count, revenue = aggregates[f"n{days}"] or 0, aggregates[f"r{days}"] or 0
        url = _url(
            "admin:orders_order_changelist",
            payment_status__in=",".join(PAID_KEPT),
            status__in=",".join(NOT_CANCELED),
            pago_desde=start.date().isoformat(),  # orders.admin.PaidSinceFilter: the same payment date
        )
        sales.append(SalesFigure(labels[days], days, count, revenue, revenue // count if count else 0, url))

    per_day = dict(
        sold.filter(payment_confirmed_at__gte=_start_of(today - timedelta(days=CHART_DAYS - 1)))
        .annotate(day=TruncDate("payment_confirmed_at", tzinfo=ZoneInfo(settings.TIME_ZONE)))
        .values("day")
        .annotate(revenue=Sum(net))
        .values_list("day", "revenue")
    )
    chart = tuple(
        DayBar(day, per_day.get(day, 0) or 0)
        for day in (today - timedelta(days=offset) for offset in range(CHART_DAYS - 1, -1, -1))
    )
    return tuple(sales), chart


REVENUE_PERMISSION = "orders.view_revenue"  # "Pode ver faturamento"


def sees_revenue(user: Any) -> bool:
    """Who may read what the shop makes — sales, the chart, each next charge's amount, a subscription's prices:
    Financeiro and owners; Atendimento and Expedição work orders and subscriptions one by one without it."""
    return bool(user.has_perm(REVENUE_PERMISSION))


def dashboard_get(*, now: datetime | None = None, revenue: bool = True) -> Dashboard:
    """All numbers of the admin home. Queries: 1 sales + 1 chart + 9 counters.

    `revenue=False` (a staff member without `orders.view_revenue`): no sales figures and no chart, and their two
    queries are not run."""
    now = timezone.localtime(now or timezone.now(), ZoneInfo(settings.TIME_ZONE))
    today = now.date()
    since = {days: _start_of(today - timedelta(days=days - 1)) for days in (1, 7, 30)}
    sales, chart = _sales(today, since) if revenue else ((), ())
    to_fulfil = Order.objects.filter(payment_status__in=PAID_KEPT, status__in=OPEN_TO_FULFIL).aggregate(
        ship=Count("pk", filter=Q(fulfillment_method="shipping")),
        pickup=Count("pk", filter=Q(fulfillment_method="pickup")),
    )
    fulfil_params = {"payment_status__in": ",".join(PAID_KEPT), "status__in": ",".join(OPEN_TO_FULFIL)}
    # One statement for both: the returns' count is an uncorrelated subquery, run once beside the orders' scan.
    after_sale = Order.objects.aggregate(
        refunds=Count(
            "pk", filter=Exists(Adjustment.objects.filter(order=OuterRef("pk"), type="refund", status="pending"))
        ),
        returns=Max(
            Subquery(
                ReturnRequest.objects.filter(status__in=RETURNS_WAITING)
                .order_by()
                .values(n=Func(F("pk"), function="COUNT")),
                output_field=IntegerField(),
            )
        ),
    )
    abandoned = Checkout.objects.filter(created_at__gte=since[1]).exclude(status="completed")
    reminders = reminder_stats()
    counters = (
        Counter(
            "to_ship",
            _("Pedidos a enviar"),
            to_fulfil["ship"],
            _url("admin:orders_order_changelist", fulfillment_method__exact="shipping", **fulfil_params),
            "orders.view_order",
        ),
        Counter(
            "pickups",
            _("Retiradas aguardando"),
            to_fulfil["pickup"],
            _url("admin:orders_order_changelist", fulfillment_method__exact="pickup", **fulfil_params),
            "orders.view_order",
        ),
        Counter(
            "pix_pending",
            _("Pix aguardando pagamento"),
            PixCharge.objects.filter(status="active").count(),
            _url("admin:payments_pixcharge_changelist", status__exact="active"),
            "payments.view_pixcharge",
        ),
        Counter(
            # QA walk: Pix had its counter, boletos waiting for the bank's payment report had none
            "boletos_pending",
            _("Boletos aguardando pagamento"),
            BoletoPayment.objects.filter(status=BoletoPayment.Status.ISSUED).count(),
            _url("admin:payments_boletopayment_changelist", status__exact="issued"),
            "payments.view_boletopayment",
        ),
        Counter(
            "refunds_pending",
            _("Reembolsos pendentes"),
            after_sale["refunds"],
            _url("admin:orders_order_changelist", refund="pending"),
            "orders.view_order",
        ),
        Counter(
            # A buyer's return waits for the store to answer it, or (received) to refund it: only the order's
            # inline showed it, so nobody saw a new request (QA walk). Approved ones wait for the parcel.
            "returns_open",
            _("Devoluções a responder ou reembolsar"),
            after_sale["returns"] or 0,
            _url("admin:orders_returnrequest_changelist", status__in=",".join(RETURNS_WAITING)),
            "orders.view_returnrequest",
        ),
        Counter(
            # MED 2.0: the payer's bank disputes a received Pix; the order's shipment is held until staff answer
            "disputes_open",
            _("Pix contestados (MED) a responder"),
            PixInfraction.objects.filter(status=PixInfraction.Status.OPEN).count(),
            _url("admin:payments_pixinfraction_changelist", status__exact="open"),
            "payments.view_pixinfraction",
        ),
        Counter(
            # blocked (data missing: the buyer's CPF, a product's NCM) or refused by SEFAZ: the merchant fixes
            # the data and re-issues from the order; until then the order has no NF-e
            "nfe_problems",
            _("NF-e com problema"),
            FiscalDocument.objects.filter(status=FiscalDocument.Status.REJECTED).count(),
            _url("admin:fiscal_fiscaldocument_changelist", status__exact="rejected"),
            "fiscal.view_fiscaldocument",
        ),
        Counter(
            "low_stock",
            _("Variantes com estoque baixo"),
            Variant.objects.filter(stock__gt=0, stock__lte=F("low_stock_threshold")).count(),
            _url("admin:shop_variant_changelist", stock_state="low"),
            "shop.view_variant",
        ),
        Counter(
            "abandoned",
            _("Carrinhos abandonados hoje"),
            abandoned.count(),
            _url(
                "admin:shop_checkout_changelist",
                created_at__gte=since[1].isoformat(),
                status__in="incomplete,requires_escalation,ready_for_complete,complete_in_progress,canceled",
            ),
            "shop.view_checkout",
        ),
        Counter(
            "reminders_sent",
            _("Lembretes de carrinho enviados"),
            reminders.sent,
            _url("admin:shop_checkoutreminder_changelist", sent="yes"),
            "shop.view_checkoutreminder",
        ),
        Counter(
            "reminders_recovered",
            _("Carrinhos recuperados após o lembrete"),
            reminders.recovered,
            _url("admin:shop_checkoutreminder_changelist", sent="yes", recovered="yes"),
            "shop.view_checkoutreminder",
        ),
    )
    return Dashboard(sales, counters, chart)


def chart_svg_bars(chart: tuple[DayBar, ...], *, width: int = 600, height: int = 120) -> list[dict[str, object]]:
    """Bar geometry for the inline SVG (server-side; no JavaScript, no CDN)."""
    top = max((bar.revenue for bar in chart), default=0) or 1
    step = width / max(len(chart), 1)
    bars = []
    for index, bar in enumerate(chart):
        bar_height = round(bar.revenue * (height - 4) / top) if bar.revenue else 0
        # Strings, not floats: templates would localise 20.5 as "20,5", which is not SVG.
        bars.append(
            {
                "x": f"{index * step + 1:.1f}",
                "y": str(height - bar_height),
                "width": f"{step - 2:.1f}",
                "height": str(bar_height),
                "day": bar.day,
                "revenue": bar.revenue,
            }
        )
    return bars
