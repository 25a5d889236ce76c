"""Checkout engine: checkouts and their lines and events, shipping methods and rates, pickup locations, coupons."""

from __future__ import annotations

import functools

from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from kernel.ids import new_public_id
from kernel.rows import RemembersLoaded
from shop.models.catalog import Variant


def new_checkout_id() -> str:
    return new_public_id("checkout")


def new_line_id() -> str:
    return new_public_id("li")


def new_location_id() -> str:
    return new_public_id("loc")


def new_destination_id() -> str:
    return new_public_id("dest")


class ShippingMethod(models.Model):
    """A way to deliver: Correios PAC/SEDEX (rates by UF or CEP range), motoboy (CEP ranges), flat, pickup.

    `code` is the stable BCP option id ("pac", "sedex", …). A shipping method serves a CEP when a
    rate matches it (a CEP-range rate wins over a UF rate) or when it is flat-rate.
    """

    KIND_SHIPPING = "shipping"
    KIND_PICKUP = "pickup"
    KIND_CHOICES = [(KIND_SHIPPING, _("Entrega")), (KIND_PICKUP, _("Retirada"))]  # labels as lists show them

    code = models.SlugField(_("código (id da opção)"), max_length=40, unique=True)
    title = models.CharField(_("título"), max_length=60)
    kind = models.CharField(_("tipo"), max_length=10, choices=KIND_CHOICES, default=KIND_SHIPPING)
    carrier = models.CharField(_("transportadora"), max_length=60, blank=True)
    # Flat price when no rate table applies (null = only rates count).
    flat_price = models.BigIntegerField(_("preço fixo (centavos)"), null=True, blank=True)
    # Free when the subtotal after discounts reaches this value (null = never free).
    free_above = models.BigIntegerField(_("frete grátis a partir de (centavos)"), null=True, blank=True)
    days_min = models.PositiveSmallIntegerField(_("prazo mínimo (dias úteis)"), default=1)
    days_max = models.PositiveSmallIntegerField(_("prazo máximo (dias úteis)"), default=5)
    # The table by weight (used when no carrier answers): each kg or part of a kg of billable weight above the
    # first adds this to the rate. Empty = the rate is the same whatever the weight.
    price_per_extra_kg = models.BigIntegerField(
        _("adicional por kg acima de 1 kg (centavos)"),
        null=True,
        blank=True,
        help_text=_("Peso cobrado: o maior entre o peso real e o cúbico (C × L × A / 6000)."),
    )
    active = models.BooleanField(_("ativo"), default=True)
    position = models.PositiveIntegerField(_("posição"), default=0)

    class Meta:
        verbose_name = _("método de entrega")
        verbose_name_plural = _("métodos de entrega")
        ordering = ["position", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(flat_price__isnull=True) | Q(flat_price__gte=0), name="shipping_flat_non_negative"
            ),
            models.CheckConstraint(condition=Q(days_max__gte=F("days_min")), name="shipping_days_ordered"),
        ]

    def __str__(self) -> str:
        return self.title


class ShippingRate(models.Model):
    """Price of a method for a UF, or for a CEP range (8-digit integers, inclusive)."""

    method = models.ForeignKey(ShippingMethod, on_delete=models.CASCADE, related_name="rates")
    uf = models.CharField(_("UF"), max_length=2, blank=True)
    cep_start = models.PositiveIntegerField(_("CEP inicial"), null=True, blank=True)
    cep_end = models.PositiveIntegerField(_("CEP final"), null=True, blank=True)
    price = models.BigIntegerField(_("preço (centavos)"))
    days_min = models.PositiveSmallIntegerField(_("prazo mínimo"), null=True, blank=True)
    days_max = models.PositiveSmallIntegerField(_("prazo máximo"), null=True, blank=True)

    class Meta:
        verbose_name = _("tarifa de entrega")
        verbose_name_plural = _("tarifas de entrega")
        ordering = ["method", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(price__gte=0), name="shipping_rate_price_non_negative"),
            models.CheckConstraint(
                condition=(~Q(uf="") & Q(cep_start__isnull=True) & Q(cep_end__isnull=True))
                | (Q(uf="") & Q(cep_start__isnull=False) & Q(cep_end__gte=F("cep_start"))),
                name="shipping_rate_uf_xor_cep_range",
            ),
        ]

    def __str__(self) -> str:
        # Read by the merchant as a row title ("PAC — SP", "Motoboy — CEP 01000-000 a 05999-999"), not codes.
        if self.uf:
            return f"{self.method.title} — {self.uf}"

        def cep(value: int | None) -> str:
            digits = f"{value or 0:08d}"
            return f"{digits[:5]}-{digits[5:]}"

        return str(
            _("%(method)s — CEP %(start)s a %(end)s")
            % {"method": self.method.title, "start": cep(self.cep_start), "end": cep(self.cep_end)}
        )


