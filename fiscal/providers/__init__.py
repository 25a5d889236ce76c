"""The fiscal provider boundary: what the lifecycle needs of an NF-e issuing service.

`get_provider()` picks the configured one (`FISCAL_PROVIDER`: "sandbox" or "focusnfe"). Every method
does network I/O (or stands for it) and is called outside any transaction (`fiscal.services.jobs`).
"""

from __future__ import annotations

from django.conf import settings

from fiscal.providers.base import (
    CorrectionResult,
    FiscalProvider,
    ProviderResult,
    ProviderUnavailable,
    ResultStatus,
    WebhookEvent,
    WebhookRejected,
)
from fiscal.providers.focusnfe import FocusNFeProvider
from fiscal.providers.sandbox import SandboxProvider

__all__ = [
    "CorrectionResult",
    "FiscalProvider",
    "ProviderResult",
    "ProviderUnavailable",
    "ResultStatus",
    "WebhookEvent",
    "WebhookRejected",
    "get_provider",
]


def get_provider(environment: str = "homologacao") -> FiscalProvider:
    """`environment` ("homologacao" | "producao") is the document's: it picks the provider's endpoint."""
    name = getattr(settings, "FISCAL_PROVIDER", "sandbox")
    if name == "focusnfe":
        return FocusNFeProvider.from_settings(environment)
    return SandboxProvider()
