"""The fiscal provider boundary: what the lifecycle needs of an NF-e issuing service.

`get_provider()` picks the configured one (`FISCAL_PROVIDER`: "sandbox" or "focusnfe"). Every method
does network I/O (or stands for it) and is called outside any transaction (`fiscal.services.jobs`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from django.conf import settings

ResultStatus = Literal["authorized", "processing", "rejected", "cancelled"]


class ProviderUnavailable(Exception):
    """Timeout, connection refused, 5xx, 429, bad credentials: nothing decided, try again later."""


class WebhookRejected(Exception):
    """A notification that does not authenticate or cannot be read: answered 4xx, stored nowhere."""


@dataclass
class ProviderResult:
    status: ResultStatus
    access_key: str = ""
    number: int | None = None
    series: int | None = None
    protocol: str = ""
    sefaz_status: str = ""
    sefaz_reason: str = ""
    issued_at: datetime | None = None
    xml: bytes | None = None
    danfe: bytes | None = None
    # Paths on the provider to fetch the files from when they did not come inline (Focus NFe).
    xml_path: str = ""
    danfe_path: str = ""


@dataclass
class WebhookEvent:
    event_id: str
    provider_ref: str
    body: dict[str, Any] = field(default_factory=dict)


class FiscalProvider(Protocol):
    name: str

    def issue(self, *, ref: str, invoice: dict[str, Any]) -> ProviderResult: ...

    def status(self, *, ref: str) -> ProviderResult | None:
        """The provider's view of `ref`; None when it never heard of it."""
        ...

    def cancel(self, *, ref: str, justification: str) -> ProviderResult: ...

    def download(self, *, path: str) -> bytes: ...

    def parse_webhook(self, *, headers: dict[str, str], body: bytes) -> WebhookEvent: ...

    def result_from_webhook(self, *, body: dict[str, Any]) -> ProviderResult: ...


def get_provider(environment: str = "homologacao") -> FiscalProvider:
    """`environment` ("homologacao" | "producao") is the document's: it picks the provider's endpoint."""
    name = getattr(settings, "FISCAL_PROVIDER", "sandbox")
    if name == "focusnfe":
        from fiscal.providers.focusnfe import FocusNFeProvider

        return FocusNFeProvider.from_settings(environment)
    from fiscal.providers.sandbox import SandboxProvider

    return SandboxProvider()
