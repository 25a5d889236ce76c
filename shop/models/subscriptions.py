"""Subscriptions (issue 38): what the shop sells by recurrence. A plan sells one variant every cycle.

The shop owns what it sells (ARCHITECTURE.md: `shop/`); how each cycle is paid (Pix Automático's recurrence and
its charges) stays behind the PSP boundary in `payments/`.
"""

from __future__ import annotations

import secrets

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from kernel.ids import new_permalink_token, new_public_id
from kernel.money import format_brl
from shop.models.catalog import Variant


def new_plan_id() -> str:
    return new_public_id("plan")


# A cycle inside a sentence ("um plano mensal ativo"): lower-case words, not the capitalized choice labels.
CYCLE_WORDS = {"weekly": _("semanal"), "monthly": _("mensal")}


class SubscriptionPlan(models.Model):
    """A variant sold by subscription: price per cycle in centavos, an optional first-cycle discount, a minimum
    commitment in cycles and whether each cycle ships."""

    class Cycle(models.TextChoices):
        WEEKLY = "weekly", _("Semanal")
        MONTHLY = "monthly", _("Mensal")

    public_id = models.CharField(_("ID público"), max_length=40, unique=True, default=new_plan_id, editable=False)
    variant = models.ForeignKey(
        Variant, verbose_name=_("variante"), on_delete=models.PROTECT, related_name="subscription_plans"
    )
    cycle = models.CharField(_("ciclo"), max_length=8, choices=Cycle.choices, default=Cycle.MONTHLY)
    price = models.BigIntegerField(_("preço por ciclo (centavos)"))
    first_cycle_discount = models.BigIntegerField(
        _("desconto no primeiro ciclo (centavos)"),
        default=0,
        help_text=_("Abatido só da primeira cobrança. Deixe vazio para nenhum desconto."),
    )
    min_cycles = models.PositiveSmallIntegerField(
        _("compromisso mínimo (ciclos)"),
        default=1,
        help_text=_(
            "Informativo: os agentes leem este número como o compromisso sugerido do plano. A loja não impede o "
            "cancelamento, porque o assinante pode revogar o Pix Automático no app do banco a qualquer momento."
        ),
    )
    ships_each_cycle = models.BooleanField(_("entrega a cada ciclo"), default=True)
    active = models.BooleanField(_("ativo"), default=True)
    created_at = models.DateTimeField(_("criado em"), auto_now_add=True)

    class Meta:
        verbose_name = _("plano de assinatura")
        verbose_name_plural = _("planos de assinatura")
        ordering = ["variant_id", "cycle"]
        constraints = [
            models.CheckConstraint(condition=Q(price__gt=0), name="shop_plan_price_positive"),
            models.CheckConstraint(
                condition=Q(first_cycle_discount__gte=0) & Q(first_cycle_discount__lt=F("price")),
                name="shop_plan_discount_below_price",
            ),
            models.CheckConstraint(condition=Q(min_cycles__gte=1), name="shop_plan_min_cycles"),
            models.CheckConstraint(condition=Q(cycle__in=["weekly", "monthly"]), name="shop_plan_cycle_valid"),
            # One active offer per variant and cycle: the product page shows one price per cycle.
            models.UniqueConstraint(
                fields=["variant", "cycle"], condition=Q(active=True), name="shop_plan_one_active_per_cycle"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.variant} — {self.get_cycle_display()} {format_brl(self.price)}"

    @property
    def first_cycle_price(self) -> int:
        return self.price - self.first_cycle_discount

    def clean(self) -> None:
        """The constraints again, in Portuguese and on the field at fault (admin forms call this)."""
        errors: dict[str, str] = {}
        if self.price is not None and self.price <= 0:
            errors["price"] = _("O preço por ciclo precisa ser maior que zero.")
        discount = self.first_cycle_discount or 0
        if discount < 0:
            errors["first_cycle_discount"] = _("O desconto não pode ser negativo.")
        elif self.price is not None and self.price > 0 and discount >= self.price:
            errors["first_cycle_discount"] = _(
                "O desconto do primeiro ciclo (%(discount)s) precisa ser menor que o preço por ciclo (%(price)s)."
            ) % {"discount": format_brl(discount), "price": format_brl(self.price)}
        if self.min_cycles is not None and self.min_cycles < 1:
            errors["min_cycles"] = _("O compromisso mínimo é de pelo menos 1 ciclo.")
        if self.active and self.variant_id is not None:
            clash = SubscriptionPlan.objects.filter(variant_id=self.variant_id, cycle=self.cycle, active=True)
            if clash.exclude(pk=self.pk).exists():
                errors["cycle"] = _("Esta variante já tem um plano %(cycle)s ativo; desative-o antes.") % {
                    "cycle": CYCLE_WORDS.get(self.cycle, self.cycle)  # inside the sentence: lower-case
                }
        if errors:
            raise ValidationError(errors)


def new_subscription_id() -> str:
    return new_public_id("sub")


class Subscription(models.Model):
    """One buyer's subscription to a plan, paid by Pix Automático (a recurrence `id_rec` at the PSP) or by a card
    stored at the card gateway (its customer and card ids; never the card number).

    States: pending_authorization (waiting for the payer's bank app, or for the first card charge) → active →
    paused ⇄ active; any → cancelled. The plan's terms are copied at subscription time: a later price change does
    not touch existing subscribers.
    """

    class Method(models.TextChoices):
        PIX_AUTOMATICO = "pix_automatico", _("Pix Automático")
        CARD = "card", _("Cartão de crédito")

    class Status(models.TextChoices):
        PENDING_AUTHORIZATION = "pending_authorization", _("Aguardando autorização")
        ACTIVE = "active", _("Ativa")
        PAUSED = "paused", _("Pausada")
        CANCELLED = "cancelled", _("Cancelada")

    # Allowed moves of the state machine (services refuse any other).
    TRANSITIONS: dict[str, frozenset[str]] = {
        "pending_authorization": frozenset({"active", "cancelled"}),
        "active": frozenset({"paused", "cancelled"}),
        "paused": frozenset({"active", "cancelled"}),
        "cancelled": frozenset(),
    }

    public_id = models.CharField(
        _("ID público"), max_length=40, unique=True, default=new_subscription_id, editable=False
    )
    plan = models.ForeignKey(
        SubscriptionPlan, verbose_name=_("plano"), on_delete=models.PROTECT, related_name="subscriptions"
    )
    status = models.CharField(
        _("situação"), max_length=24, choices=Status.choices, default=Status.PENDING_AUTHORIZATION
    )
    buyer_name = models.CharField(_("nome do assinante"), max_length=140)
    buyer_tax_id = models.CharField(_("CPF/CNPJ do assinante"), max_length=14)
    buyer_email = models.EmailField(_("e-mail do assinante"))
    # The plan's terms when subscribed (centavos, cycles).
    cycle = models.CharField(_("ciclo"), max_length=8, choices=SubscriptionPlan.Cycle.choices)
    price = models.BigIntegerField(_("preço por ciclo (centavos)"))
    first_cycle_price = models.BigIntegerField(_("preço do primeiro ciclo (centavos)"))
    min_cycles = models.PositiveSmallIntegerField(_("compromisso mínimo (ciclos)"))
    starts_on = models.DateField(_("primeira cobrança em"))
    # Pix Automático at the PSP: the recurrence and, when pushed to the payer's bank, the solicitação.
    pix_id_rec = models.CharField(_("idRec"), max_length=29, blank=True, default="")
    pix_id_solic_rec = models.CharField(_("idSolicRec"), max_length=29, blank=True, default="")
    pix_authorization_location = models.CharField(_("location da autorização"), max_length=200, blank=True, default="")
    payment_method = models.CharField(
        _("meio de pagamento"), max_length=16, choices=Method.choices, default=Method.PIX_AUTOMATICO
    )
    # Card: the card stored at the gateway (Pagar.me wallet: `cus_…` and `card_…`); the shop keeps only these ids,
    # the brand and the last four digits (no PAN, no CVV: the browser or the agent hands the gateway a token).
    card_customer_id = models.CharField(_("cliente no gateway"), max_length=64, blank=True, default="")
    card_id = models.CharField(_("cartão no gateway"), max_length=64, blank=True, default="")
    card_brand = models.CharField(_("bandeira"), max_length=20, blank=True, default="")
    card_last4 = models.CharField(_("final do cartão"), max_length=4, blank=True, default="")
    # Where each cycle ships (the order's `destination` keys: first_name, last_name, street, number, complement,
    # neighborhood, city, state, postal_code, country); empty for a plan that does not ship.
    destination = models.JSONField(_("endereço de entrega"), default=dict, blank=True)
    # The buyer's page (`/assinaturas/<token>/`): an unguessable token, like an order's permalink.
    access_token = models.CharField(max_length=64, unique=True, default=new_permalink_token, editable=False)
    # The subscriber's language when subscribing (the storefront's, an agent's context): its e-mails speak it.
    language = models.CharField(_("idioma"), max_length=8, default="pt-br")
    platform_id = models.CharField(_("plataforma BCP"), max_length=80, blank=True, default="")
    cancelled_at = models.DateTimeField(_("cancelada em"), null=True, blank=True)
    created_at = models.DateTimeField(_("criada em"), auto_now_add=True)
    updated_at = models.DateTimeField(_("atualizada em"), auto_now=True)

    class Meta:
        verbose_name = _("assinatura")
        verbose_name_plural = _("assinaturas")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["pending_authorization", "active", "paused", "cancelled"]),
                name="shop_subscription_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(price__gt=0) & Q(first_cycle_price__gt=0), name="shop_subscription_price_positive"
            ),
            models.UniqueConstraint(
                fields=["pix_id_rec"], condition=~Q(pix_id_rec=""), name="shop_subscription_one_per_rec"
            ),
            models.CheckConstraint(
                condition=Q(payment_method__in=["pix_automatico", "card"]), name="shop_subscription_method_valid"
            ),
            # A card is stored at the gateway for one subscription: a replayed subscribe finds it instead of a twin.
            models.UniqueConstraint(
                fields=["card_id"], condition=~Q(card_id=""), name="shop_subscription_one_per_card"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} — {self.get_status_display()}"


