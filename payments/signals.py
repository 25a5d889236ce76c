"""The payments app's two business signals (contracts.md). Receivers live in `shop/receivers.py`."""

from django.dispatch import Signal

# send(sender=PixCharge, reference=str, txid=str, amount=int, end_to_end_id=str, paid_at=datetime)
# Sent INSIDE the settling transaction (charge row locked). A receiver returns "accepted" or
# "rejected"; any "rejected" makes payments record the payment and refund it in full automatically.
# A receiver that raises rolls the settlement back; the Celery task retries it.
charge_settled = Signal()

# send(sender=PixRefund, reference=str, refund_id=str, status="completed"|"failed", amount=int)
# Sent on commit, once, when a refund requested through `refund_request` reaches a final state.
refund_finished = Signal()

# send(sender=CardPayment, reference=str, payment_id=str, status="approved"|"declined", amount=int)
# The outcome of a card payment learned after `card_payment_authorize` returned (gateway webhook, or the
# reconcile sweep asking the gateway by order code). Sent INSIDE the transaction that recorded it; a
# receiver returns "accepted" or "rejected"; any "rejected" of an approval refunds it in full automatically.
# `payment_id` is "" when the gateway has no charge at all for the reference.
card_payment_settled = Signal()
