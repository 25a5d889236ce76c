"""Load the demo shop, once: on a database where it was never loaded, what is missing of the catalog
(shop.demo.seed) and of the shipping, pickup and coupon demo data (shop.demo.checkout) is created; rows that exist,
edited by the merchant or not, stay as they are. Later runs (every `make run`) write nothing, so a demo row the
merchant deleted stays deleted; `--again` re-creates what is missing."""

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand
from django.utils import formats, timezone

from shop.demo.checkout import seed_checkout_demo
from shop.demo.seed import seed_catalog, seed_store_fiscal, seed_store_home
from shop.store.services import store_row


class Command(BaseCommand):
    help = "Create the demo shop once (categories, products, variants, images, shipping, coupons)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--again",
            action="store_true",
            help="Create what is missing of the demo even though it was loaded before (rows deleted since too).",
        )

    def handle(self, *args: object, **options: Any) -> None:
        store = store_row()
        if store.demo_loaded_at is not None and not options["again"]:
            loaded = formats.localize(timezone.localtime(store.demo_loaded_at))
            self.stdout.write(f"Demo shop loaded on {loaded}: nothing written (--again re-creates what is missing).")
            return
        written = seed_catalog()
        written.update(seed_checkout_demo())
        seed_store_fiscal()  # the demo's paid orders get an NF-e from the sandbox provider
        seed_store_home()  # the home's hero line and picture of the demo products
        type(store).objects.filter(pk=store.pk, demo_loaded_at__isnull=True).update(demo_loaded_at=timezone.now())
        summary = ", ".join(f"{kind}: {count}" for kind, count in written.items())
        self.stdout.write(self.style.SUCCESS(f"Demo shop ready (rows written — {summary})."))
