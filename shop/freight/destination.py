"""What the shop's freight says when staff correct an order's delivery address ("Corrigir endereço de entrega",
orders.services.order_destination_set): a carrier label bought for the old address keeps it from changing
(`ORDERS_DESTINATION_GUARDS`, asked under the order's lock, which the label's request takes too), and a new CEP
whose freight differs from what the buyer paid is said after the save (`ORDERS_DESTINATION_NOTES`, no lock held:
the carrier may be asked). Nothing is charged or refunded: the difference is the shop's."""

from __future__ import annotations

from django.utils.translation import gettext as _

from kernel.cep import cep_digits
from kernel.money import format_brl
from orders.models import Order
from shop.freight.parcels import FreightLine
from shop.freight.quotes import quote_for
from shop.models import Checkout, ShippingLabel


def label_refusal(order: Order) -> str:
    """`ORDERS_DESTINATION_GUARDS`: a live label (bought, or being bought) carries the old address; staff cancel
    it first ("Cancelar etiqueta" on the order's label box) and buy another after the correction. One query."""
    label = ShippingLabel.objects.filter(order=order, status__in=ShippingLabel.LIVE).first()
    if label is None:
        return ""
    if label.status == ShippingLabel.Status.REQUESTED:
        return _(
            "Uma etiqueta está sendo comprada para o endereço atual do pedido #%(n)s. Espere a compra terminar, "
            "cancele a etiqueta (“Cancelar etiqueta”, no quadro da etiqueta deste pedido) e depois corrija o endereço."
        ) % {"n": order.number}
    return _(
        "O pedido #%(n)s já tem etiqueta comprada (%(service)s) para o endereço atual. Cancele a etiqueta primeiro "
        "(“Cancelar etiqueta”, no quadro da etiqueta deste pedido), corrija o endereço e compre outra etiqueta."
    ) % {"n": order.number, "service": label.service_name or label.carrier_name or label.carrier}


def _paid_freight(order: Order) -> int:
    return sum(int(t.get("amount", 0)) for t in order.totals or () if t.get("type") == "fulfillment")


def _subtotal_after_discounts(order: Order) -> int:
    """What the free-shipping thresholds read: the items less their discounts, as the order's totals keep them."""
    kinds = ("subtotal", "discount", "items_discount")
    return sum(int(t.get("amount", 0)) for t in order.totals or () if t.get("type") in kinds)


def freight_notes(order: Order, before: dict[str, str]) -> list[str]:
    """`ORDERS_DESTINATION_NOTES`: after a new CEP, what the order's delivery option costs to it now against what
    the buyer paid, or that the option does not reach it. Nothing when the CEP is the same or the price is."""
    old, new = cep_digits(str(before.get("postal_code", ""))), cep_digits(str(order.destination.get("postal_code", "")))
    if new is None or old == new:
        return []
    lines = [
        FreightLine(line.sku, line.quantity_total, line.unit_price) for line in order.lines.all() if line.quantity_total
    ]
    try:
        quote = quote_for(lines=lines, destination_cep=new, subtotal_after_discounts=_subtotal_after_discounts(order))
    except ValueError:
        return []
    selected = Checkout.objects.filter(public_id=order.checkout_id).values_list("selected_option_id", flat=True)
    chosen = next(iter(selected), "")
    # The option the buyer chose (the checkout's id), else the same service by name ("SEDEX", "SEDEX (Correios)").
    named = order.fulfillment_title.split(" (")[0].casefold()
    option = next((o for o in quote.options if o.id == chosen), None) or next(
        (o for o in quote.options if o.title.split(" (")[0].casefold() == named), None
    )
    title = order.fulfillment_title or chosen
    paid = _paid_freight(order)
    if option is None:
        return [
            _(
                "Frete: “%(option)s” não atende o CEP novo. Combine a entrega com o comprador; nada é cobrado nem "
                "devolvido a ele (o frete pago foi %(paid)s)."
            )
            % {"option": title, "paid": format_brl(paid)}
        ]
    if option.amount == paid:
        return []
    return [
        _(
            "Frete: para o CEP novo, “%(option)s” custaria %(new)s; o comprador pagou %(paid)s. A diferença fica com "
            "a loja: nada é cobrado nem devolvido ao comprador."
        )
        % {"option": title, "new": format_brl(option.amount), "paid": format_brl(paid)}
    ]
