"""Shared BCP objects: envelope, messages, totals, links, addresses, Error Response (BCP §1, §5, §6)."""

from __future__ import annotations

from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bcp_app.protocol.results import body_bytes
from bcp_app.protocol.schemas.text import NoControlCharacters

MAX_SAFE = 2**53 - 1
Amount = Annotated[int, Field(ge=0, le=MAX_SAFE, description="Valor em centavos de BRL (inteiro ≥ 0).")]
SignedAmount = Annotated[int, Field(ge=-MAX_SAFE, le=MAX_SAFE, description="Valor em centavos, com sinal.")]
ShortText = Annotated[str, Field(max_length=500)]


class RequestModel(NoControlCharacters):
    """Objects a platform sends: strictly typed, unknown members ignored (BCP §1: schemas are open).

    Response-only members (prices, totals, status, ids) are simply not declared here, so they are
    dropped on input and can never reach the engine (BCP-SEC-03). Control characters are refused
    before anything else (`NoControlCharacters`).
    """

    model_config = ConfigDict(extra="ignore", strict=True)


class OutputDrift(AssertionError):
    """A body the shop built is not what its output model produces: a presenter and the schema set disagree."""


class Produced(BaseModel):
    """A response model that produces the wire body (mixin of every BCP output model)."""

    @classmethod
    def validated(cls, body: dict[str, Any]) -> dict[str, Any]:
        """The wire body as this model produces it: `body` validated by the model, then dumped with exactly the
        members that were set. One output set for REST, MCP (`outputSchema`) and A2A (data parts)."""
        return cls.model_validate(body).model_dump(mode="json", by_alias=True, exclude_unset=True)

    @classmethod
    def produce(cls, body: dict[str, Any]) -> dict[str, Any]:
        """The presenter's body as this model sends it, without validating it again: the presenters build plain
        JSON data in this one schema set's shape, and validating and dumping it on every answer only cost CPU
        (issue 34). What the dump did besides is kept: every object's members in its model's order (declared
        fields, then extra members as built), so the wire stays byte for byte. With `BCP_CHECK_OUTPUT`
        (development and the test suite) the result must be exactly what `validated` makes of the body, so a
        presenter that drifts from the models fails every test that reaches it instead of reaching a platform."""
        out = _ordered(cls, body)
        if getattr(settings, "BCP_CHECK_OUTPUT", False):
            try:
                produced = cls.validated(body)
            except ValidationError as exc:
                raise OutputDrift(f"{cls.__name__}: the model refuses the built body: {exc}") from exc
            if body_bytes(produced) != body_bytes(out):
                raise OutputDrift(f"{cls.__name__}: built body ≠ the model's output: {_difference(produced, out)}")
        return out


# How to put a value of a declared type in wire order: None (as it is), a model, or a list/dict of such values.
type _Shape = type[BaseModel] | tuple[str, _Shape] | None
_plans: dict[type[BaseModel], tuple[tuple[str, _Shape], ...]] = {}