class PickupLocation(models.Model):
    public_id = models.CharField(max_length=40, unique=True, default=new_location_id, editable=False)
    name = models.CharField(_("nome"), max_length=120)
    street = models.CharField(_("logradouro"), max_length=200)
    number = models.CharField(_("número"), max_length=20)
    complement = models.CharField(_("complemento"), max_length=100, blank=True)
    neighborhood = models.CharField(_("bairro"), max_length=100)
    city = models.CharField(_("cidade"), max_length=100)
    uf = models.CharField(_("UF"), max_length=2)
    cep = models.CharField(_("CEP"), max_length=9)
    opening_hours = models.CharField(_("horário de funcionamento"), max_length=200)
    preparation_days = models.PositiveSmallIntegerField(_("pronto em (dias úteis)"), default=1)
    active = models.BooleanField(_("ativo"), default=True)
    position = models.PositiveIntegerField(_("posição"), default=0)

    class Meta:
        verbose_name = _("ponto de retirada")
        verbose_name_plural = _("pontos de retirada")
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.name


class Coupon(models.Model):
    KIND_PERCENT = "percent"
    KIND_FIXED = "fixed"
    KIND_CHOICES = [(KIND_PERCENT, _("Percentual")), (KIND_FIXED, _("Valor fixo"))]  # labels as lists show them

    # Stored upper-case; matching is case-insensitive (BCP §10).
    code = models.CharField(
        _("código"),
        max_length=40,
        unique=True,
        error_messages={"unique": _("Já existe um cupom com este código.")},
    )
    title = models.CharField(_("título"), max_length=120)
    kind = models.CharField(_("tipo"), max_length=10, choices=KIND_CHOICES)
    percent = models.PositiveSmallIntegerField(_("percentual"), null=True, blank=True)
    amount = models.BigIntegerField(_("valor (centavos)"), null=True, blank=True)
    min_subtotal = models.BigIntegerField(_("subtotal mínimo (centavos)"), default=0)
    starts_at = models.DateTimeField(_("válido a partir de"), null=True, blank=True)
    ends_at = models.DateTimeField(_("válido até"), null=True, blank=True)
    usage_limit = models.PositiveIntegerField(_("limite de usos"), null=True, blank=True)
    usage_limit_per_email = models.PositiveIntegerField(_("limite por e-mail"), null=True, blank=True)
    stackable = models.BooleanField(_("acumulável"), default=False)
    active = models.BooleanField(_("ativo"), default=True)

    class Meta:
        verbose_name = _("cupom")
        verbose_name_plural = _("cupons")
        ordering = ["code"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(kind="percent") & Q(percent__gte=1) & Q(percent__lte=100) & Q(amount__isnull=True))
                | (Q(kind="fixed") & Q(amount__gt=0) & Q(percent__isnull=True)),
                name="coupon_kind_value",
            ),
            models.CheckConstraint(condition=Q(min_subtotal__gte=0), name="coupon_min_subtotal_non_negative"),
        ]

    def __str__(self) -> str:
        return self.code

    def save(self, *args: object, **kwargs: object) -> None:
        self.code = self.code.strip().upper()
        super().save(*args, **kwargs)


# `Checkout.creator_tier`: the tiers of bcp_app/service/trust.py (shop/store/services.py AGENT_TIERS).
CREATOR_TIER_CHOICES = [
    ("anonymous", _("Agente anônimo")),
    ("registered", _("Plataforma com chave de API")),
    ("signed", _("Plataforma que assina as requisições (RFC 9421)")),
]


