"""Boleto through the card gateway (Pagar.me v5 `payment_method: "boleto"`): issue, settle once, expire, refund.

`models` (the boleto per reference, refunds by bank transfer), `codes` (linha digitável, barcode, ITF SVG),
`service` (issue, settle, reconcile, expire, refunds). Nothing is imported here: `payments.models` loads
`payments.boleto.models` while the app registry starts.
"""
