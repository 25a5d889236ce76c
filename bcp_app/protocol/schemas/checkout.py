"""Checkout requests and response (BCP §4)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field, model_validator

from bcp_app.protocol.schemas.common import (
    MAX_SAFE,
    Amount,
    Link,
    Message,
    RequestModel,
    ResponseModel,
    ShortText,
    Total,
)
from bcp_app.protocol.schemas.consent import ConsentIn, ConsentPurposeOut
from bcp_app.protocol.schemas.discount import DiscountsIn, DiscountsOut
from bcp_app.protocol.schemas.envelope import UcpEnvelope
from bcp_app.protocol.schemas.fulfillment import FulfillmentIn, FulfillmentOut
from bcp_app.protocol.schemas.payment import PaymentIn, PaymentOut
from bcp_app.protocol.schemas.policies import PolicyOut

Signals = Annotated[dict[str, Annotated[str, Field(max_length=1000)]], Field(max_length=50)]


class ItemRef(RequestModel):
    id: Annotated[str, Field(min_length=1, max_length=64)] = Field(description="SKU da variante (item.id).")


class LineItemIn(RequestModel):
    id: Annotated[str, Field(min_length=1, max_length=100)] | None = Field(
        default=None, description="Id da linha (`li_…`) ao atualizar; ignorado na criação."
    )
    item: ItemRef = Field(description="O item: só `id` é lido; título e preço vêm da loja.")
    quantity: Annotated[int, Field(ge=1, le=MAX_SAFE)] = Field(description="Quantidade (inteiro ≥ 1).")


class BuyerIn(RequestModel):
    first_name: ShortText = Field(default="", description="Nome.")
    last_name: ShortText = Field(default="", description="Sobrenome.")
    email: Annotated[str, Field(max_length=254)] = Field(default="", description="E-mail.")
    phone_number: Annotated[str, Field(max_length=20)] = Field(default="", description="Telefone E.164.")
    tax_id: Annotated[str, Field(max_length=20)] = Field(default="", description="CPF ou CNPJ (extensão BCP).")
    consent: ConsentIn | None = Field(default=None, description="Consentimento LGPD (extensão buyer_consent).")


class ContextIn(RequestModel):
    address_country: Annotated[str, Field(max_length=2)] = Field(default="", description="País (dica).")
    address_region: Annotated[str, Field(max_length=40)] = Field(default="", description="UF (dica).")
    postal_code: Annotated[str, Field(max_length=10)] = Field(default="", description="CEP (dica).")
    language: Annotated[str, Field(max_length=35)] = Field(default="", description="Idioma preferido (BCP 47).")
    intent: Annotated[str, Field(max_length=1000)] = Field(default="", description="Intenção do comprador (dica).")
    currency: Annotated[str, Field(max_length=3)] = Field(default="", description="Moeda preferida (dica).")
    location: Annotated[str, Field(max_length=100)] = Field(default="", description="Local preferido (dica).")
    eligibility: Annotated[list[Any], Field(max_length=20)] = Field(
        default_factory=list, description="Alegações de elegibilidade; desconhecidas são ignoradas."
    )
    payment: Annotated[list[Any], Field(max_length=20)] = Field(
        default_factory=list, description="Preferência de handlers; desconhecidos são ignorados."
    )


class CheckoutWrite(RequestModel):
    """The writable state shared by create and update (BCP §4.1)."""

    line_items: Annotated[list[LineItemIn], Field(min_length=1, max_length=100)] = Field(
        description="Itens do checkout (substituição completa na atualização)."
    )
    buyer: BuyerIn | None = Field(default=None, description="Dados do comprador.")
    context: ContextIn | None = Field(default=None, description="Dicas de contexto.")
    signals: Signals | None = Field(default=None, description="Fatos observados pela plataforma.")
    attribution: Annotated[dict[str, Any], Field(max_length=50)] | None = Field(
        default=None, description="Atribuição de campanha; não altera a resposta."
    )
    payment: PaymentIn | None = Field(default=None, description="Instrumento escolhido (ex. Pix).")
    fulfillment: FulfillmentIn | None = Field(default=None, description="Entrega (extensão fulfillment).")
    discounts: DiscountsIn | None = Field(default=None, description="Cupons (extensão discount).")


class CheckoutCreateRequest(CheckoutWrite):
    """`POST /checkout-sessions` body / MCP `create_checkout.checkout`."""

    # `line_items` or a `cart_id` to take them from (`_lines_or_cart`), said in the schema too.
    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"required": ["line_items"]},
                {
                    "required": ["cart_id"],
                    "properties": {"cart_id": {"type": "string", "description": "Carrinho a converter (não nulo)."}},
                },
            ]
        }
    )

    line_items: Annotated[list[LineItemIn], Field(min_length=1, max_length=100)] = Field(
        default_factory=list, description="Itens do checkout (pelo menos um; com `cart_id`, os do carrinho)."
    )
    cart_id: Annotated[str, Field(min_length=1, max_length=60)] | None = Field(
        default=None, description="Carrinho a converter (capacidade cart): seus itens, comprador e contexto valem."
    )

    @model_validator(mode="before")
    @classmethod
    def _lines_or_cart(cls, data: Any) -> Any:
        """`line_items` may be empty or absent only with `cart_id` (the cart's lines are used instead)."""
        if isinstance(data, dict):
            if data.get("cart_id") is not None and data.get("line_items") in ([], None):
                return {key: value for key, value in data.items() if key != "line_items"}
            if "line_items" not in data:
                return {**data, "line_items": []}  # reported as too short at `line_items`
        return data


class CheckoutUpdateRequest(CheckoutWrite):
    """`PUT /checkout-sessions/{id}` body / MCP `update_checkout.checkout`: full replacement."""


class CheckoutCompleteRequest(RequestModel):
    """`POST /checkout-sessions/{id}/complete` body: exactly one instrument, optional signals."""

    payment: PaymentIn = Field(description="Pagamento com exatamente um instrumento.")
    signals: Signals | None = Field(default=None, description="Fatos observados pela plataforma.")
    ap2: Annotated[dict[str, Any], Field(max_length=10)] | None = Field(
        default=None, description="Mandato AP2 (`checkout_mandate`) quando a extensão está ativa."
    )


class CheckoutCancelRequest(RequestModel):
    """`POST /checkout-sessions/{id}/cancel` body: `{}`."""


class ItemOut(ResponseModel):
    id: str = Field(description="SKU da variante.")
    title: str = Field(description="Título do produto.")
    price: Amount = Field(description="Preço unitário em centavos.")
    image_url: str | None = Field(default=None, description="Imagem do produto.")


class LineItemOut(ResponseModel):
    id: str = Field(description="Id da linha (`li_…`).")
    item: ItemOut = Field(description="O item.")
    quantity: int = Field(ge=1, description="Quantidade.")
    totals: list[Total] = Field(description="Totais da linha (preço × quantidade).")
    parent_id: str | None = Field(default=None, description="Linha pai.")


class OrderConfirmation(ResponseModel):
    id: str = Field(description="Id do pedido (`order_…`).")
    permalink_url: str = Field(description="Página do pedido no site da loja.")
    label: str | None = Field(default=None, description="Rótulo humano (número do pedido).")


class BuyerOut(ResponseModel):
    first_name: str | None = Field(default=None, description="Nome.")
    last_name: str | None = Field(default=None, description="Sobrenome.")
    email: str | None = Field(default=None, description="E-mail.")
    phone_number: str | None = Field(default=None, description="Telefone E.164.")
    tax_id: str | None = Field(default=None, description="CPF ou CNPJ, só dígitos (extensão BCP).")
    consent: dict[str, ConsentPurposeOut] | None = Field(
        default=None,
        description="Extensão buyer_consent: cada finalidade oferecida (`br.dev.bcp.consent.…`), "
        "decidida pelo comprador ou o padrão da loja (sem consentimento).",
    )


class ContextPaymentOut(ResponseModel):
    handler: str = Field(description="Nome do handler no perfil da loja (`ucp.payment_handlers`).")


class ContextOut(ResponseModel):
    address_country: str | None = Field(default=None, description="País (dica).")
    address_region: str | None = Field(default=None, description="UF (dica).")
    postal_code: str | None = Field(default=None, description="CEP (dica).")
    language: str | None = Field(default=None, description="Idioma preferido (BCP 47).")
    intent: str | None = Field(default=None, description="Intenção do comprador (dica).")
    payment: list[ContextPaymentOut] | None = Field(
        default=None,
        description="Handlers preferidos pelo comprador, na ordem, os que a loja reconhece (BCP-PAY-08).",
    )


class Ap2Out(ResponseModel):
    """Extension br.dev.bcp.shopping.ap2_mandate (shopping/ap2_mandate.json), while AP2 is negotiated."""

    merchant_authorization: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$",
        description="JWS destacado (ES256, `kid`) sobre o JCS do checkout sem `ap2` (BCP-PAY-09).",
    )
    # No pattern: the shared schema's `(~[A-Za-z0-9_-]+)*` leaves out the dots of the trailing KB-JWT, so no
    # SD-JWT+kb (RFC 9901 §4: `<jwt>~<disclosures>~<kb-jwt>`) matches it; the mandate is echoed as verified.
    checkout_mandate: str | None = Field(
        default=None, description="SD-JWT+kb verificado na conclusão, guardado com o pedido (PIX.md §7.3)."
    )


