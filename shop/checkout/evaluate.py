"""Evaluation of a checkout's writable state: lines, buyer, fulfillment, discounts, totals, status.

`evaluate()` is deterministic for a given database state and input (BCP-CHK-23) and runs a fixed
number of queries whatever the number of lines (catalog 2 or none when cached — shop/checkout/stock.py —,
price and stock ≤ 1 or none when the caller annotated them on the lines, shipping 3 or none when cached,
coupons ≤ 2). The services
persist its result (columns + snapshot JSON) with the status in one transaction, so reads and the
BCP presenter only map what is stored.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, ngettext

from kernel.br_validation import (
    email_invalid,
    email_valid,
    phone_normalize,
    phone_valid,
    tax_id_invalid,
    tax_id_normalize,
    tax_id_valid,
)
from shop.catalog.schema_org import _absolute as absolute_url  # the catalog's rule, so every surface agrees
from shop.catalog.selectors import product_get
from shop.checkout.fulfillment import evaluate_fulfillment, shipping_config_load
from shop.checkout.pricing import (
    CouponEvaluation,
    card_terms,
    coupon_total_text,
    coupons_evaluate,
    coupons_load,
    pix_discount_applied,
)
from shop.checkout.selectors import consent_state
from shop.checkout.stock import Live, VariantSnapshot, catalog_snapshots, live_annotated, live_of
from shop.checkout.types import (
    AGENT_COMPLETE_FORBIDDEN,
    STATUS_INCOMPLETE,
    STATUS_READY,
    STATUS_REQUIRES_ESCALATION,
    BuyerInput,
    CheckoutInput,
    CheckoutInputError,
    CheckoutMessage,
    bounded,
)
from shop.freight.parcels import FreightLine
from shop.freight.quotes import checkout_shipping_options
from shop.models import Checkout, CheckoutLine, new_line_id

MAX_LINES = 100
MAX_LINE_QUANTITY = 999


def _err(code: str, content: str, path: str) -> CheckoutMessage:
    return CheckoutMessage(type="error", code=code, content=content, severity="recoverable", path=path)


def unoffered(handler_id: str, offered: tuple[str, ...], index: int) -> CheckoutMessage:
    """BCP-PAY-03: the instrument's handler is not one the platform's profile lists; names those it may use.
    Said at update (below) and by complete (shop/checkout/charge.py), in the same words."""
    text = _("O perfil da plataforma não lista o meio de pagamento %(handler)s; use um destes: %(offered)s.") % {
        "handler": handler_id or "''",
        "offered": ", ".join(offered) or "-",
    }
    return _err("payment_failed", text, f"$.payment.instruments[{index}].handler_id")


# The line title of an item whose name is not known (its SKU is gone from the catalog).
UNAVAILABLE_TITLE = gettext_noop("Item indisponível")


@dataclass
class PlannedLine:
    public_id: str
    variant_id: int | None
    sku: str
    title: str
    image_url: str
    unit_price: int
    quantity: int
    requires_shipping: bool
    allow_backorder: bool

    @property
    def amount(self) -> int:
        """What the line adds to the checkout's subtotal: nothing while its item is unavailable (it cannot be
        bought), though `unit_price` keeps its last known price so nobody reads the item as free."""
        return 0 if self.variant_id is None else self.unit_price * self.quantity


@dataclass
class Evaluation:
    lines: list[PlannedLine]
    fields: dict[str, object]  # Checkout columns to write
    messages: list[CheckoutMessage]
    rejections: list[CheckoutMessage]
    status: str
    total_amount: int
    coupons: CouponEvaluation
    unavailable_line_ids: list[str] = field(default_factory=list)


def _image_url(snapshot: VariantSnapshot) -> str:
    """Absolute (the BCP item schema requires a URI): static paths are joined to BCP_PUBLIC_URL."""
    return absolute_url(settings.BCP_PUBLIC_URL, snapshot.image_path) if snapshot.image_path else ""


def _live(
    snapshots: dict[str, VariantSnapshot], read: dict[int, Live] | None, existing: dict[str, CheckoutLine]
) -> dict[int, Live]:
    """Price, stock and flags of the variants: read with the catalog rows, annotated on the checkout's lines by
    the caller (`LIVE_ANNOTATIONS`), else one query for the rest."""
    if read is not None:
        return read
    # Only lines read with the annotations carry live values (not a cart's lines, nor a line whose variant is gone).
    known = {line.variant_id: live for line in existing.values() if (live := live_annotated(line)) is not None}
    return {**known, **live_of({s.pk for s in snapshots.values()} - known.keys())}


def _unknown_item(sku: str) -> str:
    """What an id naming no sellable variant gets. Agents often send the catalog's product id (`prod_…`, beside
    `variants[].id` in search results): "not available" would read as sold out, so name the ids a line takes."""
    product = product_get(public_id=sku) if sku.startswith("prod_") else None
    skus = [variant.sku for variant in product.variants.all() if variant.active] if product is not None else []
    if not skus:
        return _("O item %(sku)s não está disponível.") % {"sku": sku}
    return _("%(id)s é o id de um produto: em item.id use o id de uma variante (variants[].id): %(skus)s.") % {
        "id": sku,
        "skus": ", ".join(skus[:10]),
    }


def _plan_lines(
    data: CheckoutInput, existing: dict[str, CheckoutLine], *, is_update: bool, held: bool = False
) -> tuple[list[PlannedLine], list[CheckoutMessage], list[CheckoutMessage], list[str]]:
    """`held`: the checkout holds the stock of its `existing` lines (reserved with its Pix charge), so those
    units count as available to it."""
    if len(data.lines) > MAX_LINES:
        raise CheckoutInputError("$.line_items", _("No máximo %(max)d itens por checkout.") % {"max": MAX_LINES})
    seen_ids: set[str] = set()
    for index, line in enumerate(data.lines):
        if not isinstance(line.quantity, int) or line.quantity < 1:
            raise CheckoutInputError(f"$.line_items[{index}].quantity", _("A quantidade deve ser um inteiro ≥ 1."))
        if not bounded(line.sku, 64, f"$.line_items[{index}].item.id"):
            raise CheckoutInputError(f"$.line_items[{index}].item.id", _("Informe o id do item."))
        if line.line_id and is_update:
            if line.line_id in seen_ids:
                raise CheckoutInputError(f"$.line_items[{index}].id", _("Id de linha repetido."))
            seen_ids.add(line.line_id)
    variants, read = catalog_snapshots({line.sku.strip() for line in data.lines})
    live = _live(variants, read, existing)
    remaining: dict[int, int] = defaultdict(int, {pk: row.stock for pk, row in live.items()})
    if held:
        for line in existing.values():
            if line.variant_id is not None:
                remaining[line.variant_id] += line.quantity
    planned: list[PlannedLine] = []
    messages: list[CheckoutMessage] = []
    rejections: list[CheckoutMessage] = []
    unavailable: list[str] = []
    for index, line in enumerate(data.lines):
        path = f"$.line_items[{index}]"
        public_id = new_line_id()
        if is_update and line.line_id:
            if line.line_id not in existing:
                rejections.append(_err("field_invalid", _("Linha desconhecida neste checkout."), f"{path}.id"))
            else:
                public_id = line.line_id
        sku = line.sku.strip()
        variant = variants.get(sku)
        fresh = live.get(variant.pk) if variant is not None else None
        quantity = line.quantity
        if variant is None or fresh is None or not (fresh.active and variant.product_active):
            # The buyer knows the product by its name, not its SKU: the catalog's title, else the line's own.
            stored = existing.get(line.line_id or "") if is_update else None
            # a checkout's stored line has its title; a BCP cart's line (shop.models.CartLine) has only its SKU
            title = variant.title if variant is not None else str(getattr(stored, "title", "") or "")
            if title in (UNAVAILABLE_TITLE, _(UNAVAILABLE_TITLE)):  # the placeholder is no name
                title = ""
            said = _("%(title)s não está disponível.") % {"title": title} if title else _unknown_item(sku)
            messages.append(_err("item_unavailable", said, path))
            unavailable.append(public_id)
            shown = title or _(UNAVAILABLE_TITLE)
            # The last known price, not 0 (an agent read 0 as free): the stored line's, else the catalog's.
            price = int(getattr(stored, "unit_price", 0) or 0) or (fresh.price if fresh is not None else 0)
            planned.append(PlannedLine(public_id, None, sku, shown, "", price, quantity, False, False))
            continue
        capped = quantity > MAX_LINE_QUANTITY
        quantity = min(quantity, MAX_LINE_QUANTITY)
        available = None if fresh.allow_backorder else remaining[variant.pk]
        short = available is not None and 0 < available < quantity
        # One `quantity_adjusted` per path, the one naming the final quantity (BCP §4.3, BCP-CHK-20): when the
        # stock lowers a capped quantity further, its warning alone says what the line holds.
        if capped and not short:
            messages.append(
                CheckoutMessage(
                    type="warning",
                    code="quantity_adjusted",
                    content=_("Quantidade limitada a %(max)d por item.") % {"max": MAX_LINE_QUANTITY},
                    path=f"{path}.quantity",
                )
            )
        if available is not None:
            if available <= 0:
                messages.append(_err("out_of_stock", _("%(title)s está sem estoque.") % {"title": variant.title}, path))
                unavailable.append(public_id)
            elif short:
                quantity = available
                messages.append(
                    CheckoutMessage(
                        type="warning",
                        code="quantity_adjusted",
                        content=ngettext(
                            "Só temos %(count)d unidade de %(title)s; a quantidade foi ajustada.",
                            "Só temos %(count)d unidades de %(title)s; a quantidade foi ajustada.",
                            available,
                        )
                        % {"count": available, "title": variant.title},
                        path=f"{path}.quantity",
                    )
                )
            remaining[variant.pk] = max(0, available - quantity)
        planned.append(
            PlannedLine(
                public_id=public_id,
                variant_id=variant.pk,
                sku=sku,
                title=variant.title,
                image_url=_image_url(variant),
                unit_price=fresh.price,
                quantity=quantity,
                requires_shipping=variant.requires_shipping,
                allow_backorder=fresh.allow_backorder,
            )
        )
    return planned, messages, rejections, unavailable


def _has_letter(name: str) -> bool:
    """A name is written with letters (any script); emoji, digits or punctuation alone name nobody (and the NF-e
    and the carrier's label need a name)."""
    return any(char.isalpha() for char in name)


def _buyer(buyer: BuyerInput | None) -> tuple[dict[str, object], list[CheckoutMessage]]:
    given = buyer is not None
    buyer = buyer or BuyerInput()
    # Letters kept: an alphanumeric CNPJ (valid from July 2026) is a valid tax id.
    tax_digits = tax_id_normalize(bounded(buyer.tax_id, 20, "$.buyer.tax_id"))
    fields: dict[str, object] = {
        "buyer_given": given,
        "buyer_first_name": bounded(buyer.first_name, 100, "$.buyer.first_name"),
        "buyer_last_name": bounded(buyer.last_name, 100, "$.buyer.last_name"),
        "buyer_email": bounded(buyer.email, 254, "$.buyer.email"),
        "buyer_phone": phone_normalize(bounded(buyer.phone_number, 20, "$.buyer.phone_number")),
        # Too many digits is invalid, never truncated into a valid-looking number.
        "buyer_tax_id": tax_digits if len(tax_digits) <= 14 else "",
    }
    messages: list[CheckoutMessage] = []
    if not fields["buyer_email"]:
        messages.append(_err("field_required", _("Informe o e-mail."), "$.buyer.email"))
    elif not email_valid(str(fields["buyer_email"])):
        messages.append(_err("field_invalid", email_invalid(), "$.buyer.email"))
    if not fields["buyer_first_name"]:
        messages.append(_err("field_required", _("Informe o nome."), "$.buyer.first_name"))
    elif not _has_letter(str(fields["buyer_first_name"])):
        messages.append(_err("field_invalid", _("Informe o nome com letras."), "$.buyer.first_name"))
    if not fields["buyer_last_name"]:
        messages.append(_err("field_required", _("Informe o sobrenome."), "$.buyer.last_name"))
    elif not _has_letter(str(fields["buyer_last_name"])):
        messages.append(_err("field_invalid", _("Informe o sobrenome com letras."), "$.buyer.last_name"))
    if fields["buyer_phone"] and not phone_valid(str(fields["buyer_phone"])):
        messages.append(
            _err("field_invalid", _("Telefone inválido: use o formato +5511987654321."), "$.buyer.phone_number")
        )
    if buyer.tax_id.strip() and not tax_id_valid(tax_digits):
        messages.append(_err("field_invalid", tax_id_invalid(), "$.buyer.tax_id"))
    return fields, messages


def checkout_language(data: CheckoutInput | None, fallback: str | None) -> str:
    """The checkout's language: the caller's `context.language`, else `fallback`; pt-BR by default (BCP §5.1)."""
    asked = (data.context.language if data is not None and data.context is not None else "") or fallback or ""
    return "en" if asked.lower().startswith("en") else "pt-br"


def _status(messages: list[CheckoutMessage]) -> str:
    errors = [m for m in messages if m.type == "error"]
    if any(m.severity in ("requires_buyer_input", "requires_buyer_review") for m in errors):
        return STATUS_REQUIRES_ESCALATION
    return STATUS_INCOMPLETE if errors else STATUS_READY


plan_lines = _plan_lines  # carts price their lines with the same rules (shop/cart.py)


def evaluate(
    *, checkout: Checkout | None, existing_lines: list[CheckoutLine], data: CheckoutInput, now: datetime
) -> Evaluation:
    """Evaluate `data` as the full writable state of `checkout` (None on create)."""
    is_update = checkout is not None
    planned, line_messages, rejections, unavailable = _plan_lines(
        data,
        {line.public_id: line for line in existing_lines},
        is_update=is_update,
        held=checkout is not None and checkout.stock_reserved,
    )
    buyer_fields, buyer_messages = _buyer(data.buyer)
    buyer_fields["buyer_consent"] = consent_state(
        checkout.buyer_consent if checkout is not None else None,
        data.buyer.consent if data.buyer is not None else None,
        data.buyer.consent_captured_by if data.buyer is not None else "",
        now,
    )
    subtotal = sum(line.amount for line in planned)
    codes = tuple(data.discount_codes) if data.discount_codes is not None else ()
    if len(codes) > 20:
        raise CheckoutInputError("$.discounts.codes", _("No máximo 20 cupons."))
    for index, code in enumerate(codes):
        bounded(code, 40, f"$.discounts.codes[{index}]")
    loaded = coupons_load(
        codes, email=str(buyer_fields["buyer_email"]), exclude_checkout_pk=checkout.pk if checkout else None
    )
    coupon_eval = coupons_evaluate(
        codes=codes, subtotal=subtotal, email=str(buyer_fields["buyer_email"]), now=now, loaded=loaded
    )
    config = shipping_config_load()
    physical = [line.public_id for line in planned if line.requires_shipping]
    # What ships, for the carriers' quote or the table by weight (unit price 0: the catalog's, as the prefetch
    # before the lock asked, so both find the same cached quote).
    freight_lines = [FreightLine(line.sku, line.quantity) for line in planned if line.requires_shipping]
    ful = evaluate_fulfillment(
        checkout=checkout,
        data=data.fulfillment,
        physical_line_ids=physical,
        config=config,
        subtotal_after_discounts=subtotal - coupon_eval.total,
        buyer_first=str(buyer_fields["buyer_first_name"]),
        buyer_last=str(buyer_fields["buyer_last_name"]),
        shipping_quote=lambda cep, uf, subtotal: checkout_shipping_options(
            config=config, lines=freight_lines, cep=cep, uf=uf, subtotal_after_discounts=subtotal
        ),
    )
    rejections.extend(ful.rejections)
    ful_messages = ful.messages
    if data.fulfillment_by_buyer:
        # The caller cannot write the delivery (BCP-NEG-08): only the buyer, on `continue_url`, can (BCP §4.2).
        # "Enter the address" asked the agent for what it cannot send (its `fulfillment` is ignored): say who does.
        by_buyer = _("O comprador escolhe a entrega (endereço ou retirada na loja) pelo continue_url.")
        ful_messages = [
            replace(
                m,
                severity="requires_buyer_input",
                content=by_buyer if (m.path, m.code) == ("$.fulfillment", "field_required") else m.content,
            )
            if m.type == "error" and m.path.startswith("$.fulfillment")
            else m
            for m in ful.messages
        ]
    messages: list[CheckoutMessage] = [*line_messages, *buyer_messages, *ful_messages, *coupon_eval.messages]
    if not planned:
        messages.insert(0, _err("field_required", _("Adicione ao menos um item."), "$.line_items"))
    if not data.caller_may_complete:
        # Said before any charge (the agent's complete would be refused, so a Pix paid for it could only be
        # refunded): the buyer finishes on the shop's page, `continue_url` (BCP §4 `requires_escalation`).
        forbidden = _("Esta loja não permite que agentes finalizem compras: o comprador conclui pelo continue_url.")
        messages.append(CheckoutMessage("error", AGENT_COMPLETE_FORBIDDEN, forbidden, "requires_buyer_review"))

    payment_instrument = None
    chosen = None
    if data.payment is not None and data.payment.instruments:
        instruments = data.payment.instruments
        chosen = next((i for i in instruments if i.selected), instruments[0])
        payment_instrument = {"id": chosen.id, "handler_id": chosen.handler_id, "type": chosen.type, "selected": True}
        if data.offered_handler_ids is not None and chosen.handler_id not in data.offered_handler_ids:
            # BCP-PAY-03: said at update, so the checkout is not ready_for_complete only for complete to refuse.
            messages.append(unoffered(chosen.handler_id, data.offered_handler_ids, instruments.index(chosen)))
    totals: list[dict[str, object]] = [{"type": "subtotal", "amount": subtotal}]
    for applied in coupon_eval.applied:
        totals.append({"type": "discount", "amount": -applied.amount, "display_text": coupon_total_text(applied.code)})
    pix_off = pix_discount_applied(payment_instrument, subtotal - coupon_eval.total)
    if pix_off is not None:
        totals.append({"type": "discount", "amount": -pix_off["amount"], "display_text": pix_off["title"]})
    shipping_cost = 0
    if ful.selected_option is not None:
        shipping_cost = ful.selected_option.amount
        label = ful.selected_option.title
        totals.append({"type": "fulfillment", "amount": shipping_cost, "display_text": label})
    total = subtotal - coupon_eval.total - (pix_off["amount"] if pix_off else 0) + shipping_cost
    # Card installments above the interest-free ones add a fee line, so the card charge is the total.
    terms = card_terms(chosen, total)
    if terms.fee is not None:
        totals.append(terms.fee)
    total += terms.interest
    messages.extend(terms.messages)
    if terms.instrument_fields and payment_instrument is not None:
        payment_instrument.update(terms.instrument_fields)
    totals.append({"type": "total", "amount": total})
    context = None
    if data.context is not None:
        context = {k: v for k, v in vars(data.context).items() if v}

    fields: dict[str, object] = {
        **buyer_fields,
        **ful.fields,
        "discount_codes": list(data.discount_codes) if data.discount_codes is not None else None,
        "payment_instrument": payment_instrument,
        "context": context,
        "signals": dict(data.signals),
        "totals": totals,
        "total_amount": total,
        "fulfillment_snapshot": ful.snapshot,
        "discounts_applied": [
            *({"code": a.code, "title": a.title, "amount": a.amount, "method": a.method} for a in coupon_eval.applied),
            *([pix_off] if pix_off else []),
        ],
    }
    if data.context is not None and data.context.language:
        fields["language"] = "en" if data.context.language.lower().startswith("en") else "pt-br"
    return Evaluation(
        lines=planned,
        fields=fields,
        messages=messages,
        rejections=rejections,
        status=_status(messages),
        total_amount=total,
        coupons=coupon_eval,
        unavailable_line_ids=unavailable,
    )
