"""The subscription extension's bodies (`br.dev.bcp.shopping.subscription`, issue 38), for the MCP tools'
input and output schemas; the JSON Schema `bcp_app/jsonschemas/shopping/subscription.json` is the reference."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from bcp_app.protocol.schemas.common import RequestModel, ResponseModel
from bcp_app.protocol.schemas.envelope import UcpEnvelope
from bcp_app.protocol.schemas.payment import PaymentIn


class SubscriptionBuyerIn(RequestModel):
    first_name: str = Field(description="Nome.")
    last_name: str = Field(description="Sobrenome.")
    email: str = Field(description="E-mail: avisos de ciclo não pago, ciclo pulado e cancelamento.")
    tax_id: str = Field(description="CPF (11 dígitos) ou CNPJ (14) do pagador (Pix Automático ou cartão).")


class SubscriptionAddress(RequestModel):
    postal_code: str = Field(description="CEP, 8 dígitos.")
    street: str = Field(description="Rua.")
    number: str = Field(description="Número.")
    complement: str | None = Field(default=None, description="Complemento.")
    neighborhood: str = Field(description="Bairro.")
    city: str = Field(description="Cidade.")
    state: str = Field(description="UF, duas letras.")


class SubscriptionCreateRequest(RequestModel):
    """Unknown members are ignored, as in the other entity bodies (BCP §1)."""

    plan_id: str = Field(description="O plano (`plan_…`).")
    buyer: SubscriptionBuyerIn = Field(description="Quem assina e paga.")
    destination: SubscriptionAddress | None = Field(default=None, description="Entrega de cada ciclo.")
    starts_on: str | None = Field(
        default=None,
        description="Vencimento do primeiro ciclo, AAAA-MM-DD (padrão: em 3 dias; cartão: hoje).",
        json_schema_extra={"format": "date"},  # what the validator below refuses is outside the documented body
    )
    payment: PaymentIn | None = Field(
        default=None,
        description="Sem ele, Pix Automático. Cartão: um instrumento `{id, handler_id: <handler de cartão>, type: "
        '"card", credential: {type: "PAYMENT_GATEWAY", token}}` (o token do gateway, nunca o número): o cartão fica '
        "guardado no gateway e o primeiro ciclo é cobrado na hora.",
    )

    @field_validator("starts_on")
    @classmethod
    def _a_date(cls, value: str | None) -> str | None:
        # A date the operation can read, refused here with every other member at fault (BCP-ERR-05).
        if value:
            try:
                date.fromisoformat(value)
            except ValueError:
                # its Portuguese text as the message, whichever framework reports it (field_errors.error_text)
                raise PydanticCustomError("date_format", "use AAAA-MM-DD") from None
        return value


class CycleOut(ResponseModel):
    number: int = Field(description="Número do ciclo (1 = primeiro).")
    due_date: str = Field(description="Vencimento da cobrança do ciclo, AAAA-MM-DD.")
    amount: int = Field(description="Valor em centavos.")
    status: str = Field(description="scheduled, charged, retrying, paid, failed, skipped ou cancelled.")
    order_id: str | None = Field(default=None, description="O pedido do ciclo pago.")


class NextChargeOut(ResponseModel):
    cycle: int = Field(description="Número do ciclo.")
    due_date: str = Field(description="Vencimento, AAAA-MM-DD.")
    amount: int = Field(description="Valor em centavos.")
    status: str = Field(description="Situação do ciclo.")


class StoredCardOut(ResponseModel):
    brand: str = Field(description="Bandeira do cartão guardado no gateway.")
    last_digits: str = Field(description="Os 4 últimos dígitos.")


class AuthorizationOut(ResponseModel):
    method: Literal["pix_automatico", "card"] = Field(description="Meio de pagamento dos ciclos.")
    id_rec: str | None = Field(default=None, description="Pix Automático: id da recorrência no PSP (idRec).")
    status: str = Field(
        description="pending, approved ou cancelled (no app do banco; cartão: approved quando a 1ª cobrança passa)."
    )
    location: str | None = Field(default=None, description="Location do QR da recorrência, quando houver.")
    card: StoredCardOut | None = Field(default=None, description="Cartão: bandeira e final do cartão guardado.")


class SubscriptionResponse(ResponseModel):
    ucp: UcpEnvelope = Field(description="Envelope BCP com as capacidades ativas.")
    id: str = Field(description="Id da assinatura (`sub_…`).")
    status: str = Field(description="pending_authorization, active, paused ou cancelled.")
    plan: dict[str, object] = Field(description="O plano: id, item{id,title}, cycle, price, first_cycle_price, …")
    currency: str = Field(description="BRL.")
    buyer: dict[str, str] = Field(description="Nome e e-mail de quem assina.")
    destination: dict[str, str] | None = Field(default=None, description="Endereço de entrega dos ciclos.")
    authorization: AuthorizationOut = Field(description="A autorização do Pix Automático.")
    next_charge: NextChargeOut | None = Field(description="A próxima cobrança, ou null.")
    cycles: list[CycleOut] = Field(description="Todos os ciclos, do mais antigo ao mais novo.")
    permalink_url: str = Field(description="Página do assinante: pular ciclo, endereço, pausar, cancelar.")
    created_at: str = Field(description="RFC 3339.")
    cancelled_at: str | None = Field(default=None, description="RFC 3339, quando cancelada.")
