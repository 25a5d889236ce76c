"""Typed catalogue tools (seed 002) for agents that do not speak BCP: contracts and operations.

`TYPED_TOOLS` lists them transport-neutrally (name, description, input model, result adapter,
operation); the MCP transport publishes and runs them. Names are a release commitment: a
breaking change gets a new name (`catalogue.list_v2`) and the old tool stays, marked deprecated
in its description, for at least 90 days.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, TypeAdapter

from bcp_app.service import trust
from bcp_app.service.catalogue import orders, reads
from bcp_app.service.catalogue.contracts import (
    Caller,
    CatalogueListInput,
    CatalogueListOk,
    InventoryCheckInput,
    InventoryCheckOk,
    OrderIntentInput,
    OrderIntentOk,
    OrderStatusInput,
    OrderStatusOk,
    ProductDetailInput,
    ProductDetailOk,
    result_union,
)


@dataclass(frozen=True)
class TypedTool:
    name: str
    description: str
    input_model: type[BaseModel]
    result: TypeAdapter[Any]
    operation: Callable[[Any, Caller], BaseModel]
    mutates: bool = False
    # Seed 002 versioning: a breaking change ships as a new name; the old tool stays ≥ 90 days with this
    # set, e.g. "use catalogue.list_v2; removida após 2027-03-01".
    deprecated: str = ""

    @property
    def full_description(self) -> str:
        return f"[OBSOLETA: {self.deprecated}] {self.description}" if self.deprecated else self.description


def _reads(name: str) -> Callable[[Any, Caller], BaseModel]:
    def run(args: Any, caller: Caller) -> BaseModel:
        # The agent trust tiers (bcp_app/service/trust.py): these tools browse the catalog. Their callers
        # authenticate by API key or not at all.
        refused = trust.tier_refusal(trust.REGISTERED if caller.platform_id else trust.ANONYMOUS, trust.BROWSE)
        if refused is not None:
            raise refused
        return getattr(reads, name)(args)

    return run


def _orders(name: str) -> Callable[[Any, Caller], BaseModel]:
    def run(args: Any, caller: Caller) -> BaseModel:
        return getattr(orders, name)(args, caller, language=caller.language)

    return run


_CHECK_STATUS = ' Verifique `status` antes de ler os demais campos: "ok" traz os dados, "error" traz `error`.'

TYPED_TOOLS: tuple[TypedTool, ...] = (
    TypedTool(
        name="catalogue.list",
        description="Lista produtos da loja com busca e filtros (categoria, estoque, faixa de preço em centavos), "
        "paginados; cada resultado é um schema.org Product com Offer e disponibilidade em URL schema.org."
        + _CHECK_STATUS,
        input_model=CatalogueListInput,
        result=TypeAdapter(result_union(CatalogueListOk)),
        operation=_reads("catalogue_list"),
    ),
    TypedTool(
        name="product.detail",
        description="Detalhe de um produto por product_id (`prod_…`), slug ou SKU de variante, como schema.org "
        "Product; várias variantes aparecem como AggregateOffer com uma Offer por SKU." + _CHECK_STATUS,
        input_model=ProductDetailInput,
        result=TypeAdapter(result_union(ProductDetailOk)),
        operation=_reads("product_detail"),
    ),
    TypedTool(
        name="inventory.check",
        description="Verifica se cada SKU pode ser vendido na quantidade pedida agora (disponibilidade "
        "schema.org e can_fulfill). SKUs desconhecidos dão error.code not_found." + _CHECK_STATUS,
        input_model=InventoryCheckInput,
        result=TypeAdapter(result_union(InventoryCheckOk)),
        operation=_reads("inventory_check"),
    ),
    TypedTool(
        name="order.intent",
        description="Cria um rascunho de pedido (um checkout BCP) com comprador e itens; o comprador escolhe "
        "entrega e paga com Pix no continue_url. Com idempotency_key (UUID) chamadas repetidas devolvem o "
        "rascunho original por 24 h. Sem estoque: error.code out_of_stock." + _CHECK_STATUS,
        input_model=OrderIntentInput,
        result=TypeAdapter(result_union(OrderIntentOk)),
        operation=_orders("order_intent"),
        mutates=True,
    ),
    TypedTool(
        name="order.status",
        description="Situação de um rascunho (`checkout_…`, devolvido por order.intent) ou de um pedido "
        "(`order_…`): estado, total em centavos, id e página oficial do pedido quando existir." + _CHECK_STATUS,
        input_model=OrderStatusInput,
        result=TypeAdapter(result_union(OrderStatusOk)),
        operation=_orders("order_status"),
    ),
)

__all__ = ["TYPED_TOOLS", "Caller", "TypedTool"]
