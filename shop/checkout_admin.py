"""Admin for checkouts, shipping methods and coupons (checkout engine)."""
