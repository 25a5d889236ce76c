"""Protocol names fixed by BCP §1."""

PROTOCOL_VERSION = "2026-07-28"
SERVICE = "br.dev.bcp.shopping"
CHECKOUT = "br.dev.bcp.shopping.checkout"
FULFILLMENT = "br.dev.bcp.shopping.fulfillment"
DISCOUNT = "br.dev.bcp.shopping.discount"
ORDER = "br.dev.bcp.shopping.order"
FISCAL_DOCUMENT = "br.dev.bcp.shopping.fiscal_document"  # extends ORDER: NF-e on orders (issue 18)
ORDER_ACTIONS = "br.dev.bcp.shopping.order_actions"  # extends ORDER: cancel and return by agents (issue 35)
# Subscriptions paid by Pix Automático (issue 38): extends checkout (same buyer and destination) and order (each
# cycle is an order).
SUBSCRIPTION = "br.dev.bcp.shopping.subscription"
CATALOG_SEARCH = "br.dev.bcp.shopping.catalog.search"
CATALOG_LOOKUP = "br.dev.bcp.shopping.catalog.lookup"
AP2_MANDATE = "br.dev.bcp.shopping.ap2_mandate"
BUYER_CONSENT = "br.dev.bcp.shopping.buyer_consent"  # extends checkout: buyer.consent (LGPD)
CART = "br.dev.bcp.shopping.cart"  # BCP §1: carts that convert to checkouts (cart_id)
PERMALINK = "br.dev.bcp.shopping.permalink"  # BCP §15: browser buy links (config.endpoint)
CATALOG_FEED = "br.dev.bcp.shopping.catalog.feed"  # bulk discovery: the catalog as one schema.org DataFeed
PIX_HANDLER = "br.dev.bcp.pix"
BOLETO_HANDLER = "br.dev.bcp.boleto"  # issue 37: boleto through the card gateway (README "Boleto")
SPEC_BASE = "https://bcp.dev.br/draft/specification"
SCHEMA_BASE = "https://bcp.dev.br/draft/schemas"
SERVICES_BASE = "https://bcp.dev.br/draft/services/shopping"
A2A_EXTENSION_URI = "https://bcp.dev.br/draft/specification/reference"
