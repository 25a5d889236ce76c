"""PSP selection: the sandbox when `BCP_PIX_SANDBOX` is on, else the Bacen API Pix adapter (PIX_PSP_*)."""

from __future__ import annotations

from typing import cast

from django.conf import settings

from payments.psp.bacen import BacenPixPSP
from payments.psp.base import (
    PixPayer,
    PixPSP,
    PSPCharge,
    PSPError,
    PSPInvalidResponse,
    PSPNotFound,
    PSPPayment,
    PSPRefund,
    PSPRejected,
    PSPUnavailable,
)
from payments.psp.recurring import RecurringPixPSP
from payments.sandbox.psp import SandboxPixPSP

__all__ = [
    "PSPCharge",
    "PSPError",
    "PSPInvalidResponse",
    "PSPNotFound",
    "PSPPayment",
    "PSPRefund",
    "PSPRejected",
    "PSPUnavailable",
    "PixPSP",
    "PixPayer",
    "RecurringPixPSP",
    "get_psp",
    "get_recurring_psp",
]


_BACEN: dict[tuple[object, ...], PixPSP] = {}


def get_psp() -> PixPSP:
    if settings.BCP_PIX_SANDBOX:
        return SandboxPixPSP()

    options = {
        "base_url": settings.PIX_PSP_BASE_URL,
        "token_url": settings.PIX_PSP_TOKEN_URL,
        "client_id": settings.PIX_PSP_CLIENT_ID,
        "client_secret": settings.PIX_PSP_CLIENT_SECRET,
        "pix_key": settings.PIX_KEY,
        "cert_file": settings.PIX_PSP_CERT_FILE,
        "key_file": settings.PIX_PSP_KEY_FILE,
        "ca_file": settings.PIX_PSP_CA_FILE,
        "backoff": float(getattr(settings, "PIX_PSP_BACKOFF_SECONDS", 0.5)),
        "timeout": float(settings.PIX_PSP_TIMEOUT_SECONDS),
    }
    # One adapter (one TLS context, one token) per process and configuration.
    key = tuple(options.values())
    if key not in _BACEN:
        _BACEN[key] = BacenPixPSP(**options)
    return _BACEN[key]


def get_recurring_psp() -> RecurringPixPSP:
    """The same PSP as `get_psp`, seen through its Pix Automático resources (both adapters implement them)."""
    return cast(RecurringPixPSP, get_psp())
