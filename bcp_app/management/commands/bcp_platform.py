"""`manage.py bcp_platform add NAME [--profile URL] | list | revoke PLATFORM_ID`."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from bcp_app.models import Platform
from bcp_app.service.platforms import platform_create, platform_revoke


class Command(BaseCommand):
    help = "Manage BCP agent platforms (API keys are printed once and stored hashed)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        add = sub.add_parser("add", help="register a platform and print its new API key once")
        add.add_argument("name")
        add.add_argument("--profile", default="", help="the platform's BCP profile URL")
        sub.add_parser("list", help="list platforms")
        revoke = sub.add_parser("revoke", help="revoke a platform's API key")
        revoke.add_argument("platform_id")

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "add":
            try:
                created = platform_create(name=options["name"], profile_url=options["profile"])
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(f"platform: {created.platform.public_id}")
            self.stdout.write(f"api key (shown once): {created.api_key}")
        elif action == "list":
            for p in Platform.objects.order_by("created_at"):
                state = "active" if p.active else "revoked"
                self.stdout.write(f"{p.public_id}\t{state}\t{p.name}\t{p.profile_url or '-'}")
        elif action == "revoke":
            try:
                platform = platform_revoke(public_id=options["platform_id"])
            except Platform.DoesNotExist as exc:
                raise CommandError(f"unknown platform {options['platform_id']!r}") from exc
            self.stdout.write(f"revoked {platform.public_id}")
