"""Admin for the shop: catalog (with photos and prices in reais), store settings, the dashboard home.

Checkout, shipping and coupon admin live with the checkout engine (shop/admin/checkout.py).
"""

import shop.admin.checkout  # noqa: F401  (registers checkout, shipping and coupon admin)

# isort: split
from shop.admin import (
    catalog,  # noqa: F401  (registers the catalog admin)
    fiscal,  # noqa: F401  (the NF-e list with the re-issue action)
    payments,  # noqa: F401  (the boleto refunds with the order and the buyer to contact, MED disputes with the order)
    reminders,  # noqa: F401  (registers the checkout reminders list)
    staff,  # noqa: F401  (groups and users: permission names in the admin's language)
    store,  # noqa: F401  (registers the store settings admin)
    subscriptions,  # noqa: F401  (registers the subscription plans admin)
)
