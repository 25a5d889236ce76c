"""Deployment checks of the shop (`manage.py check --deploy`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, Tags, register

# Backends that write whole messages (buyer names, addresses, order contents) where logs go.
_PRINTING_BACKENDS = ("django.core.mail.backends.console.", "django.core.mail.backends.filebased.")


@register(Tags.security, deploy=True)
def mail_backend_keeps_buyer_data_out_of_logs(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """In production no mailer may print messages: the console backend puts buyer PII in the worker logs."""
    mailers = getattr(settings, "MAILERS", None) or {"default": {"BACKEND": getattr(settings, "EMAIL_BACKEND", "")}}
    printing = sorted(
        name for name, config in mailers.items() if str(config.get("BACKEND", "")).startswith(_PRINTING_BACKENDS)
    )
    if not printing:
        return []
    return [
        Error(
            f"Mailer(s) {', '.join(printing)} print whole e-mails (buyer names, addresses, orders) to the logs.",
            hint="Set DJANGO_EMAIL_BACKEND to the SMTP backend (the production default) or another sending backend.",
            id="shop.E001",
        )
    ]
