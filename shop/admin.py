"""Admin for the shop. Catalog admin lives here; checkout admin in shop/checkout_admin.py."""

import shop.checkout_admin  # noqa: F401  (registers checkout, shipping and coupon admin)