def new_cycle_id() -> str:
    return new_public_id("cyc")


def new_cycle_txid() -> str:
    # 32 alphanumerics (Bacen txid: 26 to 35), fixed when the cycle is planned: PUT /cobr/{txid} is then
    # idempotent across a crash between the PSP call and recording it.
    return secrets.token_hex(16)


class SubscriptionCycle(models.Model):
    """One cycle of a subscription: charged ahead of its due date, and when paid, one order (`order_id`).

    scheduled → charged (cobr at the PSP, stock reserved) → paid (order placed) | retrying → paid | failed;
    scheduled → skipped (the buyer skipped it) | cancelled (the subscription ended). `stock_short`: the unit was
    missing when the charge was due to go out; the buyer was told and nothing was charged yet."""

    class Status(models.TextChoices):
        SCHEDULED = "scheduled", _("Agendado")
        CHARGED = "charged", _("Cobrança enviada")
        RETRYING = "retrying", _("Nova tentativa")
        PAID = "paid", _("Pago")
        FAILED = "failed", _("Não pago")
        SKIPPED = "skipped", _("Pulado")
        CANCELLED = "cancelled", _("Cancelado")

    public_id = models.CharField(_("ID público"), max_length=40, unique=True, default=new_cycle_id, editable=False)
    subscription = models.ForeignKey(
        Subscription, verbose_name=_("assinatura"), on_delete=models.CASCADE, related_name="cycles"
    )
    number = models.PositiveIntegerField(_("ciclo nº"))
    due_date = models.DateField(_("vencimento"))
    amount = models.BigIntegerField(_("valor (centavos)"))
    status = models.CharField(_("situação"), max_length=12, choices=Status.choices, default=Status.SCHEDULED)
    txid = models.CharField(_("txid"), max_length=35, unique=True, default=new_cycle_txid, editable=False)
    stock_reserved = models.BooleanField(default=False)
    stock_short = models.BooleanField(_("faltou estoque"), default=False)
    order_id = models.CharField(_("pedido"), max_length=60, blank=True, default="")
    # Card cycles: each charge attempt is numbered (the gateway's Idempotency-Key is `<cycle id>-<attempt>`, so a
    # re-driven attempt is answered with its first result); `retries` and `retry_on` follow the retry rule.
    charge_attempts = models.PositiveSmallIntegerField(_("tentativas de cobrança"), default=0)
    retries = models.PositiveSmallIntegerField(_("novas tentativas"), default=0)
    retry_on = models.DateField(_("nova tentativa em"), null=True, blank=True)
    created_at = models.DateTimeField(_("criado em"), auto_now_add=True)
    updated_at = models.DateTimeField(_("atualizado em"), auto_now=True)

    class Meta:
        verbose_name = _("ciclo de assinatura")
        verbose_name_plural = _("ciclos de assinatura")
        ordering = ["subscription_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["subscription", "number"], name="shop_cycle_one_per_number"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="shop_cycle_amount_positive"),
        ]

    def __str__(self) -> str:
        # No subscription read here: an inline lists many cycles of one subscription.
        return str(_("Ciclo %(number)d — %(status)s") % {"number": self.number, "status": self.get_status_display()})


