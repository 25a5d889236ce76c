"""Pydantic contracts of the typed catalogue tools (seed 002), for agents that do not speak BCP.

One source of truth per tool: the input model (strict, unknown keys rejected naming the key,
cross-field rules in model validators) and the output model, a discriminated union on `status`
("ok" with the data, or "error" with the seed's error envelope). The MCP transport publishes their
JSON Schemas in `tools/list` and validates every output against them before it leaves the server.

Tool names and these shapes are a release commitment: a breaking change (new required field,
renamed field) ships as a new tool name (`catalogue.list_v2`) next to the old one, which stays
for at least 90 days marked deprecated in its description.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from bcp_app.protocol.field_errors import error_loc, error_text, field_path
from bcp_app.protocol.schemas.text import NoControlCharacters

AVAILABILITY_URLS = ("https://schema.org/InStock", "https://schema.org/OutOfStock", "https://schema.org/PreOrder")
Availability = Literal["https://schema.org/InStock", "https://schema.org/OutOfStock", "https://schema.org/PreOrder"]
ReaisPrice = Annotated[
    float,
    Field(
        ge=0,
        description="Preço em reais como número JSON (54.9 = R$ 54,90), como no schema.org e no contrato da "
        "ferramenta; os objetos BCP usam centavos inteiros.",
    ),
]
Sku = Annotated[StrictStr, Field(min_length=1, max_length=64, description="SKU da variante (o `item.id` do BCP).")]
Quantity = Annotated[StrictInt, Field(ge=1, le=999, description="Quantidade de unidades, de 1 a 999.")]
ErrorCode = Literal["out_of_stock", "not_found", "forbidden", "rate_limited", "internal"]


class CrossFieldError(ValueError):
    """A rule over several fields (seed 002 `.refine()`); `fields` names them so the error can point at them."""

    def __init__(self, message: str, *fields: str) -> None:
        super().__init__(message)
        self.fields = fields


class StrictInput(NoControlCharacters):
    # Unknown keys fail at the protocol boundary instead of being silently ignored (seed 002 `.strict()`).
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        # Optional means "omit the key"; the published schema has no null, so null is refused too.
        if isinstance(data, dict):
            for key, value in data.items():
                if value is None and key in cls.model_fields:
                    raise CrossFieldError(f"{key}: null não é permitido; omita o campo", key)
        return data


class Output(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# --- inputs -------------------------------------------------------------------------------------------


class CatalogueListInput(StrictInput):
    """Arguments of `catalogue.list`."""

    query: Annotated[StrictStr, Field(min_length=2, max_length=200)] | None = Field(
        default=None, description="Pesquisa de texto livre no nome do produto, na marca e no SKU (2 a 200 caracteres)."
    )
    category: Annotated[StrictStr, Field(pattern=r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$", max_length=140)] | None = Field(
        default=None, description="Slug da categoria tal como aparece na URL da loja (inclui as subcategorias)."
    )
    in_stock: StrictBool | None = Field(default=None, description="Limitar a produtos atualmente em estoque.")
    price_min: Annotated[StrictInt, Field(ge=0, le=10**12)] | None = Field(
        default=None, description="Limite inferior do preço, inclusive, em centavos de real (R$ 42,90 → 4290)."
    )
    price_max: Annotated[StrictInt, Field(ge=0, le=10**12)] | None = Field(
        default=None, description="Limite superior do preço, inclusive, em centavos de real (R$ 42,90 → 4290)."
    )
    page: Annotated[StrictInt, Field(ge=1, le=100)] = Field(default=1, description="Número da página, a partir de 1.")
    per_page: Annotated[StrictInt, Field(ge=1, le=50)] = Field(
        default=12, description="Resultados por página, de 1 a 50 (padrão 12)."
    )

    @model_validator(mode="after")
    def _price_range(self) -> CatalogueListInput:
        if self.price_min is not None and self.price_max is not None and self.price_min > self.price_max:
            raise CrossFieldError("price_min tem de ser menor ou igual a price_max", "price_min", "price_max")
        return self


class ProductDetailInput(StrictInput):
    """Arguments of `product.detail`: exactly one identifier."""

    product_id: Annotated[StrictStr, Field(min_length=1, max_length=40)] | None = Field(
        default=None, description="Id público do produto (`prod_…`). Informe exatamente um de product_id, slug, sku."
    )
    slug: Annotated[StrictStr, Field(min_length=1, max_length=220)] | None = Field(
        default=None, description="Slug do produto na URL da loja. Informe exatamente um de product_id, slug, sku."
    )
    sku: Sku | None = Field(
        default=None, description="SKU de uma variante do produto. Informe exatamente um de product_id, slug, sku."
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> ProductDetailInput:
        given = [name for name in ("product_id", "slug", "sku") if getattr(self, name) is not None]
        if len(given) != 1:
            raise CrossFieldError("informe exatamente um de product_id, slug ou sku", "product_id", "slug", "sku")
        return self


class ItemInput(StrictInput):
    sku: Sku
    quantity: Quantity


class InventoryCheckInput(StrictInput):
    """Arguments of `inventory.check`."""

    items: list[ItemInput] = Field(
        min_length=1, max_length=50, description="Itens a verificar (1 a 50), cada um com sku e quantidade."
    )


class CustomerInput(StrictInput):
    email: Annotated[StrictStr, Field(max_length=254, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")] = Field(
        description="E-mail do comprador."
    )
    name: Annotated[StrictStr, Field(min_length=1, max_length=200)] = Field(
        description="Nome completo do comprador (o primeiro nome e o sobrenome são separados no primeiro espaço)."
    )


class OrderIntentInput(StrictInput):
    """Arguments of `order.intent`: creates a draft order (a BCP checkout) to be finished by the buyer."""

    customer: CustomerInput = Field(description="Quem compra.")
    items: list[ItemInput] = Field(min_length=1, max_length=50, description="Itens do pedido (1 a 50).")
    shipping_method: Annotated[StrictStr, Field(min_length=1, max_length=40)] | None = Field(
        default=None,
        description='Preferência de entrega: "shipping" (envio) ou "pickup" (retirada). Endereço e opção de '
        "frete são escolhidos pelo comprador no continue_url.",
    )
    notes: Annotated[StrictStr, Field(max_length=1000)] | None = Field(
        default=None,
        description="Observações do comprador (até 1000 caracteres), levadas como context.intent; não alteram preços.",
    )
    idempotency_key: StrictStr | None = Field(
        default=None,
        description="UUID opcional. Chamadas repetidas com a mesma chave devolvem o rascunho de pedido original "
        "durante 24 horas.",
        json_schema_extra={"format": "uuid"},
    )

    @field_validator("idempotency_key")
    @classmethod
    def _uuid(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return str(uuid.UUID(value))
        except ValueError as exc:
            raise ValueError("idempotency_key deve ser um UUID") from exc

    @field_validator("shipping_method")
    @classmethod
    def _method(cls, value: str | None) -> str | None:
        if value is not None and value not in ("shipping", "pickup"):
            raise ValueError('shipping_method deve ser "shipping" ou "pickup"')
        return value


class OrderStatusInput(StrictInput):
    """Arguments of `order.status`."""

    id: Annotated[StrictStr, Field(min_length=1, max_length=64)] = Field(
        description="Id do rascunho devolvido por order.intent (`draft_order_id`) ou id de um pedido (`order_…`)."
    )


# --- outputs: schema.org --------------------------------------------------------------------------------


class Brand(Output):
    type_: Literal["Brand"] = Field(alias="@type", description='Tipo schema.org, sempre "Brand".')
    name: str = Field(description="Nome da marca.")


class Offer(Output):
    type_: Literal["Offer"] = Field(alias="@type", description='Tipo schema.org, sempre "Offer".')
    sku: str = Field(description="SKU da variante ofertada (use-o como item em order.intent).")
    price: ReaisPrice
    priceCurrency: Literal["BRL"] = Field(description='Moeda ISO 4217, sempre "BRL".')
    availability: Availability = Field(description="Disponibilidade como URL schema.org (InStock/OutOfStock/PreOrder).")
    url: str = Field(pattern=r"^https?://", description="URL absoluta da oferta na loja.")


class Product(Output):
    context: Literal["https://schema.org"] = Field(alias="@context", description="Vocabulário, sempre schema.org.")
    type_: Literal["Product"] = Field(alias="@type", description='Tipo schema.org, sempre "Product".')
    productID: str = Field(description="Id público do produto (`prod_…`).")
    name: str = Field(description="Nome do produto.")
    description: str = Field(description="Descrição do produto em texto simples.")
    url: str = Field(pattern=r"^https?://", description="URL absoluta da página do produto.")
    sku: str | None = Field(default=None, description="SKU da primeira variante.")
    image: str | list[str] | None = Field(default=None, description="URL absoluta da imagem (ou lista de URLs).")
    brand: Brand | None = Field(default=None, description="Marca, quando conhecida.")
    category: str | None = Field(default=None, description="Nome da categoria.")
    offers: Offer | None = Field(
        default=None,
        description="Uma Offer por produto: a variante pedida (product.detail por sku) ou a variante disponível "
        "de menor preço.",
    )


# --- outputs: envelopes ---------------------------------------------------------------------------------


class ToolError(Output):
    code: ErrorCode = Field(description="Código do erro de domínio.")
    message: str = Field(description="Explicação legível do erro, em português.")
    retry_after_seconds: int | None = Field(
        default=None, ge=0, description="Segundos a esperar antes de tentar de novo (rate_limited)."
    )
    fields: dict[str, Any] | None = Field(
        default=None, description="Campos de entrada envolvidos no erro, com o problema de cada um."
    )


class ErrorResult(Output):
    status: Literal["error"] = Field(description='"error": leia `error` e não espere outros campos.')
    error: ToolError = Field(description="O erro de domínio.")


class CatalogueListOk(Output):
    status: Literal["ok"] = Field(description='"ok": os demais campos estão presentes.')
    results: list[Product] = Field(description="Produtos da página, no vocabulário schema.org Product.")
    total: int = Field(ge=0, description="Total de produtos que satisfazem os filtros.")
    page: int = Field(ge=1, description="Página devolvida.")
    per_page: int = Field(ge=1, description="Resultados por página.")


class ProductDetailOk(Output):
    status: Literal["ok"] = Field(description='"ok": `product` está presente.')
    product: Product = Field(description="O produto no vocabulário schema.org Product.")


class InventoryLine(Output):
    sku: str = Field(description="SKU verificado.")
    quantity: int = Field(ge=1, description="Quantidade pedida.")
    availability: Availability = Field(description="Disponibilidade atual da variante (URL schema.org).")
    can_fulfill: bool = Field(description="true quando a quantidade pedida pode ser vendida agora.")


class InventoryCheckOk(Output):
    status: Literal["ok"] = Field(description='"ok": `items` está presente.')
    items: list[InventoryLine] = Field(description="Um resultado por item pedido, na mesma ordem.")


class OrderIntentOk(Output):
    status: Literal["ok"] = Field(description='"ok": o rascunho foi criado (ou devolvido pela idempotency_key).')
    draft_order_id: str = Field(description="Id do rascunho (um checkout BCP, `checkout_…`).")
    checkout_status: str = Field(description="Situação do checkout BCP (por exemplo incomplete).")
    total: int = Field(ge=0, description="Total atual em centavos de real (sem frete até o comprador escolher).")
    currency: Literal["BRL"] = Field(description='Moeda ISO 4217, sempre "BRL".')
    continue_url: str | None = Field(default=None, description="Onde o comprador conclui a compra (endereço e Pix).")
    expires_at: str | None = Field(default=None, description="Quando o rascunho expira (RFC 3339, UTC).")
    # Seed 002's orderIntentOutput member (`z.string().datetime().optional()`), kept for its wire contract; BCP §16 has
    # no delivery member. The shop's estimate (orders.arrival: the posting time + the carrier's days of the chosen
    # option to the buyer's CEP) needs an address and an option, which the buyer gives at continue_url: a draft has
    # neither, so the member is omitted rather than guessed.
    estimated_delivery: str | None = Field(
        default=None,
        description="Previsão de entrega (RFC 3339). Omitida no rascunho: ela depende do endereço e da opção de frete, "
        "escolhidos pelo comprador no continue_url (as opções de entrega do checkout dizem o prazo de cada uma).",
    )


class OrderStatusOk(Output):
    status: Literal["ok"] = Field(description='"ok": os demais campos estão presentes.')
    id: str = Field(description="O id consultado.")
    kind: Literal["draft", "order"] = Field(description='"draft" (checkout ainda não pago) ou "order" (pedido).')
    state: str = Field(description="Situação: a do checkout BCP para rascunhos, a do pedido para pedidos.")
    total: int = Field(ge=0, description="Total em centavos de real.")
    currency: Literal["BRL"] = Field(description='Moeda ISO 4217, sempre "BRL".')
    order_id: str | None = Field(default=None, description="Id do pedido (`order_…`) quando o rascunho virou pedido.")
    permalink_url: str | None = Field(default=None, description="Página oficial do pedido na loja.")
    continue_url: str | None = Field(default=None, description="Onde o comprador continua um rascunho em aberto.")


def result_union(ok: type[Output]) -> Any:
    """`ok | error` discriminated on `status` (seed 002: the agent must check `status` first)."""
    return Annotated[ok | ErrorResult, Field(discriminator="status")]


def error_result(
    code: ErrorCode, message: str, *, fields: dict[str, Any] | None = None, retry_after_seconds: int | None = None
) -> ErrorResult:
    return ErrorResult(
        status="error",
        error=ToolError(code=code, message=message, fields=fields, retry_after_seconds=retry_after_seconds),
    )


# --- JSON Schema and validation errors --------------------------------------------------------------------


class ToolJsonSchema(GenerateJsonSchema):
    """Optional members are omitted, never null, so the schema shows only the real type; no titles."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        generated = super().default_schema(schema)
        if generated.get("default", ...) is None:
            generated.pop("default")
        return generated

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(schema_generator=ToolJsonSchema, mode="validation")


