"""The only ways `orders` talks outward (contracts.md). Every signal is sent after commit.

order_changed          send(sender=Order, order_id=str, event=str, platform_id=str, snapshot=str)
                       # platform_id "": none; snapshot: the presented order at this change (Order.bcp_json)
                       # also outbox_key=str and order=Order|None: the order as the outbox task read it after
                       # commit, unlocked (lines and adjustments prefetched for "placed"), shared by every
                       # receiver instead of each re-reading it; never mutate it (issue 34)
                       # also events=list[str] when one transaction changed the order more than once (a cancel
                       # that asks for the refund, an order placed and changed at once): one signal, one webhook,
                       # the final snapshot; `event` is the last of `events` — "placed" for a placement, whose
                       # e-mail and NF-e follow it — so a receiver keyed on an event name looks for it in `events`
refund_requested       send(sender=Order, order_id=str, adjustment_id=str, payment_reference=str, amount=int,
                            reason=str)   # amount in centavos, positive
stock_return_requested send(sender=Order, order_id=str, items=list[tuple[str, int]])   # (sku, quantity)
label_purchase_requested send(sender=Order, outbox_key=str, order_id=str, label_id=str)
                       # from the outbox (kind label_purchase), not after commit: the receiver buys the label
                       # at the carrier (shop.freight.labels) and must be idempotent on label_id
"""

from django.dispatch import Signal

order_changed = Signal()
refund_requested = Signal()
stock_return_requested = Signal()
label_purchase_requested = Signal()
