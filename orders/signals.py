"""The only ways `orders` talks outward (contracts.md). Every signal is sent after commit.

order_changed          send(sender=Order, order_id=str, event=str, platform_id=str)  # "": no platform
refund_requested       send(sender=Order, order_id=str, adjustment_id=str, payment_reference=str, amount=int,
                            reason=str)   # amount in centavos, positive
stock_return_requested send(sender=Order, order_id=str, items=list[tuple[str, int]])   # (sku, quantity)
"""

from django.dispatch import Signal

order_changed = Signal()
refund_requested = Signal()
stock_return_requested = Signal()