class Checkout(RemembersLoaded, models.Model):
    """A BCP checkout session (BCP.md §4), for agents and for the storefront alike."""

    # The engine's status codes (BCP's, in English) in the merchant's words.
    STATUS_CHOICES = [
        ("incomplete", _("Incompleto")),
        ("requires_escalation", _("Precisa do comprador")),
        ("ready_for_complete", _("Pronto para finalizar")),
        ("complete_in_progress", _("Aguardando pagamento")),
        ("completed", _("Concluído")),
        ("canceled", _("Cancelado")),
    ]

    public_id = models.CharField(_("ID público"), max_length=60, unique=True, default=new_checkout_id, editable=False)
    status = models.CharField(_("situação"), max_length=24, choices=STATUS_CHOICES, default="incomplete")
    currency = models.CharField(_("moeda"), max_length=3, default="BRL")
    # Origin: a bcp_app Platform public id (agents) or a session key (storefront).
    # None (not "") for the storefront: the contract's `platform_id: str | None`.
    platform_id = models.CharField(_("plataforma (agente)"), max_length=80, null=True, blank=True, db_index=True)  # noqa: DJ001
    session_key = models.CharField(_("sessão do navegador"), max_length=80, blank=True, db_index=True)
    language = models.CharField(_("idioma"), max_length=8, default="pt-br")
    # Buyer; `buyer_given` tells "no buyer object" from "empty buyer".
    buyer_given = models.BooleanField(_("comprador informado"), default=False)
    buyer_first_name = models.CharField(_("nome do comprador"), max_length=100, blank=True)
    buyer_last_name = models.CharField(_("sobrenome do comprador"), max_length=100, blank=True)
    buyer_email = models.CharField(_("e-mail do comprador"), max_length=254, blank=True)
    buyer_phone = models.CharField(_("celular do comprador"), max_length=20, blank=True)
    buyer_tax_id = models.CharField(_("CPF/CNPJ do comprador"), max_length=14, blank=True)
    # LGPD consent decisions with time and channel (shop/checkout/selectors.py); None = never given.
    buyer_consent = models.JSONField(_("consentimento do comprador (LGPD)"), null=True, blank=True)
    # Fulfillment selection: "" (none), "shipping" or "pickup".
    fulfillment_type = models.CharField(_("forma de entrega"), max_length=10, blank=True)
    ship_destination_id = models.CharField(_("ID do endereço de entrega"), max_length=40, blank=True)
    ship_first_name = models.CharField(_("nome do destinatário"), max_length=100, blank=True)
    ship_last_name = models.CharField(_("sobrenome do destinatário"), max_length=100, blank=True)
    ship_phone = models.CharField(_("telefone do destinatário"), max_length=20, blank=True)
    ship_cep = models.CharField(_("CEP"), max_length=9, blank=True)
    ship_uf = models.CharField(_("UF"), max_length=2, blank=True)
    ship_city = models.CharField(_("cidade"), max_length=100, blank=True)
    ship_street = models.CharField(_("logradouro"), max_length=200, blank=True)
    ship_number = models.CharField(_("número"), max_length=20, blank=True)
    ship_complement = models.CharField(_("complemento"), max_length=100, blank=True)
    ship_neighborhood = models.CharField(_("bairro"), max_length=100, blank=True)
    ship_country = models.CharField(_("país"), max_length=2, blank=True)
    selected_destination_id = models.CharField(_("ID do destino escolhido"), max_length=40, blank=True)
    selected_option_id = models.CharField(_("opção de entrega escolhida"), max_length=60, blank=True)
    # Extension state; None = extension not used by the caller.
    discount_codes = models.JSONField(_("cupons"), null=True, blank=True)
    # Selected instrument without credential: {"id", "handler_id", "type", "selected"}.
    payment_instrument = models.JSONField(_("meio de pagamento"), null=True, blank=True)
    context = models.JSONField(_("contexto"), null=True, blank=True)
    signals = models.JSONField(_("sinais"), default=dict, blank=True)
    # Evaluation snapshot, written with the status in the same transaction (see shop/checkout/evaluate.py).
    totals = models.JSONField(_("totais"), default=list, blank=True)
    total_amount = models.BigIntegerField(_("total (centavos)"), default=0)
    messages = models.JSONField(_("mensagens"), default=list, blank=True)
    fulfillment_snapshot = models.JSONField(_("entrega calculada"), default=dict, blank=True)
    # The store policies as the last write showed them: policy type → digest (shop/store/policies.py). A
    # complete compares them with those in force, which the order keeps; {} for checkouts written before.
    policies_shown = models.JSONField(_("políticas mostradas"), default=dict, blank=True)
    discounts_applied = models.JSONField(_("descontos aplicados"), default=list, blank=True)
    # Stock is held when a payment can start (see shop/checkout/stock.py) and released on cancel/expiry.
    stock_reserved = models.BooleanField(_("estoque reservado"), default=False)
    payment_txid = models.CharField(
        _("identificador do pagamento"), max_length=64, blank=True
    )  # Pix txid or card payment id that paid it
    order_id = models.CharField(_("pedido"), max_length=60, blank=True)
    # The order number reserved when the first Pix charge was made (its description names it).
    order_permalink_url = models.CharField(_("página do pedido"), max_length=500, blank=True)
    expires_at = models.DateTimeField(_("expira em"), null=True, blank=True)
    created_at = models.DateTimeField(_("criado em"), auto_now_add=True)
    updated_at = models.DateTimeField(_("atualizado em"), auto_now=True)
    completed_at = models.DateTimeField(_("concluído em"), null=True, blank=True)
    # An agent checkout's Pix paid before the platform called complete (PIX.md §3.1): it stays
    # `ready_for_complete` holding the payment and its stock until complete or the completion grace.
    paid_at = models.DateTimeField(_("pago em"), null=True, blank=True)
    # Created while the AP2 mandates extension was negotiated (PIX.md §7: the session is locked): only a
    # verified checkout mandate completes it, so a Pix paid before complete is refunded, never auto-completed
    # by the shop, when the completion grace passes without one (PIX.md §10 D1).
    mandate_required = models.BooleanField(_("exige mandato AP2"), default=False)
    # The trust tier (issue 35) of the BCP agent that created it, "" when no agent did (storefront, permalink,
    # admin) or for a checkout created before it was recorded. The shop's own completion of a paid checkout
    # (shop/checkout/settle.py) applies the store's "agentes: finalizar compras" to it.
    creator_tier = models.CharField(
        _("criado por"), max_length=12, blank=True, default="", choices=CREATOR_TIER_CHOICES, editable=False
    )
    canceled_at = models.DateTimeField(_("cancelado em"), null=True, blank=True)

    class Meta:
        verbose_name = _("checkout")
        verbose_name_plural = _("checkouts")
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "expires_at"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    status__in=[
                        "incomplete",
                        "requires_escalation",
                        "ready_for_complete",
                        "complete_in_progress",
                        "completed",
                        "canceled",
                    ]
                ),
                name="checkout_status_valid",
            ),
            models.CheckConstraint(
                condition=~Q(status="completed") | ~Q(order_id=""), name="checkout_completed_has_order"
            ),
        ]

    def __str__(self) -> str:
        return self.public_id

    def written_fields(self) -> list[str]:
        """What a full save of this copy writes: every column but the primary key (listed once per process)."""
        return list(_written_fields(type(self)))

    @property
    def is_terminal(self) -> bool:
        return self.status in ("completed", "canceled")


