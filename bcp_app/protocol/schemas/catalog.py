"""Catalog search / lookup / get_product objects (BCP §16)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field

from bcp_app.protocol.schemas.common import Amount, Description, Message, RequestModel, ResponseModel
from bcp_app.protocol.schemas.envelope import UcpEnvelope
from bcp_app.protocol.schemas.policies import PolicyOut

LOOKUP_MAX_IDS = 50
# What the catalog accepts (`shop.catalog.selectors.MAX_PRICE_CENTS`, `bcp_app.service.catalog` cursors "p<page>");
# repeated here because schemas import no models. tests/bcp_app/test_schema_limits.py checks they agree.
MAX_PRICE_CENTS = 10**12
CURSOR_PATTERN = "^p0*[1-9][0-9]*$"


PriceCents = Annotated[int, Field(ge=0, le=MAX_PRICE_CENTS)]  # the catalog's own bound (shop.catalog.selectors)


class PriceFilterIn(RequestModel):
    min: PriceCents | None = Field(default=None, description="Preço mínimo (centavos); não maior que `max`.")
    max: PriceCents | None = Field(default=None, description="Preço máximo (centavos).")


class SearchFiltersIn(RequestModel):
    categories: Annotated[list[Annotated[str, Field(max_length=140)]], Field(max_length=20)] = Field(
        default_factory=list, description="Slugs de categoria."
    )
    price: PriceFilterIn | None = Field(default=None, description="Faixa de preço em centavos.")


class PaginationIn(RequestModel):
    cursor: Annotated[str, Field(max_length=100, json_schema_extra={"pattern": CURSOR_PATTERN})] | None = Field(
        default=None, description="Cursor da página, como veio em `pagination.cursor`."
    )
    limit: Annotated[int, Field(ge=1, le=100)] = Field(default=10, description="Itens por página (padrão 10).")


def _present(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema branch: member `name` is present and matches `schema` (described: MCP lists these)."""
    return {"required": [name], "properties": {name: schema}}


# BCP-CAT-01: a search names text (not only blanks) or a filter that narrows (a category or a price bound).
SEARCH_NEEDS_QUERY_OR_FILTERS: dict[str, Any] = {
    "anyOf": [
        _present("query", {"type": "string", "pattern": "\\S", "description": "Texto da busca (não só espaços)."}),
        _present(
            "filters",
            {
                "type": "object",
                "description": "Filtros que restringem a busca: uma categoria ou uma faixa de preço.",
                "anyOf": [
                    _present("categories", {"type": "array", "minItems": 1, "description": "Ao menos uma categoria."}),
                    _present(
                        "price",
                        {
                            "type": "object",
                            "description": "Faixa de preço com ao menos um limite.",
                            "anyOf": [
                                _present("min", {"type": "integer", "description": "Preço mínimo."}),
                                _present("max", {"type": "integer", "description": "Preço máximo."}),
                            ],
                        },
                    ),
                ],
            },
        ),
    ]
}


class SearchRequest(RequestModel):
    model_config = ConfigDict(json_schema_extra=SEARCH_NEEDS_QUERY_OR_FILTERS)

    query: Annotated[str, Field(max_length=200)] | None = Field(default=None, description="Texto de busca.")
    filters: SearchFiltersIn | None = Field(default=None, description="Filtros; query ou filtros obrigatórios.")
    context: dict[str, Any] | None = Field(default=None, description="Dicas de contexto (ignoradas se desconhecidas).")
    signals: dict[str, Any] | None = Field(default=None, description="Sinais da plataforma.")
    attribution: dict[str, Any] | None = Field(default=None, description="Atribuição.")
    pagination: PaginationIn | None = Field(default=None, description="Paginação por cursor.")


class LookupRequest(RequestModel):
    ids: Annotated[list[Annotated[str, Field(min_length=1, max_length=64)]], Field(min_length=1)] = Field(
        description=f"Ids de produto (`prod_…`) ou de variante (SKU); até {LOOKUP_MAX_IDS}."
    )
    filters: SearchFiltersIn | None = Field(default=None, description="Filtros.")
    context: dict[str, Any] | None = Field(default=None, description="Dicas de contexto.")


class SelectedOptionIn(RequestModel):
    name: Annotated[str, Field(max_length=60)] = Field(description="Nome da opção, ex. `tamanho`.")
    label: Annotated[str, Field(max_length=60)] = Field(description="Valor escolhido, ex. `M`.")


