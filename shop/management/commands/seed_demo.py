"""Load the demo shop, once: what is missing of the catalog (shop.demo.seed) and of the shipping, pickup and
coupon demo data (shop.demo.checkout) is created; rows that exist, edited by the merchant or not, stay as they are."""

from django.core.management.base import BaseCommand

from shop.demo.checkout import seed_checkout_demo
from shop.demo.seed import seed_catalog, seed_store_fiscal, seed_store_home


class Command(BaseCommand):
    help = "Create what is missing of the demo shop (categories, products, variants, images, shipping, coupons)."

    def handle(self, *args: object, **options: object) -> None:
        written = seed_catalog()
        written.update(seed_checkout_demo())
        seed_store_fiscal()  # the demo's paid orders get an NF-e from the sandbox provider
        seed_store_home()  # the home's hero line and picture of the demo products
        summary = ", ".join(f"{kind}: {count}" for kind, count in written.items())
        self.stdout.write(self.style.SUCCESS(f"Demo shop ready (rows written — {summary})."))
