"""`python manage.py pix_sandbox_pay <txid>`: the same as `POST /_sandbox/psp/cob/{txid}/pay`."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from payments.sandbox import bodies, services
from payments.sandbox.views import pay_options


class Command(BaseCommand):
    help = "Pay a charge at the sandbox PSP (fault-injection flags as in PIX.md §4.3)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("txid")
        parser.add_argument("--amount", default="", help='decimal string, e.g. "5999.00" (default: charge amount)')
        parser.add_argument("--at", default="", help="RFC 3339 payment time (horario)")
        parser.add_argument("--payer-message", default="")
        parser.add_argument("--deliver", default="once", choices=sorted(services.DELIVERY_MODES))
        parser.add_argument("--delay-s", type=int, default=0)
        parser.add_argument("--wrong-amount", action="store_true")
        parser.add_argument("--batch-with", default="")
        parser.add_argument("--refund-first", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.BCP_PIX_SANDBOX:
            raise CommandError("the sandbox PSP is disabled (BCP_PIX_SANDBOX is off)")
        params = {
            "amount": options["amount"],
            "at": options["at"],
            "payer_message": options["payer_message"],
            "deliver": options["deliver"],
            "delay_s": options["delay_s"],
            "wrong_amount": options["wrong_amount"],
            "batch_with": options["batch_with"],
            "refund_first": options["refund_first"],
        }
        try:
            paid = services.pay(txid=options["txid"], options=pay_options(params))
        except services.SandboxError as exc:
            raise CommandError(f"{exc.name}: {exc.detail}") from exc
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(json.dumps({"pix": [bodies.pix_item(pix) for pix in paid]}, ensure_ascii=False))
