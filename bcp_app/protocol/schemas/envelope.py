"""The `ucp` envelope of BCP responses (BCP §5): version, active capabilities and payment handlers."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bcp_app.protocol.schemas.common import ResponseModel, VersionRef
from bcp_app.protocol.schemas.handlers import PaymentHandlerOut


class UcpEnvelope(ResponseModel):
    version: str = Field(description="Versão do protocolo BCP desta resposta, `2026-07-28`.")
    status: Literal["success", "error"] | None = Field(
        default=None, description="`error` só em Error Responses (BCP §5.3); ausente ou `success` caso contrário."
    )
    capabilities: dict[str, list[VersionRef]] | None = Field(
        default=None, description="Capacidades ativas relevantes para esta resposta (nome → [{version}])."
    )
    payment_handlers: dict[str, list[PaymentHandlerOut]] | None = Field(
        default=None, description="Handlers de pagamento utilizáveis neste checkout (obrigatório em checkouts)."
    )
