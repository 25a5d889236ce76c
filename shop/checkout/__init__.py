"""The checkout engine, one module per step; its public face is `shop/services.py`.

types (inputs/outputs) → evaluate (lines, totals, messages) → fulfillment (destinations, options)
→ core (lock, persist, reload) → complete (reserve, pay, settle Pix) → place (order from checkout);
selectors for reads, views/urls/admin for the storefront and back office.
"""