class GetProductRequest(RequestModel):
    id: Annotated[str, Field(min_length=1, max_length=64)] = Field(description="Id do produto ou SKU da variante.")
    selected: Annotated[list[SelectedOptionIn], Field(max_length=10)] = Field(
        default_factory=list, description="Opções escolhidas."
    )
    preferences: Annotated[list[Annotated[str, Field(max_length=60)]], Field(max_length=10)] = Field(
        default_factory=list, description="Nomes de opção em ordem de preferência."
    )
    context: dict[str, Any] | None = Field(default=None, description="Dicas de contexto.")


class Price(ResponseModel):
    amount: Amount = Field(description="Valor em centavos.")
    currency: str = Field(description="BRL.")


class PriceRange(ResponseModel):
    min: Price = Field(description="Menor preço.")
    max: Price = Field(description="Maior preço.")


class Availability(ResponseModel):
    available: bool = Field(description="Se pode ser comprado agora.")
    status: str | None = Field(default=None, description="in_stock, backorder ou out_of_stock.")


class Media(ResponseModel):
    type: str = Field(description="`image`.")
    url: str = Field(description="URL absoluta.")
    alt_text: str | None = Field(default=None, description="Texto alternativo.")


class SelectedOption(ResponseModel):
    name: str = Field(description="Nome da opção.")
    label: str = Field(description="Valor.")


class InputCorrelation(ResponseModel):
    id: str = Field(description="Id pedido no lookup.")
    match: str = Field(description="`exact` (variante pedida) ou `featured` (produto pedido).")


class Variant(ResponseModel):
    id: str = Field(description="Id da variante = SKU = `item.id` do checkout.")
    sku: str | None = Field(default=None, description="SKU.")
    title: str = Field(description="Título.")
    description: Description = Field(description="Descrição.")
    price: Price = Field(description="Preço.")
    list_price: Price | None = Field(default=None, description="Preço 'de'.")
    availability: Availability | None = Field(default=None, description="Disponibilidade.")
    options: list[SelectedOption] | None = Field(default=None, description="Valores de opção.")
    media: list[Media] | None = Field(default=None, description="Imagens.")
    inputs: list[InputCorrelation] | None = Field(default=None, description="Só no lookup: quais ids casaram.")


class OptionValue(ResponseModel):
    label: str = Field(description="Valor.")
    available: bool | None = Field(default=None, description="Há variante disponível com este valor.")
    exists: bool | None = Field(default=None, description="Há variante com este valor e a seleção atual.")


class ProductOption(ResponseModel):
    name: str = Field(description="Nome da opção.")
    values: list[OptionValue] = Field(description="Valores.")


class Product(ResponseModel):
    id: str = Field(description="Id do produto (`prod_…`).")
    handle: str | None = Field(default=None, description="Slug.")
    url: str | None = Field(default=None, description="Página do produto.")
    title: str = Field(description="Título.")
    description: Description = Field(description="Descrição.")
    price_range: PriceRange = Field(description="Faixa de preço das variantes.")
    media: list[Media] | None = Field(default=None, description="Imagens.")
    options: list[ProductOption] | None = Field(default=None, description="Opções.")
    variants: list[Variant] = Field(description="Variantes.")
    selected: list[SelectedOption] | None = Field(default=None, description="Só em get_product: seleção atual.")


class Pagination(ResponseModel):
    has_next_page: bool = Field(description="Se há próxima página.")
    cursor: str | None = Field(default=None, description="Cursor da próxima página.")
    total_count: int | None = Field(default=None, description="Total de produtos.")


class SearchResponse(ResponseModel):
    ucp: UcpEnvelope = Field(description="Versão e capacidade catalog.search.")
    products: list[Product] = Field(description="Produtos; `[]` quando nada casa.")
    pagination: Pagination = Field(description="Paginação.")
    messages: list[Message] | None = Field(default=None, description="Mensagens.")
    policies: list[PolicyOut] | None = Field(default=None, description="Políticas da loja (UCP #572).")


class LookupResponse(ResponseModel):
    ucp: UcpEnvelope = Field(description="Versão e capacidade catalog.lookup.")
    products: list[Product] = Field(description="Produtos encontrados, cada um uma vez.")
    messages: list[Message] | None = Field(default=None, description="Mensagens (ids desconhecidos).")
    policies: list[PolicyOut] | None = Field(default=None, description="Políticas da loja (UCP #572).")


class ProductResponse(ResponseModel):
    ucp: UcpEnvelope = Field(description="Versão e capacidade catalog.lookup.")
    product: Product = Field(description="O produto, variante pedida primeiro.")
    messages: list[Message] | None = Field(default=None, description="Mensagens.")
    policies: list[PolicyOut] | None = Field(default=None, description="Políticas da loja (UCP #572).")
