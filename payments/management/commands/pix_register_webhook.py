"""`python manage.py pix_register_webhook`: `PUT /webhook/{chave}` with our URL at the PSP (PIX.md §0 prerequisites)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from payments.psp import PSPError, get_psp


class Command(BaseCommand):
    help = "Register {BCP_PUBLIC_URL}/payments/pix/webhook for the Pix key at the PSP (it appends /pix)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="", help="webhook URL (default: {BCP_PUBLIC_URL}/payments/pix/webhook)")
        parser.add_argument("--key", default="", help="Pix key (default: PIX_KEY)")

    def handle(self, *args: Any, **options: Any) -> None:
        url = options["url"] or f"{settings.BCP_PUBLIC_URL}/payments/pix/webhook"
        key = options["key"] or settings.PIX_KEY
        if not url.startswith("https://") and not settings.BCP_PIX_SANDBOX:
            raise CommandError("PSPs only call https:// webhook URLs (mTLS); set BCP_PUBLIC_URL or --url")
        try:
            get_psp().register_webhook(key, url)
        except PSPError as exc:
            raise CommandError(f"the PSP refused the webhook: {exc}") from exc
        self.stdout.write(f"webhook for key {key}: {url}")
