"""Discount extension objects (BCP §10)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bcp_app.protocol.schemas.common import Amount, RequestModel, ResponseModel


class DiscountsIn(RequestModel):
    codes: Annotated[list[Annotated[str, Field(max_length=64)]], Field(max_length=20)] = Field(
        default_factory=list, description="Cupons; substituem os anteriores, `[]` limpa (sem diferenciar caixa)."
    )


class Allocation(ResponseModel):
    path: str = Field(description="JSONPath do alvo, ex. `$.line_items[0]`.")
    amount: Amount = Field(description="Parte do desconto alocada ao alvo.")


class AppliedDiscount(ResponseModel):
    code: str | None = Field(default=None, description="Cupom; ausente em descontos automáticos.")
    title: str = Field(description="Nome do desconto.")
    amount: Amount = Field(gt=0, description="Valor total do desconto (> 0).")
    automatic: bool | None = Field(default=None, description="Aplicado sem cupom.")
    method: str | None = Field(default=None, description="`each` ou `across`.")
    allocations: list[Allocation] | None = Field(default=None, description="Alocação, soma = amount.")


class DiscountsOut(ResponseModel):
    codes: list[str] = Field(description="Cupons enviados, ecoados.")
    applied: list[AppliedDiscount] = Field(description="Descontos ativos.")
