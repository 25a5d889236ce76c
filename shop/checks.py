"""Deployment checks of the shop (`manage.py check --deploy`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register

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


@register(Tags.security, deploy=True)
def proxy_headers_trusted_from_proxies_only(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    """`FORWARDED_ALLOW_IPS=*` makes every client a proxy: its own X-Forwarded-For becomes the IP that the
    API-key failure budget, the admin lockout and the webhook limits count, a new one per request."""
    if "*" not in getattr(settings, "FORWARDED_ALLOW_IPS", []):
        return []
    return [
        Warning(
            "FORWARDED_ALLOW_IPS=* trusts X-Forwarded-For from any client, so rate limits and lockouts by IP "
            "can be bypassed.",
            hint="Name only the TLS proxy or load balancer (addresses or networks, e.g. the compose network "
            "172.30.0.0/24 of docker-compose.yml).",
            id="shop.W001",
        )
    ]


@register(deploy=True)
def mcp_answers_the_public_host(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    """The MCP endpoint checks the Host header against BCP_MCP_ALLOWED_HOSTS (the SDK's DNS-rebinding protection,
    same rule: an exact host, or `host:*` for any port): without the host of BCP_PUBLIC_URL every agent's MCP call
    is refused with 421, while the profile advertises that endpoint."""
    public = getattr(settings, "BCP_PUBLIC_URL", "")
    host = urlsplit(public).netloc
    allowed = list(getattr(settings, "BCP_MCP_ALLOWED_HOSTS", []))
    if not host or host in allowed or any(a.endswith(":*") and host.startswith(a[:-2] + ":") for a in allowed):
        return []
    return [
        Warning(
            f"BCP_MCP_ALLOWED_HOSTS does not name {host}, the host of BCP_PUBLIC_URL: every MCP call to "
            f"{public}/bcp/mcp is refused (421).",
            hint=f"Add it: BCP_MCP_ALLOWED_HOSTS={host} (comma-separated; `name:*` for any port).",
            id="shop.W002",
        )
    ]


@register(deploy=True)
def nfe_not_simulated_in_production(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    """FISCAL_PROVIDER defaults to the local sandbox, which "authorizes" every NF-e itself: in production the buyers
    would be e-mailed notas fiscais that no SEFAZ ever saw (in the *produção* environment without "sem valor
    fiscal" on the DANFE)."""
    if getattr(settings, "DEBUG", False) or getattr(settings, "FISCAL_ISSUE_ON", "paid") == "off":
        return []
    if getattr(settings, "FISCAL_PROVIDER", "sandbox") != "sandbox":
        return []
    return [
        Warning(
            "FISCAL_PROVIDER=sandbox with DEBUG off: every paid order gets a simulated NF-e that no SEFAZ authorized, "
            "e-mailed to the buyer as its nota fiscal.",
            hint="Set FISCAL_PROVIDER=focusnfe with FISCAL_FOCUSNFE_TOKEN and FISCAL_WEBHOOK_SECRET, or "
            "FISCAL_ISSUE_ON=off if the shop issues no NF-e.",
            id="shop.W003",
        )
    ]
