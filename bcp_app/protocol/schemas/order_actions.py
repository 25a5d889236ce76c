"""Inputs of the order_actions extension (bcp_app/jsonschemas/shopping/order_actions.json): Cancel Order and
Request Return. Unknown members are ignored, as in every BCP entity body (§1)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StrictInt, StrictStr

from bcp_app.protocol.schemas.text import NoControlCharacters

MAX_LINES = 100


class CancelOrderRequest(NoControlCharacters):
    model_config = ConfigDict(extra="ignore")
    reason: Annotated[StrictStr, Field(max_length=255)] | None = Field(
        default=None, description="Por que o comprador cancela (opcional)."
    )


class ReturnLineIn(NoControlCharacters):
    model_config = ConfigDict(extra="ignore")
    id: Annotated[StrictStr, Field(min_length=1, max_length=100)] = Field(description="Id da linha do pedido.")
    quantity: Annotated[StrictInt, Field(ge=1, le=2**31 - 1)] = Field(description="Unidades a devolver.")


class RequestReturnRequest(NoControlCharacters):
    model_config = ConfigDict(extra="ignore")
    reason_code: Literal["changed_mind", "defective", "damaged", "wrong_item", "other"] = Field(
        description="Motivo: changed_mind (desistência, CDC art. 49), defective, damaged, wrong_item ou other."
    )
    reason: Annotated[StrictStr, Field(max_length=500)] | None = Field(
        default=None, description="Palavras do comprador; obrigatório quando reason_code é other."
    )
    line_items: Annotated[list[ReturnLineIn], Field(min_length=1, max_length=MAX_LINES)] = Field(
        description="Linhas entregues e quantidades a devolver (cada linha uma vez)."
    )