def _shape(annotation: Any) -> _Shape:
    """The part of a field's type that holds objects with a member order, from its annotation."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _shape(get_args(annotation)[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if origin in (list, tuple):
        args = [arg for arg in get_args(annotation) if arg is not Ellipsis]
        inner = _shape(args[0]) if len(args) == 1 else None
        return ("list", inner) if inner is not None else None
    if origin is dict:
        pair = get_args(annotation)
        inner = _shape(pair[1]) if len(pair) == 2 else None
        return ("dict", inner) if inner is not None else None
    if origin in (Union, UnionType):
        shapes = [shape for arg in get_args(annotation) if arg is not type(None) if (shape := _shape(arg)) is not None]
        # One object type among the alternatives: its order. Several (a union of models): pydantic picks by
        # validating, which this does not do, so they stay as built (the check in tests still compares them).
        return shapes[0] if len(shapes) == 1 else None
    return None


def _plan(model: type[BaseModel]) -> tuple[tuple[str, _Shape], ...]:
    plan = _plans.get(model)
    if plan is None:
        plan = _plans[model] = tuple(
            (field.serialization_alias or field.alias or name, _shape(field.annotation))
            for name, field in model.model_fields.items()
        )
    return plan


# How one object of a model with these members, in this order, is put in wire order: its members in wire order
# (None: already so) and those of them that hold objects with an order of their own. Built once per (model,
# members as built): a response is a few dozen objects of a handful of member sets each, so walking every
# declared field of every object on every answer (a few per cent of a purchase, issue 34) is done once.
type _Layout = tuple[tuple[str, ...] | None, tuple[tuple[str, int, Any], ...]]
_layouts: dict[tuple[type[BaseModel], tuple[str, ...]], _Layout] = {}
_MAX_LAYOUTS = 4096
# How a member that holds objects is put in order (`_Layout`'s nested members: name, kind, target): one object of a
# model, a list of objects of one model (items, totals, messages), lists of one model by name, or any other shape
# (`_shaped`). The first three, most of a response's objects, go to `_ordered` without a hop through `_shaped`
# (issue 34).
_ONE, _LIST, _LISTS, _OTHER = 0, 1, 2, 3


def _nested(shape: _Shape) -> tuple[int, Any]:
    if isinstance(shape, type):
        return _ONE, shape
    if isinstance(shape, tuple) and shape[0] == "list" and isinstance(shape[1], type):
        return _LIST, shape[1]
    inner = shape[1] if isinstance(shape, tuple) and shape[0] == "dict" else None
    if isinstance(inner, tuple) and inner[0] == "list" and isinstance(inner[1], type):
        return _LISTS, inner[1]  # lists of one model by name (capabilities, payment handlers)
    return _OTHER, shape


def _layout(model: type[BaseModel], members: tuple[str, ...]) -> _Layout:
    present = set(members)
    plan = [(name, shape) for name, shape in _plan(model) if name in present]
    declared = {name for name, _ in plan}
    # extra members (schemas are open) follow the declared ones, as pydantic dumps them
    order = (*(name for name, _ in plan), *(name for name in members if name not in declared))
    nested = tuple((name, *_nested(shape)) for name, shape in plan if shape is not None)
    return (None if order == members else order), nested


def _ordered(model: type[BaseModel], body: Any) -> Any:
    """`body` with its members (and its objects' members, as deep as the model declares them) in wire order."""
    if not isinstance(body, dict):
        return body
    members = tuple(body)
    layout = _layouts.get((model, members))
    if layout is None:
        if len(_layouts) >= _MAX_LAYOUTS:  # member sets are few; this only bounds a pathological caller
            _layouts.clear()
        layout = _layouts[(model, members)] = _layout(model, members)
    order, nested = layout
    out = dict(body) if order is None else {name: body[name] for name in order}
    for name, kind, target in nested:
        if kind == _ONE:
            out[name] = _ordered(target, out[name])
        elif kind == _LIST:
            value = out[name]
            if isinstance(value, list):
                out[name] = [_ordered(target, item) for item in value]
        elif kind == _LISTS:
            value = out[name]
            if isinstance(value, dict):
                out[name] = {
                    key: [_ordered(target, item) for item in items] if isinstance(items, list) else items
                    for key, items in value.items()
                }
        else:
            out[name] = _shaped(target, out[name])
    return out


def _shaped(shape: _Shape, value: Any) -> Any:
    if isinstance(shape, tuple):
        kind, inner = shape
        if kind == "list" and isinstance(value, list):
            if isinstance(inner, type):  # a list of objects of one model (items, totals, messages): no hop per item
                return [_ordered(inner, item) for item in value]
            return [_shaped(inner, item) for item in value]
        if kind == "dict" and isinstance(value, dict):
            return {key: _shaped(inner, item) for key, item in value.items()}
        return value
    return _ordered(shape, value) if shape is not None else value


def _same(left: Any, right: Any) -> bool:
    return body_bytes({"v": left}) == body_bytes({"v": right})


def _difference(produced: Any, body: Any, path: str = "$") -> str:
    """Where two JSON values first differ as wire bytes (JSONPath), for the drift message."""
    if isinstance(produced, dict) and isinstance(body, dict):
        for key in {*produced, *body}:
            if (key in produced) != (key in body) or not _same(produced[key], body[key]):
                return _difference(produced.get(key, "<absent>"), body.get(key, "<absent>"), f"{path}.{key}")
        if list(produced) != list(body):
            return f"{path}: member order model {list(produced)} ≠ built {list(body)}"
    if isinstance(produced, list) and isinstance(body, list) and len(produced) == len(body):
        for index, (left, right) in enumerate(zip(produced, body, strict=True)):
            if not _same(left, right):
                return _difference(left, right, f"{path}[{index}]")
    return f"{path}: model {produced!r:.200} ≠ built {body!r:.200}"


class ResponseModel(Produced):
    """Objects the shop sends; extra members allowed so extensions can compose (schemas are open)."""

    model_config = ConfigDict(extra="allow")


class VersionRef(ResponseModel):
    version: str = Field(description="Versão negociada (YYYY-MM-DD).")


class Message(ResponseModel):
    type: Literal["error", "warning", "info"] = Field(description="Tipo da mensagem (BCP §5.1).")
    code: str | None = Field(default=None, description="Código da mensagem (obrigatório em error e warning).")
    severity: Literal["recoverable", "requires_buyer_input", "requires_buyer_review", "unrecoverable"] | None = Field(
        default=None, description="Gravidade; obrigatória em mensagens de erro."
    )
    path: str | None = Field(default=None, description="JSONPath RFC 9535 relativo à raiz da resposta.")
    content: str = Field(description="Texto legível (pt-BR por padrão).")
    content_type: Literal["plain", "markdown"] | None = Field(default=None, description="Formato de `content`.")
    presentation: str | None = Field(default=None, description="`notice` ou `disclosure` (somente warnings).")


class TotalLine(ResponseModel):
    display_text: str = Field(description="Rótulo da sublinha.")
    amount: SignedAmount = Field(description="Valor da sublinha em centavos.")


class Total(ResponseModel):
    type: str = Field(description="subtotal, items_discount, discount, fulfillment, tax, fee ou total (BCP §6).")
    amount: SignedAmount = Field(description="Valor em centavos; descontos negativos.")
    display_text: str | None = Field(default=None, description="Texto exibido junto ao valor.")
    lines: list[TotalLine] | None = Field(default=None, description="Detalhamento que soma `amount`.")


class Link(ResponseModel):
    type: str = Field(description="terms_of_service, privacy_policy, refund_policy, shipping_policy ou faq.")
    url: str = Field(description="URL absoluta do conteúdo.")
    title: str | None = Field(default=None, description="Texto de exibição opcional.")


class PostalAddressIn(RequestModel):
    street_address: ShortText = Field(default="", description='Logradouro e número, ex. "Rua das Flores, 123".')
    extended_address: ShortText = Field(default="", description='Complemento e bairro, ex. "Apto 45 - Jardim".')
    address_locality: ShortText = Field(default="", description="Cidade.")
    address_region: ShortText = Field(default="", description='UF, ex. "SP".')
    postal_code: ShortText = Field(default="", description='CEP, ex. "01310-100".')
    address_country: ShortText = Field(default="BR", description="País ISO 3166-1 alfa-2.")
    first_name: ShortText = Field(default="", description="Nome do destinatário.")
    last_name: ShortText = Field(default="", description="Sobrenome do destinatário.")
    phone_number: ShortText = Field(default="", description="Telefone E.164 do destinatário.")


class AddressLines(ResponseModel):
    street_address: str | None = Field(default=None, description="Logradouro e número.")
    extended_address: str | None = Field(default=None, description="Complemento e bairro.")
    address_locality: str | None = Field(default=None, description="Cidade.")
    address_region: str | None = Field(default=None, description="UF.")
    postal_code: str | None = Field(default=None, description="CEP.")
    address_country: str | None = Field(default=None, description="País ISO 3166-1 alfa-2.")


class Recipient(ResponseModel):
    first_name: str | None = Field(default=None, description="Nome do destinatário.")
    last_name: str | None = Field(default=None, description="Sobrenome do destinatário.")
    phone_number: str | None = Field(default=None, description="Telefone E.164.")


# pydantic orders members base by base from the last base listed, so the bases give the wire order.
class PostalAddress(Recipient, AddressLines):
    """The order's PostalAddress: address lines, then the recipient."""


class Description(ResponseModel):
    plain: str | None = Field(default=None, description="Texto simples.")
    markdown: str | None = Field(default=None, description="Texto em Markdown.")
    html: str | None = Field(default=None, description="Texto em HTML.")


class ErrorEnvelope(Produced):
    model_config = ConfigDict(extra="allow")
    version: str = Field(description="Versão do protocolo.")
    status: Literal["error"] = Field(description="Sempre `error`.")
    capabilities: dict[str, list[VersionRef]] | None = Field(default=None, description="Capacidades relevantes.")


class ErrorResponse(Produced):
    """BCP §5.3: returned (HTTP 200) when no resource exists to return; no other members allowed."""

    model_config = ConfigDict(extra="forbid")
    ucp: ErrorEnvelope = Field(description="Envelope com `status: error`.")
    messages: list[Message] = Field(min_length=1, description="Por que a operação não produziu um recurso.")
    continue_url: str | None = Field(default=None, description="URL para o comprador continuar no site.")


class ProtocolErrorBody(Produced):
    """REST body of a protocol error (BCP §5.4): HTTP status + `{code, content}` (MCP/A2A `error.data` is this
    body plus `retry_after`)."""

    code: str = Field(description="Código do erro de protocolo, ex. `invalid_request`, `idempotency_conflict`.")
    content: str = Field(description="Explicação legível que nomeia o campo ou cabeçalho com problema.")
    continue_url: str | None = Field(default=None, description="Para erros de descoberta/versão.")
    fields: dict[str, str] | None = Field(
        default=None,
        description="`invalid_request` de um corpo: cada membro inválido (JSONPath no corpo enviado) → o problema.",
    )