# Staff words for the event kinds the subscription services write; an unknown kind reads as words.
SUBSCRIPTION_EVENT_WORDS = {
    "created": _("Assinatura criada"),
    "authorization_requested": _("Autorização do Pix Automático pedida ao banco do assinante"),
    "status_pending_authorization": _("Aguardando autorização"),
    "status_active": _("Assinatura ativa"),
    "status_paused": _("Assinatura pausada"),
    "status_cancelled": _("Assinatura cancelada"),
    "recurrence_cancelled": _("Pix Automático encerrado no PSP"),
    "address_changed": _("Endereço de entrega alterado"),
    "language_changed": _("Idioma do site trocado pelo assinante"),
    "card_stored": _("Cartão guardado no gateway"),
    "card_changed": _("Cartão trocado"),
    "card_declined": _("Cartão recusado"),
    "card_deleted": _("Cartão removido do gateway"),
    "cycle_planned": _("Ciclo agendado"),
    "cycle_stock_short": _("Ciclo sem estoque"),
    "cycle_charged": _("Cobrança do ciclo enviada"),
    "cycle_paid": _("Ciclo pago"),
    "cycle_retrying": _("Ciclo em nova tentativa"),
    "cycle_failed": _("Ciclo não pago"),
    "cycle_skipped": _("Ciclo pulado"),
    "withdrawal": _("Direito de arrependimento: primeiro pedido"),
}


def subscription_event_words(kind: str) -> str:
    return str(SUBSCRIPTION_EVENT_WORDS.get(kind, kind.replace("_", " ")))


class SubscriptionEvent(models.Model):
    """Append-only timeline of a subscription, written in the same transaction as each change.

    Some kinds are also an e-mail to the buyer (`MAILED`): the event is the outbox row, `mailed_at` set once sent."""

    MAILED = frozenset(
        {"created", "cycle_failed", "cycle_retrying", "cycle_stock_short", "status_cancelled", "cycle_skipped"}
    )

    subscription = models.ForeignKey(
        Subscription, verbose_name=_("assinatura"), on_delete=models.CASCADE, related_name="events"
    )
    kind = models.CharField(_("tipo"), max_length=48)
    detail = models.JSONField(_("detalhe"), default=dict, blank=True)
    mailed_at = models.DateTimeField(_("e-mail enviado em"), null=True, blank=True)
    created_at = models.DateTimeField(_("criado em"), auto_now_add=True)

    class Meta:
        verbose_name = _("evento de assinatura")
        verbose_name_plural = _("eventos de assinatura")
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return subscription_event_words(self.kind)
