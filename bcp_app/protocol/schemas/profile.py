"""Profiles (BCP §2/§3). Platform profiles are validated with the JSON Schema; these models document them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Jwk(BaseModel):
    model_config = ConfigDict(extra="allow")
    kid: str = Field(description="Id da chave, referenciado por `keyid` em Signature-Input.")
    kty: str = Field(description="Tipo da chave, `EC`.")
    crv: str | None = Field(default=None, description="Curva, `P-256`.")
    alg: str | None = Field(default=None, description="Algoritmo, `ES256`.")
    use: str | None = Field(default=None, description="`sig`.")
    x: str | None = Field(default=None, description="Coordenada x (base64url).")
    y: str | None = Field(default=None, description="Coordenada y (base64url).")


class ProfileUcp(BaseModel):
    model_config = ConfigDict(extra="allow")
    version: str = Field(description="Versão do protocolo, `2026-07-28`.")
    services: dict[str, list[dict[str, Any]]] = Field(description="Serviços por nome reverso de domínio.")
    capabilities: dict[str, list[dict[str, Any]]] = Field(default_factory=dict, description="Capacidades.")
    payment_handlers: dict[str, list[dict[str, Any]]] = Field(description="Handlers de pagamento.")


class Profile(BaseModel):
    """A business (`/.well-known/bcp`) or platform (`BCP-Agent`) profile."""

    model_config = ConfigDict(extra="allow")
    ucp: ProfileUcp = Field(description="Registro de serviços, capacidades e handlers.")
    keys: list[Jwk] = Field(default_factory=list, description="Chaves públicas de assinatura (JWK).")
