"""The checkout engine, one module per step; its public face is `shop/checkout/services.py`.

types (inputs/outputs) → evaluate (lines, totals, messages) → fulfillment (method, destination, options)
→ core (lock, write, events) → pix (the charge on create/update, PSP call after commit) → hold (stock and
coupon uses) → complete (three steps, the PSP/gateway call outside any transaction) → settle (Pix settlement
and the sweeps finishing what complete left waiting) → place (order from checkout); selectors for reads,
views/urls/admin for the storefront and back office.
"""
