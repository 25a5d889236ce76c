"""Freight from the carriers (issue 36): parcels from lines, quotes (carrier or table), labels, tracking.

The checkout calls `quote_for(lines=[FreightLine(sku, quantity, unit_price)], destination_cep=…,
subtotal_after_discounts=…)`; staff buy labels from the order page (shop/freight/panels.py); tracking
arrives by webhook (Melhor Envio) or by the polling sweep (Correios) and becomes fulfillment events.
"""
