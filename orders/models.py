"""What was sold: orders, lines, fulfillment expectations and events, adjustments, timeline, e-mails.

Money is integer centavos. Public ids are prefixed and random; primary keys never leave the process.
Fulfillment events, adjustments and timeline events are append-only (BCP §7): services insert them and
only an adjustment's status may move `pending → completed|failed` in place.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from kernel.ids import new_permalink_token, new_public_id
from orders.choices import (
    AdjustmentStatus,
    AdjustmentType,
    DeliveryDaysFrom,
    EmailKind,
    FulfillmentEventType,
    FulfillmentMethod,
    LineStatus,
    OrderStatus,
    PaymentDispute,
    PaymentStatus,
    PaymentType,
    ReturnCondition,
    ReturnReason,
    ReturnRequester,
    ReturnStatus,
)
from orders.labels import timeline_kind_label


def new_order_id() -> str:
    return new_public_id("order")


def new_expectation_id() -> str:
    return new_public_id("exp")


def new_event_id() -> str:
    return new_public_id("evt")


def new_adjustment_id() -> str:
    return new_public_id("adj")


def new_return_id() -> str:
    return new_public_id("ret")


class AppendOnlyError(RuntimeError):
    """Raised when code tries to edit or delete an append-only record."""


class Order(models.Model):
    public_id = models.CharField(_("ID público"), max_length=40, unique=True, default=new_order_id, editable=False)
    # Human number, given at placement from OrderNumberCounter (from 1001, no gaps).
    number = models.BigIntegerField(_("número"), unique=True, editable=False)
    checkout_id = models.CharField(_("checkout"), max_length=64, unique=True, editable=False)
    status = models.CharField(_("situação"), max_length=20, choices=OrderStatus.choices, default=OrderStatus.PLACED)
    payment_status = models.CharField(
        _("pagamento"), max_length=20, choices=PaymentStatus.choices, default=PaymentStatus.PENDING
    )
    # None = storefront (contracts.md): kept distinct from an empty string.
    platform_id = models.CharField(_("plataforma BCP"), max_length=64, null=True, blank=True)  # noqa: DJ001
    language = models.CharField(_("idioma"), max_length=8, default="pt-br")
    currency = models.CharField(_("moeda"), max_length=3, default="BRL")
    # The store policies in force when the order was placed (terms, privacy, returns, shipping), as the shop
    # read them then; the order's BCP `policies[]` comes from here, not from today's store settings.
    policies = models.JSONField(_("políticas na compra"), default=list, blank=True)

    buyer_first_name = models.CharField(_("nome"), max_length=120, blank=True)
    buyer_last_name = models.CharField(_("sobrenome"), max_length=120, blank=True)
    buyer_email = models.EmailField(_("e-mail"), max_length=254, blank=True)
    buyer_phone = models.CharField(_("telefone"), max_length=32, blank=True)
    buyer_tax_id = models.CharField(_("CPF/CNPJ"), max_length=14, blank=True)

    fulfillment_method = models.CharField(
        _("forma de entrega"), max_length=20, blank=True, choices=FulfillmentMethod.choices
    )
    fulfillment_title = models.CharField(_("opção de entrega"), max_length=120, blank=True)
    # The chosen method's carrier ("Correios", "Entrega local"…): the shipment form starts from it, and a
    # Correios shipment needs its tracking code while the store's own courier has none.
    fulfillment_carrier = models.CharField(_("transportadora da entrega"), max_length=80, blank=True, default="")
    fulfillment_description = models.CharField(_("prazo"), max_length=255, blank=True)
    # street, number, complement, neighborhood, city, state, postal_code, country (+ name for pickup).
    destination = models.JSONField(_("endereço"), default=dict, blank=True)

    # The checkout totals, copied: [{"type", "amount", "display_text"?}] in BCP §6 order.
    totals = models.JSONField(_("totais"), default=list)
    total_amount = models.BigIntegerField(_("total"), default=0)

    payment_handler_id = models.CharField(_("meio de pagamento"), max_length=64, blank=True)
    payment_type = models.CharField(_("tipo de pagamento"), max_length=16, blank=True, choices=PaymentType.choices)
    payment_reference = models.CharField(_("referência do pagamento"), max_length=64, blank=True)
    payment_txid = models.CharField(_("txid Pix"), max_length=64, blank=True)
    paid_amount = models.BigIntegerField(_("valor pago"), default=0)
    refunded_amount = models.BigIntegerField(_("valor reembolsado"), default=0)
    # MED 2.0: the payer disputed the Pix (orders.services.disputes); fulfillment refuses to ship while "open".
    payment_dispute = models.CharField(
        _("disputa do pagamento"), max_length=16, choices=PaymentDispute.choices, blank=True, default=""
    )
    payment_dispute_id = models.CharField(_("disputa (MED)"), max_length=40, blank=True, default="")
    # Card parcelamento chosen at checkout; 1 for Pix and for 1x ("à vista").
    installments = models.PositiveSmallIntegerField(_("parcelas"), default=1)
    installment_amount = models.BigIntegerField(_("valor da parcela"), default=0)
    first_installment = models.BigIntegerField(_("valor da 1ª parcela"), default=0)

    permalink_token = models.CharField(max_length=64, unique=True, default=new_permalink_token, editable=False)
    placed_at = models.DateTimeField(_("data"), auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The BCP §7 order as presented (without `permalink_url`, which follows BCP_PUBLIC_URL), as JSON text in
    # key order; rewritten by every order service in its own transaction (services._common.notify_changed),
    # so Get Order is one read. Empty for orders written before it existed: they are rendered on read.
    bcp_json = models.TextField(blank=True, default="", editable=False)
    # When `bcp_json` was rendered (its `updated_at`), set with it: `updated_at` is stamped again by every save.
    bcp_json_at = models.DateTimeField(null=True, blank=True, editable=False)
    canceled_at = models.DateTimeField(_("cancelado em"), null=True, blank=True)

    class Meta:
        verbose_name = _("pedido")
        verbose_name_plural = _("pedidos")
        ordering = ["-number"]
        permissions = [
            ("ship_order", _("Pode registrar envios e entregas")),
            ("refund_order", _("Pode reembolsar e cancelar pedidos")),
            # The shop's revenue (admin home's sales, ticket médio and chart, the list's money summary, the
            # finance export): the owner's and Financeiro's, not every staff member who answers or ships orders.
            ("view_revenue", _("Pode ver faturamento")),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(paid_amount__gte=0), name="order_paid_amount_nonnegative"),
            models.CheckConstraint(
                condition=Q(installments__gte=1) & Q(installments__lte=24), name="order_installments_range"
            ),
            models.CheckConstraint(
                condition=Q(refunded_amount__gte=0) & Q(refunded_amount__lte=F("paid_amount")),
                name="order_refunded_within_paid",
            ),
        ]
        indexes = [models.Index(fields=["status", "payment_status"]), models.Index(fields=["buyer_email"])]

    def __str__(self) -> str:
        return f"#{self.number}"

    @property
    def permalink_url(self) -> str:
        return self.permalink_url_of(self.permalink_token)

    @staticmethod
    def permalink_url_of(token: str) -> str:
        return f"{settings.BCP_PUBLIC_URL}/orders/{token}"

    @property
    def permalink_path(self) -> str:
        return f"/orders/{self.permalink_token}"

    @property
    def buyer_name(self) -> str:
        return f"{self.buyer_first_name} {self.buyer_last_name}".strip()

    @property
    def is_canceled(self) -> bool:
        return self.status == OrderStatus.CANCELED


def derive_line_status(*, total: int, fulfilled: int) -> str:
    """BCP §7: total == 0 → removed; fulfilled == total → fulfilled; fulfilled > 0 → partial; else processing."""
    if total == 0:
        return LineStatus.REMOVED
    if fulfilled == total:
        return LineStatus.FULFILLED
    if fulfilled > 0:
        return LineStatus.PARTIAL
    return LineStatus.PROCESSING


class OrderLine(models.Model):
    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="lines")
    # The checkout line public id (li_…) is kept as the order line id (BCP §7 lines keep their ids).
    public_id = models.CharField(_("ID do item"), max_length=64, unique=True, editable=False)
    position = models.PositiveIntegerField(default=0)
    sku = models.CharField(_("SKU"), max_length=64, db_index=True)
    title = models.CharField(_("título"), max_length=255)
    unit_price = models.BigIntegerField(_("preço unitário"))
    image_url = models.CharField(_("imagem"), max_length=500, blank=True)
    quantity_original = models.PositiveIntegerField(_("quantidade original"))
    quantity_total = models.PositiveIntegerField(_("quantidade atual"))
    # Handed to the carrier (or picked up) and received by the buyer; `fulfilled` = max of both.
    quantity_shipped = models.PositiveIntegerField(_("enviada"), default=0)
    quantity_delivered = models.PositiveIntegerField(_("entregue"), default=0)
    quantity_fulfilled = models.PositiveIntegerField(_("atendida"), default=0)

    class Meta:
        verbose_name = _("item do pedido")
        verbose_name_plural = _("itens do pedido")
        ordering = ["position", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(unit_price__gte=0), name="orderline_price_nonnegative"),
            models.CheckConstraint(
                condition=Q(quantity_fulfilled__lte=F("quantity_total")), name="orderline_fulfilled_le_total"
            ),
            models.CheckConstraint(
                condition=Q(quantity_shipped__lte=F("quantity_total")) & Q(quantity_delivered__lte=F("quantity_total")),
                name="orderline_shipped_delivered_le_total",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.quantity_total}× {self.title}"

    @property
    def status(self) -> str:
        return derive_line_status(total=self.quantity_total, fulfilled=self.quantity_fulfilled)

    @property
    def line_total(self) -> int:
        return self.unit_price * self.quantity_total

    @property
    def original_total(self) -> int:
        """What the line came to when the order was placed (the order's subtotal still counts it)."""
        return self.unit_price * self.quantity_original


class FulfillmentExpectation(models.Model):
    """A promise to the buyer (BCP §7 expectation); may be split, merged or re-described."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="expectations")
    public_id = models.CharField(
        _("ID da previsão"), max_length=40, unique=True, default=new_expectation_id, editable=False
    )
    position = models.PositiveIntegerField(default=0)
    method_type = models.CharField(_("forma"), max_length=20)
    destination = models.JSONField(_("destino"), default=dict, blank=True)
    description = models.CharField(_("descrição"), max_length=255, blank=True)
    fulfillable_on = models.CharField(_("disponível em"), max_length=40, blank=True, default="now")
    # The business days the delivery option promised at checkout (carrier quote or table rate: "Chega em 3 a 5 dias
    # úteis") and what they count from, so the buyer's page and Get Order can give dates (orders/arrival.py).
    # Null for orders placed before they were kept, for pickup, and once staff re-word the promise.
    days_min = models.PositiveSmallIntegerField(_("prazo mínimo (dias úteis)"), null=True, blank=True, editable=False)
    days_max = models.PositiveSmallIntegerField(_("prazo máximo (dias úteis)"), null=True, blank=True, editable=False)
    days_from = models.CharField(
        _("prazo contado"), max_length=10, blank=True, default="", choices=DeliveryDaysFrom.choices, editable=False
    )
    # Days from payment (`days_from` payment): the shop's handling days (payment → posting) included in days_min/max;
    # once shipped the carrier's part (days − handling) counts from the shipment.
    handling_days = models.PositiveSmallIntegerField(
        _("prazo de postagem (dias úteis)"), null=True, blank=True, editable=False
    )
    # [{"id": "li_…", "quantity": n ≥ 1}]
    line_items = models.JSONField(_("itens"), default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("expectativa de entrega")
        verbose_name_plural = _("expectativas de entrega")
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.public_id


class AppendOnlyModel(models.Model):
    """Rows are inserted once; edits and deletes are refused (append-only ledger)."""

    class Meta:
        abstract = True

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None and not getattr(self, "_allow_update", False):
            raise AppendOnlyError(f"{type(self).__name__} is append-only")
        super().save(*args, **kwargs)

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError(f"{type(self).__name__} is append-only")


class FulfillmentEvent(AppendOnlyModel):
    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="fulfillment_events")
    public_id = models.CharField(_("ID do evento"), max_length=40, unique=True, default=new_event_id, editable=False)
    # An open string (BCP §7 lists well-known values; others may be used).
    type = models.CharField(_("tipo"), max_length=40)
    line_items = models.JSONField(_("itens"), default=list)  # [{"id": "li_…", "quantity": n ≥ 1}]
    tracking_number = models.CharField(_("código de rastreio"), max_length=64, blank=True, db_index=True)
    tracking_url = models.URLField(_("link de rastreio"), max_length=500, blank=True)
    carrier = models.CharField(_("transportadora"), max_length=80, blank=True)
    description = models.CharField(_("descrição"), max_length=255, blank=True)
    # A `tracking_corrected` event names the shipment whose code it corrects (the shipment is never edited).
    corrects = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="corrections", editable=False
    )
    occurred_at = models.DateTimeField(_("ocorrido em"))
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("evento de entrega")
        verbose_name_plural = _("eventos de entrega")
        ordering = ["occurred_at", "id"]

    def __str__(self) -> str:
        return str(FulfillmentEventType(self.type).label) if self.type in FulfillmentEventType.values else self.type


class Adjustment(AppendOnlyModel):
    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="adjustments")
    public_id = models.CharField(
        _("ID do ajuste"), max_length=40, unique=True, default=new_adjustment_id, editable=False
    )
    type = models.CharField(_("tipo"), max_length=40)
    status = models.CharField(_("situação"), max_length=16, choices=AdjustmentStatus.choices)
    line_items = models.JSONField(_("itens"), default=list, blank=True)  # signed quantities
    totals = models.JSONField(_("totais"), default=list, blank=True)  # signed; negative = money back
    # Signed money of the adjustment (the `total` entry of `totals`); negative = money back to the buyer.
    amount = models.BigIntegerField(_("valor"), default=0)
    description = models.CharField(_("descrição"), max_length=255, blank=True)
    # A return's: the state the items came back in, as data (shown in the reader's language, not stored in words).
    condition = models.CharField(_("estado dos itens"), max_length=16, choices=ReturnCondition.choices, blank=True)
    occurred_at = models.DateTimeField(_("ocorrido em"))
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("ajuste")
        verbose_name_plural = _("ajustes")
        ordering = ["occurred_at", "id"]

    def __str__(self) -> str:
        return str(AdjustmentType(self.type).label) if self.type in AdjustmentType.values else self.type


class OrderEvent(AppendOnlyModel):
    """The order timeline: every state change and every note, in order."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="timeline")
    kind = models.CharField(_("tipo"), max_length=40)
    message = models.TextField(_("mensagem"), blank=True)
    # Internal notes are for staff only: never on the permalink page, e-mails or BCP.
    internal = models.BooleanField(_("interno"), default=False)
    actor = models.CharField(_("autor"), max_length=150, blank=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(_("data"), auto_now_add=True)

    class Meta:
        verbose_name = _("evento do pedido")
        verbose_name_plural = _("linha do tempo")
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return timeline_kind_label(self.kind)


class EmailDelivery(models.Model):
    """One buyer e-mail; unique (order, kind, ref) so a replayed event never sends twice."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="email_deliveries")
    kind = models.CharField(_("tipo"), max_length=32, choices=EmailKind.choices)
    # What the e-mail is about (event or adjustment id); "" for once-per-order e-mails; "resend:<n>" on resend.
    ref = models.CharField(max_length=64, blank=True, default="")
    to_email = models.EmailField(max_length=254)
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # A task is sending it until then (claimed in one short transaction, sent with no lock held).
    claimed_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("e-mail enviado")
        verbose_name_plural = _("e-mails enviados")
        ordering = ["created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["order", "kind", "ref"], name="emaildelivery_once")]

    def __str__(self) -> str:
        return f"{self.kind} → {self.to_email}"


class ApiIdempotencyRecord(models.Model):
    """A back-office API write done under an `Idempotency-Key`: a replay returns this response, never runs twice."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)  # sha256 of method, path and canonical body
    status_code = models.PositiveSmallIntegerField()
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("chave de idempotência da API")
        verbose_name_plural = _("chaves de idempotência da API")
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="api_idempotency_user_key")]

    def __str__(self) -> str:
        return self.key


