"""Policies (`policies[]` on checkout, cart, order and catalog responses; UCP #572) and `policies.search`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from bcp_app.protocol.schemas.common import Description, RequestModel, ResponseModel
from bcp_app.protocol.schemas.envelope import UcpEnvelope


class ReturnWindow(ResponseModel):
    days: int = Field(ge=1, description="Prazo em dias (declaração da política, não contagem regressiva).")
    anchor: Literal["delivered", "purchased", "shipped", "fulfilled"] = Field(
        description="Evento a partir do qual o prazo conta."
    )


class PolicyOut(ResponseModel):
    type: str = Field(
        description="Tipo (reverse-DNS): `br.dev.bcp.shopping.policy.return`, `….terms`, `….privacy`, `….shipping`."
    )
    description: Description = Field(description="Texto da política (`plain`).")
    url: str | None = Field(default=None, description="Página completa da política.")
    title: str | None = Field(default=None, description="Título para exibição.")
    applies_to: list[str] | None = Field(default=None, description="JSONPaths alvo; ausente = a resposta inteira.")
    window: ReturnWindow | None = Field(default=None, description="Somente trocas: prazo para desistir.")
    supported_resolutions: list[str] | None = Field(
        default=None, description="Somente trocas: o que o comprador recebe."
    )


class PoliciesSearchRequest(RequestModel):
    query: Annotated[str, Field(min_length=1, max_length=500)] = Field(
        description='A pergunta do comprador, ex. "qual é a política de trocas?".'
    )
    language: Annotated[str, Field(max_length=35)] | None = Field(default=None, description="Idioma (BCP 47).")


class PoliciesSearchResponse(ResponseModel):
    ucp: UcpEnvelope = Field(description="Versão do protocolo.")
    query: str = Field(description="A pergunta recebida.")
    policies: list[PolicyOut] = Field(description="As políticas que respondem à pergunta, a mais relevante primeiro.")
    answer: str = Field(description="Resposta pronta: o texto da política mais relevante.")
