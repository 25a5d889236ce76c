"""Deployment checks of payments (`manage.py check --deploy`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, Tags, register


@register(Tags.security, deploy=True)
def pix_webhook_authenticated(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """With a real PSP (sandbox off) the webhook is authenticated only by the proxy's mTLS header.

    Without `PIX_WEBHOOK_MTLS_HEADER` anyone can post deliveries, each queueing a PSP lookup: refuse.
    """
    if settings.BCP_PIX_SANDBOX or getattr(settings, "PIX_WEBHOOK_MTLS_HEADER", ""):
        return []
    return [
        Error(
            "The Pix webhook is unauthenticated: BCP_PIX_SANDBOX is off and PIX_WEBHOOK_MTLS_HEADER is unset.",
            hint="Terminate mTLS at the reverse proxy (ssl_verify_client on, the PSP's CA) and set "
            "PIX_WEBHOOK_MTLS_HEADER to the header it forwards (e.g. X-SSL-Client-Verify).",
            id="payments.E001",
        )
    ]


@register(Tags.security, deploy=True)
def card_webhook_authenticated(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """Pagar.me authenticates its webhook only with the Basic credentials configured on the hook."""
    if "pagarme" not in getattr(settings, "PAYMENTS_CARD_GATEWAY", ""):
        return []
    missing = [
        name
        for name in ("PAGARME_SECRET_KEY", "PAGARME_WEBHOOK_USER", "PAGARME_WEBHOOK_PASSWORD")
        if not getattr(settings, name, "")
    ]
    if not missing:
        return []
    return [
        Error(
            f"The Pagar.me card gateway is configured without {', '.join(missing)}.",
            hint="Set the secret key (sk_…) and the Basic user/password you configure on the webhook in "
            "Pagar.me's dashboard; without them every card webhook is refused.",
            id="payments.E002",
        )
    ]
