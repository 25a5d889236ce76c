"""Pix Automático (Bacen's recurring Pix): the shop's side of recurrences, their webhooks and cycle charges.

The PSP's resources are spoken in `payments/psp/recurring.py`; this package keeps what the shop stores of them.
"""
