"""Demo data of the checkout engine (shipping methods, pickup locations, coupons)."""


def seed_checkout_demo() -> None:
    """Idempotent: called at the end of `seed_demo`."""
