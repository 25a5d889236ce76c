"""`manage.py new_signing_key --kid KID --out FILE [--compromised]`: the first step of a key rotation (BCP §14).

Writes a new ES256 key and prints the settings that make it the signing key. Unless the current key is compromised,
they keep the current one in `keys[]` for 7 days (BCP-SIG-07): platforms verify webhooks and answers it signed
before every process has restarted, and webhooks still being retried. README "Rotating the signing key".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from bcp_app.protocol.keys import KEEP_REPLACED_KEY, new_key_file, public_jwk, signing_key_id

_KID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class Command(BaseCommand):
    help = "Write a new ES256 signing key and print the settings that rotate to it (the old key kept 7 days)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--kid", required=True, help="the new key's kid, e.g. loja-2027-01 (unique)")
        parser.add_argument("--out", required=True, help="where to write the new PEM (0600; never overwritten)")
        parser.add_argument(
            "--compromised", action="store_true", help="the current key leaked: do not keep it in keys[] at all"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        kid, out = str(options["kid"]), Path(options["out"])
        if not _KID.match(kid):
            raise CommandError("--kid: letters, digits, '.', '_' and '-' only, at most 64 characters")
        if kid in (signing_key_id(), settings.BCP_PREVIOUS_SIGNING_KEY_ID):
            raise CommandError(f"--kid {kid} is already in use: every key in keys[] needs its own kid")
        try:
            key = new_key_file(out)
        except FileExistsError as exc:
            raise CommandError(f"--out {out} exists: a key file is never overwritten") from exc
        now = timezone.now().replace(microsecond=0)
        lines = [f"BCP_SIGNING_KEY_FILE={out.resolve()}", f"BCP_SIGNING_KEY_ID={kid}"]
        if options["compromised"]:
            lines += [
                "BCP_PREVIOUS_SIGNING_KEY_FILE=",
                "BCP_PREVIOUS_SIGNING_KEY_ID=",
                "BCP_PREVIOUS_SIGNING_KEY_RETIRED_AT=",
            ]
            after = f"The key {signing_key_id()} leaves keys[] as soon as every process has restarted."
        else:
            lines += [
                f"BCP_PREVIOUS_SIGNING_KEY_FILE={Path(settings.BCP_SIGNING_KEY_FILE).resolve()}",
                f"BCP_PREVIOUS_SIGNING_KEY_ID={signing_key_id()}",
                f"BCP_PREVIOUS_SIGNING_KEY_RETIRED_AT={now.isoformat()}",
            ]
            until = (now + KEEP_REPLACED_KEY).isoformat()
            after = (
                f"The key {signing_key_id()} stays in keys[] until {until}; then remove the BCP_PREVIOUS_SIGNING_KEY_* "
                "settings (manage.py check --deploy says so)."
            )
        self.stdout.write(
            f"New ES256 key {kid} written to {out} (public JWK: {public_jwk(key.public_key(), kid=kid)})."
        )
        self.stdout.write("Set these, then restart the web and worker processes:")
        for line in lines:
            self.stdout.write(f"  {line}")
        self.stdout.write(after)