class ReturnRequest(models.Model):
    """A return the buyer (order page) or the platform (BCP order_actions extension) asked for. Staff approve,
    receive (an `Adjustment` of type return through `order_return`) and refund (`order_refund`): the request
    only tracks the steps; money and quantities stay in the adjustments ledger."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="return_requests", verbose_name=_("pedido"))
    public_id = models.CharField(
        _("ID da devolução"), max_length=40, unique=True, default=new_return_id, editable=False
    )
    status = models.CharField(
        _("situação"), max_length=16, choices=ReturnStatus.choices, default=ReturnStatus.REQUESTED
    )
    reason_code = models.CharField(_("motivo"), max_length=20, choices=ReturnReason.choices)
    reason = models.CharField(_("descrição do comprador"), max_length=500, blank=True)
    line_items = models.JSONField(_("itens"), default=list)  # [{"id": "li_…", "quantity": n ≥ 1}]
    # "buyer" (the order page) or "platform" (an agent); platform_id names which.
    requested_by = models.CharField(_("pedida por"), max_length=16, choices=ReturnRequester.choices)
    platform_id = models.CharField(_("plataforma"), max_length=64, blank=True, default="")
    # A double submit of the order page's form (its nonce) finds the first request instead of adding one.
    request_key = models.CharField(_("chave da solicitação"), max_length=64, blank=True, default="", editable=False)
    staff_note = models.CharField(_("resposta da loja"), max_length=255, blank=True)
    refund_amount = models.BigIntegerField(_("valor reembolsado"), default=0)
    return_adjustment_id = models.CharField(_("ajuste de devolução"), max_length=40, blank=True, editable=False)
    refund_adjustment_id = models.CharField(_("ajuste de reembolso"), max_length=40, blank=True, editable=False)
    created_at = models.DateTimeField(_("pedida em"), auto_now_add=True)
    updated_at = models.DateTimeField(_("atualizada em"), auto_now=True)

    class Meta:
        verbose_name = _("devolução solicitada")
        verbose_name_plural = _("devoluções solicitadas")
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=ReturnStatus.values), name="returnrequest_status_valid"),
            models.CheckConstraint(condition=Q(refund_amount__gte=0), name="returnrequest_refund_nonnegative"),
            models.UniqueConstraint(
                fields=["order", "request_key"], condition=~Q(request_key=""), name="returnrequest_once_per_key"
            ),
        ]
        indexes = [models.Index(fields=["status", "created_at"])]

    def __str__(self) -> str:
        return self.public_id


from orders.outbox_models import OutboxMessage  # noqa: E402, F401  (registered with the orders app)

FIRST_NUMBER = 1001


class OrderNumberCounter(models.Model):
    """The last order number given (one row per numbering, `key="orders"`): incremented by the placement's own
    transaction (orders.services.placement._next_number), so only placed orders are numbered and a rolled-back
    placement leaves no gap. Order numbers are references for people, not a fiscal sequence (the NF-e has its
    own)."""

    key = models.CharField(max_length=32, unique=True)
    last = models.BigIntegerField()

    def __str__(self) -> str:
        return f"{self.key}: #{self.last}"