def output_schema(adapter: TypeAdapter[Any]) -> dict[str, Any]:
    schema = adapter.json_schema(schema_generator=ToolJsonSchema, mode="serialization")
    # Handshake-era MCP requires an object root; the union branches are objects anyway.
    return {"type": "object", **schema}


def describe_validation_error(exc: ValidationError) -> tuple[str, dict[str, str]]:
    """("campo: problema; …", {campo: problema}) naming every offending key, e.g. a misspelled `categria`, by its
    JSONPath in the tool's arguments (`$.categria`, `$.items[0].quantity`): the one form of every other error."""
    problems: dict[str, str] = {}
    lines: list[str] = []
    for error in exc.errors(include_url=False):
        cause = (error.get("ctx") or {}).get("error")
        # Else the texts every BCP transport uses: Portuguese, not pydantic's English.
        message = str(cause).split(": ", 1)[-1] if isinstance(cause, CrossFieldError) else error_text(error)
        named = getattr(cause, "fields", ())
        fields = tuple(field_path((name,)) for name in named) if named else (field_path(error_loc(error)),)
        for field in fields:
            problems.setdefault(field, message)
        lines.append(f"{', '.join(fields)}: {message}")
    return "; ".join(lines), problems


@dataclass(frozen=True)
class Caller:
    """Who calls a typed tool: the authenticated platform's public id (None when anonymous) and language."""

    platform_id: str | None = None
    language: str = "pt-br"  # "pt-br" | "en"
