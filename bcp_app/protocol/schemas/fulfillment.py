"""Fulfillment extension objects (BCP §9)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bcp_app.protocol.schemas.common import (
    AddressLines,
    Description,
    Recipient,
    RequestModel,
    ResponseModel,
    ShortText,
    Total,
)

Id = Annotated[str, Field(min_length=1, max_length=100)]


class DestinationIn(RequestModel):
    id: Id | None = Field(default=None, description="Id atribuído pela loja, ecoado em atualizações.")
    type: Annotated[str, Field(max_length=40)] = Field(
        default="shipping_address", description="`shipping_address`; destinos de retirada vêm da loja e são ignorados."
    )
    street_address: ShortText = Field(default="", description="Logradouro e número.")
    extended_address: ShortText = Field(default="", description="Complemento e bairro.")
    address_locality: ShortText = Field(default="", description="Cidade.")
    address_region: ShortText = Field(default="", description="UF.")
    postal_code: ShortText = Field(default="", description="CEP.")
    address_country: ShortText = Field(default="BR", description="País.")
    first_name: ShortText = Field(default="", description="Nome do destinatário.")
    last_name: ShortText = Field(default="", description="Sobrenome do destinatário.")
    phone_number: ShortText = Field(default="", description="Telefone do destinatário.")


class GroupIn(RequestModel):
    id: Id | None = Field(default=None, description="Id do grupo (da loja).")
    selected_option_id: Id | None = Field(default=None, description="Opção de entrega escolhida.")


class MethodIn(RequestModel):
    id: Id | None = Field(default=None, description="Id do método (da loja).")
    type: Annotated[str, Field(min_length=1, max_length=40)] = Field(
        default="shipping", description="`shipping` ou `pickup`."
    )
    line_item_ids: Annotated[list[Id], Field(max_length=200)] = Field(
        default_factory=list, description="Linhas atendidas por este método."
    )
    destinations: Annotated[list[DestinationIn], Field(max_length=10)] = Field(
        default_factory=list, description="Endereços de entrega escritos pela plataforma."
    )
    selected_destination_id: Id | None = Field(default=None, description="Destino escolhido.")
    groups: Annotated[list[GroupIn], Field(max_length=20)] = Field(
        default_factory=list, description="Seleção de opção por grupo."
    )


class FulfillmentIn(RequestModel):
    methods: Annotated[list[MethodIn], Field(max_length=10)] = Field(
        default_factory=list, description="Métodos de atendimento."
    )


class LocationAddress(AddressLines, Recipient):
    """A destination's address members in wire order (recipient, then address lines): those of a
    `shipping_address` destination, and the `address` of a `business_location` (pickup point)."""


class DestinationHead(ResponseModel):
    id: str = Field(description="Id do destino.")
    type: str = Field(description="`shipping_address` ou `business_location`.")
    name: str | None = Field(default=None, description="Nome do ponto de retirada.")
    address: LocationAddress | None = Field(default=None, description="Endereço do ponto de retirada.")


class DestinationOut(LocationAddress, DestinationHead):
    """`shipping_address` (id, type and the address members) or `business_location` (id, type, name, address).
    Bases in this order so the members are `id, type, name, address`, then the address ones (wire order)."""


class OptionOut(ResponseModel):
    id: str = Field(description="Id da opção.")
    title: str = Field(description="Título único entre irmãs: PAC, SEDEX, Retirada na loja.")
    description: Description | None = Field(default=None, description="Prazo, sem repetir título ou preço.")
    totals: list[Total] = Field(description="Custo da opção.")
    carrier: str | None = Field(default=None, description="Transportadora.")
    earliest_fulfillment_time: str | None = Field(default=None, description="Mais cedo (RFC 3339).")
    latest_fulfillment_time: str | None = Field(default=None, description="Mais tarde (RFC 3339).")


class GroupOut(ResponseModel):
    id: str = Field(description="Id do grupo.")
    line_item_ids: list[str] = Field(description="Linhas do grupo.")
    options: list[OptionOut] = Field(description="Opções de entrega.")
    selected_option_id: str | None = Field(default=None, description="Opção escolhida.")


class MethodOut(ResponseModel):
    id: str = Field(description="Id do método.")
    type: str = Field(description="`shipping` ou `pickup`.")
    line_item_ids: list[str] = Field(description="Linhas atendidas.")
    destinations: list[DestinationOut] | None = Field(default=None, description="Destinos.")
    selected_destination_id: str | None = Field(default=None, description="Destino escolhido.")
    groups: list[GroupOut] | None = Field(default=None, description="Grupos com opções.")


class AvailableMethodOut(ResponseModel):
    type: str = Field(description="Tipo do método alternativo.")
    line_item_ids: list[str] = Field(description="Linhas que ele pode atender.")
    fulfillable_on: str | None = Field(default=None, description="`now` ou data.")
    description: str | None = Field(default=None, description="Descrição da alternativa (texto).")


class FulfillmentOut(ResponseModel):
    methods: list[MethodOut] = Field(description="Métodos de atendimento.")
    available_methods: list[AvailableMethodOut] | None = Field(default=None, description="Alternativas.")