class CheckoutResponse(ResponseModel):
    ucp: UcpEnvelope = Field(description="Versão, capacidades ativas e handlers de pagamento.")
    id: str = Field(description="Id do checkout.")
    line_items: list[LineItemOut] = Field(description="Linhas.")
    status: str = Field(
        description="incomplete, requires_escalation, ready_for_complete, complete_in_progress, completed ou canceled."
    )
    currency: str = Field(description="Sempre BRL.")
    totals: list[Total] = Field(description="Totais (BCP §6).")
    links: list[Link] = Field(description="Termos de uso, privacidade e outras políticas.")
    buyer: BuyerOut | None = Field(default=None, description="Comprador.")
    context: ContextOut | None = Field(default=None, description="Contexto ecoado.")
    messages: list[Message] | None = Field(default=None, description="Erros, avisos e informações.")
    expires_at: str | None = Field(default=None, description="Expiração (RFC 3339); em checkouts não terminais.")
    continue_url: str | None = Field(default=None, description="URL de continuação; em checkouts não terminais.")
    payment: PaymentOut | None = Field(default=None, description="Instrumento escolhido e cobrança Pix.")
    fulfillment: FulfillmentOut | None = Field(default=None, description="Entrega (se a extensão está ativa).")
    discounts: DiscountsOut | None = Field(default=None, description="Descontos (se a extensão está ativa).")
    order: OrderConfirmation | None = Field(default=None, description="Pedido criado (somente `completed`).")
    # Last, in the order the wire always had them (they were extras, dumped after the declared members).
    policies: list[PolicyOut] = Field(description="Termos, privacidade, trocas e entrega (UCP #572).")
    ap2: Ap2Out | None = Field(default=None, description="Extensão ap2_mandate: assinatura da loja e mandato.")
