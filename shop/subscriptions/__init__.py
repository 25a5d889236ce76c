"""Subscriptions (issue 38): plans sold by recurrence and, later, the subscriptions themselves.

Models live in `shop/models/subscriptions.py` (the shop app's models package); this package holds their
words, selectors and services. How a cycle is paid stays in `payments/` (Pix Automático's PSP boundary).
"""
