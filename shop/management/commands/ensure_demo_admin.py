"""Make sure a demo admin exists (development only); prints the credentials once, when created."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

DEMO_USERNAME = "admin"
DEMO_PASSWORD = "loja-demo-admin"  # noqa: S105 - development-only demo credential, refused without DEBUG


class Command(BaseCommand):
    help = "Create the demo admin user (DEBUG only) and print its credentials once."

    def handle(self, *args: object, **options: object) -> None:
        if not settings.DEBUG:
            raise CommandError("ensure_demo_admin is for development only (DJANGO_DEBUG is off)")
        user_model = get_user_model()
        if user_model.objects.filter(username=DEMO_USERNAME).exists():
            self.stdout.write("Demo admin already exists (user 'admin').")
            return
        user_model.objects.create_superuser(DEMO_USERNAME, "admin@loja.example.com.br", DEMO_PASSWORD)
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo admin created — user: {DEMO_USERNAME}  password: {DEMO_PASSWORD}  (development only; change it)"
            )
        )
