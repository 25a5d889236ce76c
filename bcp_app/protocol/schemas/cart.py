"""Cart capability objects (`br.dev.bcp.shopping.cart`, UCP cart): requests and the cart response."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from bcp_app.protocol.schemas.checkout import BuyerIn, BuyerOut, ContextIn, ContextOut, LineItemIn, LineItemOut, Signals
from bcp_app.protocol.schemas.common import Link, Message, RequestModel, ResponseModel, SignedAmount, TotalLine
from bcp_app.protocol.schemas.discount import DiscountsIn, DiscountsOut
from bcp_app.protocol.schemas.envelope import UcpEnvelope
from bcp_app.protocol.schemas.policies import PolicyOut


class CartWrite(RequestModel):
    """The writable state of a cart (create and full-replacement update)."""

    line_items: Annotated[list[LineItemIn], Field(min_length=1, max_length=100)] = Field(
        description="Itens do carrinho (substituição completa na atualização; `id` da linha ao atualizar)."
    )
    buyer: BuyerIn | None = Field(default=None, description="Comprador, para estimativas personalizadas.")
    context: ContextIn | None = Field(default=None, description="Dicas de contexto (CEP, UF, idioma).")
    signals: Signals | None = Field(default=None, description="Fatos observados pela plataforma.")
    attribution: Annotated[dict[str, Any], Field(max_length=50)] | None = Field(
        default=None, description="Atribuição de campanha; não altera a resposta."
    )
    discounts: DiscountsIn | None = Field(default=None, description="Cupons (extensão discount).")


class CartCreateRequest(CartWrite):
    """`POST /carts` body / MCP `create_cart.cart`."""


class CartUpdateRequest(CartWrite):
    """`PUT /carts/{id}` body / MCP `update_cart.cart`: full replacement."""


class CartTotal(ResponseModel):
    """A cart total. Same members as `Total`, but `display_text` precedes `amount`: the order carts have always
    been sent in (checkouts send `amount` first); kept so the cart wire stays byte for byte."""

    type: str = Field(description="subtotal, items_discount, discount, fee ou total (BCP §6).")
    display_text: str | None = Field(default=None, description="Texto exibido junto ao valor.")
    amount: SignedAmount = Field(description="Valor em centavos; descontos negativos.")
    lines: list[TotalLine] | None = Field(default=None, description="Detalhamento que soma `amount`.")


class CartResponse(ResponseModel):
    ucp: UcpEnvelope = Field(description="Versão e capacidades ativas (cart e extensões).")
    id: str = Field(description="Id do carrinho (`cart_…`).")
    line_items: list[LineItemOut] = Field(description="Linhas com título e preço atuais.")
    currency: str = Field(description="Sempre BRL.")
    buyer: BuyerOut | None = Field(default=None, description="Comprador (com `consent` se a extensão está ativa).")
    context: ContextOut | None = Field(default=None, description="Contexto ecoado.")
    discounts: DiscountsOut | None = Field(default=None, description="Cupons (se a extensão está ativa).")
    totals: list[CartTotal] = Field(description="Totais estimados (sem frete até o checkout).")
    messages: list[Message] | None = Field(default=None, description="Avisos de estoque, itens indisponíveis, cupons.")
    links: list[Link] = Field(description="Termos, privacidade, trocas e entrega.")
    policies: list[PolicyOut] = Field(description="Políticas da loja.")
    continue_url: str = Field(description="Página do carrinho no site da loja (compartilhar, continuar).")
    expires_at: str = Field(description="Expiração do carrinho (RFC 3339).")
