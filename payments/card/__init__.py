"""Tokenized card payments through a gateway: Pagar.me API v5 (`pagarme.py`) or the sandbox (`sandbox.py`).

`gateway` is the boundary (value objects, errors, decline messages), `service` authorizes + captures,
records outcomes and reconciles by order code, `webhook` is the inbox, `settle` announces late outcomes
to the shop, `refunds` the estornos. Real gateways are named by `PAYMENTS_CARD_GATEWAY`
(`payments.card.pagarme.PagarmeGateway`). Nothing is imported here: `payments.models` loads
`payments.card.models` while the app registry starts.
"""