class CheckoutLine(models.Model):
    checkout = models.ForeignKey(Checkout, on_delete=models.CASCADE, related_name="lines")
    public_id = models.CharField(_("ID público"), max_length=40, unique=True, default=new_line_id, editable=False)
    position = models.PositiveIntegerField(_("posição"), default=0)
    # Null when the SKU is unknown: the line stays, with `item_unavailable`, so paths stay valid.
    variant = models.ForeignKey(
        Variant, null=True, blank=True, on_delete=models.PROTECT, related_name="+", verbose_name=_("variante")
    )
    sku = models.CharField(_("SKU"), max_length=64)
    title = models.CharField(_("título"), max_length=300, blank=True)
    image_url = models.CharField(_("endereço da imagem"), max_length=500, blank=True)
    unit_price = models.BigIntegerField(_("preço unitário (centavos)"), default=0)
    quantity = models.PositiveIntegerField(
        _("quantidade"),
    )
    requires_shipping = models.BooleanField(_("exige entrega"), default=True)

    class Meta:
        verbose_name = _("item do checkout")
        verbose_name_plural = _("itens do checkout")
        ordering = ["position", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(quantity__gte=1), name="checkout_line_quantity_positive"),
            models.CheckConstraint(condition=Q(unit_price__gte=0), name="checkout_line_price_non_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.sku} × {self.quantity}"


class CheckoutEvent(models.Model):
    """Append-only timeline of a checkout (status changes, stock, payment)."""

    checkout = models.ForeignKey(Checkout, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(_("evento"), max_length=40)
    from_status = models.CharField(_("situação anterior"), max_length=24, blank=True)
    to_status = models.CharField(_("nova situação"), max_length=24, blank=True)
    detail = models.JSONField(_("detalhe"), default=dict, blank=True)
    created_at = models.DateTimeField(_("quando"), auto_now_add=True)

    class Meta:
        verbose_name = _("evento do checkout")
        verbose_name_plural = _("eventos do checkout")
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.from_status}→{self.to_status}"


class CouponRedemption(models.Model):
    """A coupon use; recorded when a checkout is completed (or accepted for Pix), removed on cancel."""

    coupon = models.ForeignKey(Coupon, on_delete=models.PROTECT, related_name="redemptions")
    checkout = models.ForeignKey(Checkout, on_delete=models.CASCADE, related_name="coupon_redemptions")
    email = models.CharField(max_length=254)
    amount = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("uso de cupom")
        verbose_name_plural = _("usos de cupom")
        constraints = [models.UniqueConstraint(fields=["coupon", "checkout"], name="coupon_redemption_once")]

    def __str__(self) -> str:
        return f"{self.coupon.code} {self.checkout.public_id}"


@functools.cache
def _written_fields(model: type[models.Model]) -> tuple[str, ...]:
    return tuple(field.name for field in model._meta.concrete_fields if not field.primary_key)
