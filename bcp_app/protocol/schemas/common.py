"""Shared BCP objects: envelope, messages, totals, links, addresses, Error Response (BCP §1, §5, §6)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bcp_app.protocol.schemas.text import NoControlCharacters

MAX_SAFE = 2**53 - 1
Amount = Annotated[int, Field(ge=0, le=MAX_SAFE, description="Valor em centavos de BRL (inteiro ≥ 0).")]
SignedAmount = Annotated[int, Field(ge=-MAX_SAFE, le=MAX_SAFE, description="Valor em centavos, com sinal.")]
ShortText = Annotated[str, Field(max_length=500)]


class RequestModel(NoControlCharacters):
    """Objects a platform sends: strictly typed, unknown members ignored (BCP §1: schemas are open).

    Response-only members (prices, totals, status, ids) are simply not declared here, so they are
    dropped on input and can never reach the engine (BCP-SEC-03). Control characters are refused
    before anything else (`NoControlCharacters`).
    """

    model_config = ConfigDict(extra="ignore", strict=True)


class Produced(BaseModel):
    """A response model that produces the wire body (mixin of every BCP output model)."""

    @classmethod
    def produce(cls, body: dict[str, Any]) -> dict[str, Any]:
        """The wire body as this model produces it: the presenter's mapping validated by the model, then
        dumped with exactly the members that were set. One output set for REST, MCP (`outputSchema`) and
        A2A (data parts); a presenter bug fails here instead of reaching a platform."""
        return cls.model_validate(body).model_dump(mode="json", by_alias=True, exclude_unset=True)


class ResponseModel(Produced):
    """Objects the shop sends; extra members allowed so extensions can compose (schemas are open)."""

    model_config = ConfigDict(extra="allow")


class VersionRef(ResponseModel):
    version: str = Field(description="Versão negociada (YYYY-MM-DD).")


class Message(ResponseModel):
    type: Literal["error", "warning", "info"] = Field(description="Tipo da mensagem (BCP §5.1).")
    code: str | None = Field(default=None, description="Código da mensagem (obrigatório em error e warning).")
    severity: Literal["recoverable", "requires_buyer_input", "requires_buyer_review", "unrecoverable"] | None = Field(
        default=None, description="Gravidade; obrigatória em mensagens de erro."
    )
    path: str | None = Field(default=None, description="JSONPath RFC 9535 relativo à raiz da resposta.")
    content: str = Field(description="Texto legível (pt-BR por padrão).")
    content_type: Literal["plain", "markdown"] | None = Field(default=None, description="Formato de `content`.")
    presentation: str | None = Field(default=None, description="`notice` ou `disclosure` (somente warnings).")


class TotalLine(ResponseModel):
    display_text: str = Field(description="Rótulo da sublinha.")
    amount: SignedAmount = Field(description="Valor da sublinha em centavos.")


class Total(ResponseModel):
    type: str = Field(description="subtotal, items_discount, discount, fulfillment, tax, fee ou total (BCP §6).")
    amount: SignedAmount = Field(description="Valor em centavos; descontos negativos.")
    display_text: str | None = Field(default=None, description="Texto exibido junto ao valor.")
    lines: list[TotalLine] | None = Field(default=None, description="Detalhamento que soma `amount`.")


class Link(ResponseModel):
    type: str = Field(description="terms_of_service, privacy_policy, refund_policy, shipping_policy ou faq.")
    url: str = Field(description="URL absoluta do conteúdo.")
    title: str | None = Field(default=None, description="Texto de exibição opcional.")


class PostalAddressIn(RequestModel):
    street_address: ShortText = Field(default="", description="Logradouro e número, ex. \"Rua das Flores, 123\".")
    extended_address: ShortText = Field(default="", description="Complemento e bairro, ex. \"Apto 45 - Jardim\".")
    address_locality: ShortText = Field(default="", description="Cidade.")
    address_region: ShortText = Field(default="", description="UF, ex. \"SP\".")
    postal_code: ShortText = Field(default="", description="CEP, ex. \"01310-100\".")
    address_country: ShortText = Field(default="BR", description="País ISO 3166-1 alfa-2.")
    first_name: ShortText = Field(default="", description="Nome do destinatário.")
    last_name: ShortText = Field(default="", description="Sobrenome do destinatário.")
    phone_number: ShortText = Field(default="", description="Telefone E.164 do destinatário.")


class AddressLines(ResponseModel):
    street_address: str | None = Field(default=None, description="Logradouro e número.")
    extended_address: str | None = Field(default=None, description="Complemento e bairro.")
    address_locality: str | None = Field(default=None, description="Cidade.")
    address_region: str | None = Field(default=None, description="UF.")
    postal_code: str | None = Field(default=None, description="CEP.")
    address_country: str | None = Field(default=None, description="País ISO 3166-1 alfa-2.")


class Recipient(ResponseModel):
    first_name: str | None = Field(default=None, description="Nome do destinatário.")
    last_name: str | None = Field(default=None, description="Sobrenome do destinatário.")
    phone_number: str | None = Field(default=None, description="Telefone E.164.")


# pydantic orders members base by base from the last base listed, so the bases give the wire order.
class PostalAddress(Recipient, AddressLines):
    """The order's PostalAddress: address lines, then the recipient."""


class Description(ResponseModel):
    plain: str | None = Field(default=None, description="Texto simples.")
    markdown: str | None = Field(default=None, description="Texto em Markdown.")
    html: str | None = Field(default=None, description="Texto em HTML.")


class ErrorEnvelope(Produced):
    model_config = ConfigDict(extra="allow")
    version: str = Field(description="Versão do protocolo.")
    status: Literal["error"] = Field(description="Sempre `error`.")
    capabilities: dict[str, list[VersionRef]] | None = Field(default=None, description="Capacidades relevantes.")


class ErrorResponse(Produced):
    """BCP §5.3: returned (HTTP 200) when no resource exists to return; no other members allowed."""

    model_config = ConfigDict(extra="forbid")
    ucp: ErrorEnvelope = Field(description="Envelope com `status: error`.")
    messages: list[Message] = Field(min_length=1, description="Por que a operação não produziu um recurso.")
    continue_url: str | None = Field(default=None, description="URL para o comprador continuar no site.")


class ProtocolErrorBody(Produced):
    """REST body of a protocol error (BCP §5.4): HTTP status + `{code, content}` (MCP/A2A `error.data` is this
    body plus `retry_after`)."""

    code: str = Field(description="Código do erro de protocolo, ex. `invalid_request`, `idempotency_conflict`.")
    content: str = Field(description="Explicação legível que nomeia o campo ou cabeçalho com problema.")
    continue_url: str | None = Field(default=None, description="Para erros de descoberta/versão.")
