"""Tokenized card payments through a gateway (the seed's `gpay` handler, PAYMENT_GATEWAY credential).

Real gateways plug in behind `CardGateway` via the `PAYMENTS_CARD_GATEWAY` dotted path; the sandbox
gateway accepts the test tokens `success_token` (approved) and `fail_token` (declined, payment_failed).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string


@dataclass(frozen=True)
class CardPaymentResult:
    approved: bool
    code: str
    message: str
    payment_id: str


@dataclass(frozen=True)
class GatewayResult:
    approved: bool
    code: str
    message: str
    gateway_reference: str = ""


class CardGateway(Protocol):
    name: str

    def authorize(self, *, reference: str, amount: int, token: str, idempotency_key: str) -> GatewayResult: ...


class SandboxCardGateway:
    name = "sandbox"

    def authorize(self, *, reference: str, amount: int, token: str, idempotency_key: str) -> GatewayResult:
        if token == "success_token":  # noqa: S105 - public test token
            return GatewayResult(True, "", "Pagamento aprovado (sandbox)", f"sbx_{secrets.token_hex(8)}")
        if token == "fail_token":  # noqa: S105 - public test token
            return GatewayResult(False, "payment_failed", "Cartão recusado pelo emissor (sandbox)")
        return GatewayResult(False, "payment_failed", "Token de teste desconhecido: use success_token ou fail_token")


def get_card_gateway() -> CardGateway | None:
    path = getattr(settings, "PAYMENTS_CARD_GATEWAY", "")
    if path:
        return import_string(path)()
    return SandboxCardGateway() if settings.BCP_PIX_SANDBOX else None
