"""What the lifecycle needs of an NF-e issuing service: the results, the webhook event, the provider protocol."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

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
class CorrectionResult:
    """The SEFAZ's answer to a carta de correção (event 110110): registered with its number (nSeqEvento) and
    files, or refused with the reason; the note itself does not change."""

    status: Literal["registered", "refused"]
    number: int | None = None
    sefaz_status: str = ""
    sefaz_reason: str = ""
    xml: bytes | None = None
    pdf: bytes | None = None
    xml_path: str = ""
    pdf_path: str = ""


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

    def correct(self, *, ref: str, text: str) -> CorrectionResult: ...

    def last_correction(self, *, ref: str) -> CorrectionResult | None:
        """The note's last registered letter as the provider knows it; None when it has none."""
        ...

    def download(self, *, path: str) -> bytes: ...

    def parse_webhook(self, *, headers: dict[str, str], body: bytes) -> WebhookEvent: ...

    def result_from_webhook(self, *, body: dict[str, Any]) -> ProviderResult: ...
