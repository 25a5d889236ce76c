"""REST binding (BCP §13.1) with django-ninja under `/bcp/v1`: a thin translation to `operations`.

Each view: resolve the `RequestContext` (BCP-Agent, API key or signature), apply idempotency
(fingerprint = SHA-256 of the raw body), call the operation, render JSON. Protocol errors are
the §5.4 status + `{code, content}`; a present `Request-Id` is echoed on every response.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.utils.encoding import escape_uri_path
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI, Path
from ninja.errors import HttpError, ValidationError
from ninja.openapi.schema import REF_TEMPLATE, OpenAPISchema
from ninja.parser import Parser
from ninja.schema import NinjaGenerateJsonSchema
from pydantic import BaseModel

from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.field_errors import error_loc, error_text, field_problems
from bcp_app.protocol.results import OperationResult, body_bytes
from bcp_app.protocol.schemas import (
    CheckoutCancelRequest,
    CheckoutCompleteRequest,
    CheckoutCreateRequest,
    CheckoutResponse,
    CheckoutUpdateRequest,
    ErrorResponse,
    GetProductRequest,
    LookupRequest,
    LookupResponse,
    OrderResponse,
    ProductResponse,
    ProtocolErrorBody,
    SearchRequest,
    SearchResponse,
)
from bcp_app.protocol.schemas.cart import CartCreateRequest, CartResponse, CartUpdateRequest
from bcp_app.protocol.schemas.order_actions import CancelOrderRequest, RequestReturnRequest
from bcp_app.protocol.schemas.subscription import SubscriptionCreateRequest, SubscriptionResponse
from bcp_app.protocol.schemas.text import (
    ESCAPE_FREE,
    ID_PATTERN,
    EscapeFreeObject,
    control_escape_free,
    identifier_problem,
)
from bcp_app.protocol.signatures import RESPONSE_COMPONENTS, HttpMessage, content_digest, sign_message
from bcp_app.protocol.validation import invalid_fields, validate
from bcp_app.service import idempotency, operations, ratelimit
from bcp_app.service.context import RequestContext, SignedRequest, resolve_context
from bcp_app.service.negotiation import AGENT_HEADER, parse_agent_header
from kernel.json_limits import JsonLimitError, loads_bounded
from kernel.ops.access_log import annotate

logger = logging.getLogger("bcp_app.transports.rest")


class BoundedParser(Parser):
    """JSON bodies nested deeper than `MAX_DEPTH` are refused before parsing (no RecursionError, issue 13 §4)."""

    def parse_body(self, request: HttpRequest) -> Any:
        data = loads_bounded(request.body, max_bytes=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        # decoded strictly: a text with no escape of a control character holds none, the models need not scan it
        setattr(request, ESCAPE_FREE, control_escape_free(request.body))
        return data


class BcpNinjaAPI(NinjaAPI):
    """Ninja's API whose OpenAPI also holds the request models of the views that read their body themselves
    (`own_body_documented`): ninja writes the components of the models it validates only."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.own_body_models: list[type[BaseModel]] = []

    def get_openapi_schema(
        self, *, path_prefix: str | None = None, path_params: dict[str, Any] | None = None
    ) -> OpenAPISchema:
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        for model in self.own_body_models:  # as ninja writes a body model's schema (`_create_schema_from_model`)
            definition = model.model_json_schema(
                ref_template=REF_TEMPLATE, schema_generator=NinjaGenerateJsonSchema, mode="validation"
            )
            schema.add_schema_definitions({**definition.pop("$defs", {}), model.__name__: definition})
        return schema


api = BcpNinjaAPI(
    parser=BoundedParser(),
    title="BCP REST",
    version="2026-07-28",
    description="Brazilian Commerce Protocol (UCP for Brazil) REST binding of this shop: checkout, order, catalog.",
    urls_namespace="bcp_v1",
    docs_url="/docs",
    openapi_url="/openapi.json",
)

ERRORS: dict[int, Any] = {
    400: ProtocolErrorBody,
    401: ProtocolErrorBody,
    403: ProtocolErrorBody,
    409: ProtocolErrorBody,
    422: ProtocolErrorBody,
    424: ProtocolErrorBody,
    429: ProtocolErrorBody,
    503: ProtocolErrorBody,
}
AGENT_DESCRIPTION = 'Perfil da plataforma: profile="https://…" (RFC 8941).'
KEY_DESCRIPTION = "Chave de idempotência (UUID)."


def _documented_header(name: str, title: str, description: str) -> dict[str, Any]:
    """The OpenAPI parameter ninja writes for an optional `Header(None, alias=name, description=…)`."""
    schema = {"anyOf": [{"type": "string"}, {"type": "null"}], "description": description, "title": title}
    return {"in": "header", "name": name, "schema": schema, "required": False, "description": description}


def agent_documented() -> dict[str, Any]:
    """`openapi_extra` of a view that reads `BCP-Agent` only through `_run`: the same OpenAPI parameter ninja writes
    for a declared header, without declaring it. A declared header is a pydantic model ninja builds and validates
    on every call for a value `_run` reads from the request itself (issue 34: about 5 % of a Get Order's CPU)."""
    return {"parameters": [_documented_header(AGENT_HEADER, "Bcp-Agent", AGENT_DESCRIPTION)]}


def writes_documented() -> dict[str, Any]:
    """`agent_documented` for the writes, whose `Idempotency-Key` `_run` reads too (issue 34: ninja built Django's
    mapping of every request header and validated a model of these two on each create, update and complete)."""
    key = _documented_header("Idempotency-Key", "Idempotency-Key", KEY_DESCRIPTION)
    return {"parameters": [*agent_documented()["parameters"], key]}


def own_body_documented(model: type[BaseModel], *, optional: str | None = None) -> dict[str, Any]:
    """`writes_documented` of a view that reads its body itself (`_checkout_write`), with the `requestBody` ninja
    writes for a declared `payload: model` (or, with `optional` as its description, `model | None = Body(None)`)
    and the model among the document's components (`BcpNinjaAPI`)."""
    api.own_body_models.append(model)
    ref = {"$ref": REF_TEMPLATE.format(model=model.__name__)}
    schema = ref if optional is None else {"anyOf": [ref, {"type": "null"}], "description": optional}
    body = {"content": {"application/json": {"schema": schema}}, "required": optional is None}
    return {**writes_documented(), "requestBody": body}


# A path id holds no control character (`_run` refuses it with its own message); the pattern says so in the
# OpenAPI without replacing that message with pydantic's.
_PATH_ID = Path(description="Id do recurso (sem caracteres de controle).")
_PATH_ID.json_schema_extra = {"pattern": ID_PATTERN}  # ninja's Path() sets its own json_schema_extra, so after it
PathId = Annotated[str, _PATH_ID]


_META_NAMES: dict[str, str] = {}  # header name → its `META` key: a handful of names, spelled once per process


def header(request: HttpRequest, name: str) -> str | None:
    """The request header `name`, read from `META` as `request.headers` would give it: that mapping is built of
    every header the first time it is read (issue 34: about 3 % of a Get Order, for the few headers read here)."""
    key = _META_NAMES.get(name)
    if key is None:
        key = _META_NAMES[name] = "HTTP_" + name.upper().replace("-", "_")
    return request.META.get(key)


def _json(
    body: dict[str, Any] | bytes, status: int, request: HttpRequest, headers: dict[str, str] | None = None
) -> HttpResponse:
    raw = body if isinstance(body, bytes) else body_bytes(body)
    response = HttpResponse(raw, status=status, content_type="application/json; charset=utf-8")
    for name, value in (headers or {}).items():
        response[name] = value
    request_id = header(request, "Request-Id")
    if request_id and len(request_id) <= 200 and request_id.isprintable():
        response["Request-Id"] = request_id
    return response


def _protocol_error(request: HttpRequest, exc: ProtocolError) -> HttpResponse:
    return _json(exc.body(), exc.http_status, request, exc.http_headers())


INVALID_JSON = "O corpo não é JSON válido (UTF-8)."


def request_too_large() -> ProtocolError:
    """A body over `DATA_UPLOAD_MAX_MEMORY_SIZE` (Django's `RequestDataTooBig`), on every REST face."""
    return ProtocolError("request_too_large", "O corpo da requisição é grande demais.")


def json_body(request: HttpRequest) -> Any:
    """An optional JSON body (`{}` when empty), read for a view that parses its own: too large is
    `request_too_large`, malformed or nested too deep `invalid_request` (never Django's HTML 400 page)."""
    try:
        raw = request.body
    except RequestDataTooBig as exc:
        raise request_too_large() from exc
    if not raw:
        return {}
    try:
        return loads_bounded(raw, max_bytes=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    except JsonLimitError as exc:
        raise ProtocolError("invalid_request", INVALID_JSON) from exc


def _signed(request: HttpRequest) -> SignedRequest | None:
    meta = request.META
    if meta.get("HTTP_SIGNATURE_INPUT") is None and meta.get("HTTP_SIGNATURE") is None:
        return None
    scope = getattr(request, "scope", None) or {}
    raw_path = scope.get("raw_path")
    path = raw_path.decode("latin-1") if isinstance(raw_path, bytes) else escape_uri_path(request.path)
    query = request.META.get("QUERY_STRING") or None
    authority = request.META.get("HTTP_HOST") or request.META.get("SERVER_NAME", "")
    port = str(request.META.get("SERVER_PORT", ""))
    if "HTTP_HOST" not in request.META and port and port not in ("80", "443"):
        authority = f"{authority}:{port}"
    message = HttpMessage(
        method=request.method or "GET", authority=authority, path=path, query=query, headers=dict(request.headers)
    )
    return SignedRequest(message=message, body=request.body)


def _api_key(request: HttpRequest) -> str | None:
    meta = request.META  # the headers' `META` keys spelled here: every agent call reads them (issue 34)
    authorization = meta.get("HTTP_AUTHORIZATION")
    if authorization is not None:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ProtocolError("unauthenticated", "Use Authorization: Bearer <chave de API>.")
        return token.strip()
    return meta.get("HTTP_X_API_KEY")


# the face's agent header's `META` key, then the other one's (`agent_header`)
_AGENT_KEYS = {AGENT_HEADER: ("HTTP_BCP_AGENT", "HTTP_UCP_AGENT"), "UCP-Agent": ("HTTP_UCP_AGENT", "HTTP_BCP_AGENT")}


def agent_header(request: HttpRequest, name: str = AGENT_HEADER) -> str | None:
    """The face's agent header (`BCP-Agent`; `UCP-Agent` on UCP's face), else the other one (the same RFC 8941
    Dictionary with `profile`): a plain UCP platform is read the same way (issue 35)."""
    keys = _AGENT_KEYS.get(name)
    if keys is None:
        other = "UCP-Agent" if name == AGENT_HEADER else AGENT_HEADER
        return header(request, name) or header(request, other)
    meta = request.META
    return meta.get(keys[0]) or meta.get(keys[1])


def context_from_request(
    request: HttpRequest,
    operation: str | None = None,
    counted: ratelimit.Window | None = None,
    *,
    agent: str = AGENT_HEADER,
) -> RequestContext:
    meta = request.META
    return resolve_context(
        transport="rest",
        profile_url=parse_agent_header(agent_header(request, agent), agent),
        api_key=_api_key(request),
        signed=_signed(request),
        idempotency_key=meta.get("HTTP_IDEMPOTENCY_KEY"),
        language=meta.get("HTTP_ACCEPT_LANGUAGE"),
        request_id=meta.get("HTTP_REQUEST_ID"),
        client_ip=meta.get("REMOTE_ADDR"),
        operation=operation,
        counted=counted,
        agent_header=agent,
    )


def _run(
    request: HttpRequest,
    operation: str,
    call: Callable[[RequestContext], OperationResult],
    *,
    sign: bool = False,
    path_ids: dict[str, str] | None = None,
    agent: str = AGENT_HEADER,
    on_error: Callable[[HttpRequest, ProtocolError], HttpResponse] | None = None,
    joinable: bool = False,
) -> HttpResponse:
    """`agent`: the header the face reads the platform's profile from (`UCP-Agent` on UCP's face); `on_error`:
    how the face renders a protocol error (UCP's adds its `ucp` member), BCP's `{code, content}` by default.
    `joinable`: `call` returns the operation's result unchanged, so its idempotency record may be written in
    the operation's last transaction (`idempotency.run`)."""
    annotate(transport="rest", operation=operation)
    try:
        for name, value in (path_ids or {}).items():
            problem = identifier_problem(value, field=name)
            if problem is not None:
                raise ProtocolError("invalid_request", f"Parâmetro de caminho inválido {name}: {problem}")
        meta = request.META
        caller, authenticated = ratelimit.caller_of(
            meta.get("HTTP_AUTHORIZATION") or meta.get("HTTP_X_API_KEY"), meta.get("REMOTE_ADDR")
        )
        if operation in idempotency.KEY_REQUIRED:
            idempotency.check_key(header(request, "Idempotency-Key"), operation=operation)
        # counted and refused when over in identity's cache round trip, before anything else is looked up
        counted = ratelimit.call_window(
            op_class=ratelimit.operation_class(operation), caller=caller, authenticated=authenticated
        )
        ctx = context_from_request(request, operation, counted, agent=agent)
        ctx.extra.setdefault("client_ip", request.META.get("REMOTE_ADDR"))
        if operation in idempotency.IDEMPOTENT_OPERATIONS:
            result = idempotency.run(
                principal=ctx.principal,
                operation=operation,
                key=ctx.idempotency_key,
                fingerprint=idempotency.fingerprint_bytes(request.body),
                execute=lambda: call(ctx),
                joinable=joinable,
            )
        else:
            result = call(ctx)
    except ProtocolError as exc:
        return (on_error or _protocol_error)(request, exc)
    response = _json(result.encoded, result.status_code, request, result.headers)
    if sign:
        _sign_response(response)
    return response


def _sign_response(response: HttpResponse) -> None:
    """BCP-SIG-06: our response signatures cover `@status content-digest content-type`.

    Best effort: the operation already happened, so a signing failure must not turn it into an error.
    """
    response["Content-Digest"] = content_digest(response.content)
    message = HttpMessage(
        status=response.status_code,
        headers={"content-digest": response["Content-Digest"], "content-type": response["Content-Type"]},
    )
    try:
        headers = sign_message(message, RESPONSE_COMPONENTS)
    except Exception:
        logger.exception("could not sign the BCP response (check BCP_SIGNING_KEY_FILE)")
        return
    for name, value in headers.items():
        response[name] = value


# --- error handlers: never a 500 for bad input, never internals -------------------------------------------


def _header_problem(request: HttpRequest, operation: str = "") -> ProtocolError | None:
    """BCP §3 / BCP-IDEM-02: the header errors `_run` answers for a valid body come before a body error too
    (ninja validates the body before the view runs). Cheap checks only: no profile fetch, no rate count.
    `operation`: the one a view refusing its own body runs (the Idempotency-Key it requires checked too); none on
    ninja's routes, whose operations require no key."""
    try:
        if operation in idempotency.KEY_REQUIRED:
            idempotency.check_key(header(request, "Idempotency-Key"), operation=operation)
        parse_agent_header(agent_header(request))
    except ProtocolError as exc:
        return exc
    return None


@api.exception_handler(ValidationError)
def _validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    if (problem := _header_problem(request)) is not None:
        return _protocol_error(request, problem)
    errors = exc.errors or [{"loc": (), "msg": "inválido"}]
    # every offending member named, as MCP's invalid_params and the operations' `validate` do (BCP-ERR-05)
    return _protocol_error(request, invalid_fields(field_problems(errors, loc_of=_body_loc)))


def _body_loc(error: Mapping[str, Any]) -> tuple[Any, ...]:
    """ninja's `loc` (`("body", "payload", "line_items", 0)`, `("path", "checkout_id")`) → the member's place in
    what the agent sent."""
    loc = error_loc(error)
    if loc and loc[0] in ("body", "path", "query", "header"):
        loc = loc[2:] if loc[0] == "body" and len(loc) > 1 else loc[1:]
    return loc


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    if exc.status_code == 400:
        if (problem := _header_problem(request)) is not None:
            return _protocol_error(request, problem)
        return _protocol_error(request, ProtocolError("invalid_request", "O corpo não é JSON válido (UTF-8)."))
    return _json({"code": "invalid_request", "content": str(exc)}, exc.status_code, request)


@api.exception_handler(RequestDataTooBig)
def _too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return _protocol_error(request, request_too_large())


@api.exception_handler(ProtocolError)
def _protocol(request: HttpRequest, exc: ProtocolError) -> HttpResponse:
    return _protocol_error(request, exc)


@api.exception_handler(Exception)
def _unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    logger.exception("unexpected error in BCP REST %s %s", request.method, request.path)
    return _json({"code": "internal_error", "content": "Erro interno; nada foi alterado."}, 500, request)


def past_ninja(path: str, views: Mapping[str, Callable[..., HttpResponse]]) -> Callable[..., HttpResponse]:
    """A view for ninja's route `path` (bcp_app/urls.py routes it ahead of ninja's patterns) that calls the route's
    view of each method in `views` straight away: a hot view whose only parameter is a path string that ninja
    validates as any string and `_run` checks itself. Ninja's operations stay declared (the OpenAPI document is
    theirs), but their per-call work (a throwaway response object, a pydantic model of the path, the walk
    through ninja's patterns) was ~5 % of a Get Order's CPU (issue 34). An exception a view lets through goes
    to the API's handlers as ninja would send it; any other method gets ninja's own answer (its 405)."""
    ninja_view = api.default_router.path_operations[path].get_view()

    @csrf_exempt  # as ninja's views are: a POST here gets ninja's 405, not the site's CSRF refusal
    def direct(request: HttpRequest, **path_ids: str) -> HttpResponse:
        view = views.get(request.method or "")
        if view is None:
            return ninja_view(request, **path_ids)
        try:
            return view(request, **path_ids)
        except Exception as exc:  # what ninja's Operation.run does with it: the API's exception handlers
            return api.on_exception(request, exc)

    return direct


# --- checkout ---------------------------------------------------------------------------------------------

CHECKOUT_RESPONSES = {200: CheckoutResponse | ErrorResponse, 201: CheckoutResponse, **ERRORS}


@api.post(
    "/checkout-sessions",
    response=CHECKOUT_RESPONSES,
    summary="Create checkout",
    tags=["checkout"],
    openapi_extra=writes_documented(),
)
def create_checkout(
    request: HttpRequest,
    payload: CheckoutCreateRequest,
) -> HttpResponse:
    return _run(request, "create_checkout", lambda ctx: operations.create_checkout(ctx, payload))


@api.get(
    "/checkout-sessions/{checkout_id}",
    response=CHECKOUT_RESPONSES,
    summary="Get checkout",
    tags=["checkout"],
    openapi_extra=agent_documented(),
)
def get_checkout(request: HttpRequest, checkout_id: PathId) -> HttpResponse:
    return _run(
        request,
        "get_checkout",
        lambda ctx: operations.get_checkout(ctx, checkout_id),
        path_ids={"checkout_id": checkout_id},
    )


def _checkout_write(
    request: HttpRequest,
    operation: str,
    checkout_id: str,
    run: Callable[[RequestContext, str, Any], OperationResult],
    *,
    complete: bool = False,
) -> HttpResponse:
    """A write on a checkout with its body as sent: the operation validates it with its request model after
    answering `not_found` for a checkout the caller does not hold, whatever the body says (BCP-CHK-13), as on MCP
    and A2A, so ninja validates nothing here. A body that is not JSON is refused after the header errors `_run`
    answers first (BCP-IDEM-02), as `_http_error` does on ninja's routes; one too large at once, as `_too_big`."""
    try:
        body = json_body(request)
    except ProtocolError as exc:
        return _body_refused(request, operation, exc)
    if isinstance(body, dict) and control_escape_free(request.body):  # what `BoundedParser` tells ninja's models
        body = EscapeFreeObject(body)
    return _run(
        request,
        operation,
        lambda ctx: run(ctx, checkout_id, body),
        sign=complete,
        path_ids={"checkout_id": checkout_id},
        joinable=complete,
    )


def _body_refused(request: HttpRequest, operation: str, exc: ProtocolError) -> HttpResponse:
    """A body refused by a view that reads its own: a header error `_run` would answer comes first (BCP-IDEM-02),
    as `_validation_error` and `_http_error` do on ninja's routes; a body too large is said at once, as `_too_big`."""
    if exc.code == "invalid_request":
        exc = _header_problem(request, operation) or exc
    return _protocol_error(request, exc)


@api.put(
    "/checkout-sessions/{checkout_id}",
    response=CHECKOUT_RESPONSES,
    summary="Update checkout",
    tags=["checkout"],
    openapi_extra=own_body_documented(CheckoutUpdateRequest),
)
def update_checkout(request: HttpRequest, checkout_id: PathId) -> HttpResponse:
    return _checkout_write(request, "update_checkout", checkout_id, operations.update_checkout)


@api.post(
    "/checkout-sessions/{checkout_id}/complete",
    response=CHECKOUT_RESPONSES,
    summary="Complete checkout",
    tags=["checkout"],
    openapi_extra=own_body_documented(CheckoutCompleteRequest),
)
def complete_checkout(request: HttpRequest, checkout_id: PathId) -> HttpResponse:
    return _checkout_write(request, "complete_checkout", checkout_id, operations.complete_checkout, complete=True)


@api.post(
    "/checkout-sessions/{checkout_id}/cancel",
    response=CHECKOUT_RESPONSES,
    summary="Cancel checkout",
    tags=["checkout"],
    # the model `operations.cancel_checkout` validates for MCP and A2A too (members ignored)
    openapi_extra=own_body_documented(CheckoutCancelRequest, optional="Opcional: sem corpo ou `{}`."),
)
def cancel_checkout(request: HttpRequest, checkout_id: PathId) -> HttpResponse:
    return _checkout_write(request, "cancel_checkout", checkout_id, operations.cancel_checkout)


# The checkout's reads and writes of a purchase past ninja's per-call work (`past_ninja`, bcp_app/urls.py).
checkout_direct = past_ninja("/checkout-sessions/{checkout_id}", {"GET": get_checkout, "PUT": update_checkout})
checkout_direct.__name__ = "checkout_direct"
complete_direct = past_ninja("/checkout-sessions/{checkout_id}/complete", {"POST": complete_checkout})
complete_direct.__name__ = "complete_direct"


# --- cart (br.dev.bcp.shopping.cart) -------------------------------------------------------------------------

CART_RESPONSES = {200: CartResponse | ErrorResponse, 201: CartResponse, **ERRORS}


@api.post("/carts", response=CART_RESPONSES, summary="Create cart", tags=["cart"], openapi_extra=writes_documented())
def create_cart(
    request: HttpRequest,
    payload: CartCreateRequest,
) -> HttpResponse:
    return _run(request, "create_cart", lambda ctx: operations.create_cart(ctx, payload))


@api.get(
    "/carts/{cart_id}", response=CART_RESPONSES, summary="Get cart", tags=["cart"], openapi_extra=agent_documented()
)
def get_cart(request: HttpRequest, cart_id: PathId) -> HttpResponse:
    return _run(request, "get_cart", lambda ctx: operations.get_cart(ctx, cart_id), path_ids={"cart_id": cart_id})


@api.put(
    "/carts/{cart_id}", response=CART_RESPONSES, summary="Update cart", tags=["cart"], openapi_extra=writes_documented()
)
def update_cart(
    request: HttpRequest,
    cart_id: PathId,
    payload: CartUpdateRequest,
) -> HttpResponse:
    return _run(
        request, "update_cart", lambda ctx: operations.update_cart(ctx, cart_id, payload), path_ids={"cart_id": cart_id}
    )


@api.post(
    "/carts/{cart_id}/cancel",
    response=CART_RESPONSES,
    summary="Cancel cart",
    tags=["cart"],
    openapi_extra=writes_documented(),
)
def cancel_cart(request: HttpRequest, cart_id: PathId) -> HttpResponse:
    return _run(request, "cancel_cart", lambda ctx: operations.cancel_cart(ctx, cart_id), path_ids={"cart_id": cart_id})


# --- order and catalog ------------------------------------------------------------------------------------


@api.get(
    "/orders/{order_id}",
    response={200: OrderResponse | ErrorResponse, **ERRORS},
    summary="Get order",
    tags=["order"],
    openapi_extra=agent_documented(),
)
def get_order(request: HttpRequest, order_id: PathId) -> HttpResponse:
    return _run(request, "get_order", lambda ctx: operations.get_order(ctx, order_id), path_ids={"order_id": order_id})


get_order_direct = past_ninja("/orders/{order_id}", {"GET": get_order})
get_order_direct.__name__ = "get_order_direct"


# --- order actions (extension br.dev.bcp.shopping.order_actions, issue 35) ---------------------------------


def _action_payload[M: BaseModel](request: HttpRequest, model: type[M], *, optional: bool) -> M | None:
    """The body of an order action as ninja read a declared `payload: model` (`model | None = Body(None)` when
    `optional`): no body or `null` is None when optional, else `$` missing or not an object; the rest validated
    with the model (the shared `validate`, the operations' own). ProtocolError as `json_body` and `validate`."""
    try:
        raw = request.body
    except RequestDataTooBig as exc:
        raise request_too_large() from exc
    body = json_body(request) if raw else None
    if body is None:
        if optional:
            return None
        raise invalid_fields({"$": error_text({"type": "model_type" if raw else "missing"})})
    if isinstance(body, dict) and control_escape_free(raw):  # what `BoundedParser` tells ninja's models
        body = EscapeFreeObject(body)
    return validate(model, body)


def _order_action(
    request: HttpRequest,
    operation: str,
    order_id: str,
    model: type[BaseModel],
    run: Callable[[RequestContext, str, Any], OperationResult],
    *,
    optional: bool = False,
) -> HttpResponse:
    """An order action whose view reads its body itself (no ninja body parameter, so `_header_problem` need not
    work out the operation from the path): validated before `_run`, as ninja did before the view, so every answer
    and its order stay as they were: a header error first (BCP-IDEM-02), then a body error, then the path id,
    the credentials, the rate window and idempotency."""
    try:
        payload = _action_payload(request, model, optional=optional)
    except ProtocolError as exc:
        return _body_refused(request, operation, exc)
    return _run(request, operation, lambda ctx: run(ctx, order_id, payload), path_ids={"order_id": order_id})


@api.post(
    "/orders/{order_id}/cancel",
    response={200: OrderResponse | ErrorResponse, **ERRORS},
    summary="Cancel order (extension order_actions)",
    tags=["order"],
    openapi_extra=own_body_documented(CancelOrderRequest, optional="Opcional: sem corpo é um cancelamento sem motivo."),
)
def cancel_order(request: HttpRequest, order_id: PathId) -> HttpResponse:
    return _order_action(request, "cancel_order", order_id, CancelOrderRequest, operations.cancel_order, optional=True)


@api.post(
    "/orders/{order_id}/returns",
    response={200: OrderResponse | ErrorResponse, **ERRORS},
    summary="Request a return (extension order_actions)",
    tags=["order"],
    openapi_extra=own_body_documented(RequestReturnRequest),
)
def request_return(request: HttpRequest, order_id: PathId) -> HttpResponse:
    return _order_action(request, "request_return", order_id, RequestReturnRequest, operations.request_return)


@api.post(
    "/catalog/search",
    response={200: SearchResponse | ErrorResponse, **ERRORS},
    summary="Search catalog",
    tags=["catalog"],
    openapi_extra=agent_documented(),
)
def search_catalog(request: HttpRequest, payload: SearchRequest) -> HttpResponse:
    return _run(request, "search_catalog", lambda ctx: operations.search_catalog(ctx, payload))


@api.post(
    "/catalog/lookup",
    response={200: LookupResponse | ErrorResponse, **ERRORS},
    summary="Lookup catalog",
    tags=["catalog"],
    openapi_extra=agent_documented(),
)
def lookup_catalog(request: HttpRequest, payload: LookupRequest) -> HttpResponse:
    return _run(request, "lookup_catalog", lambda ctx: operations.lookup_catalog(ctx, payload))


@api.post(
    "/catalog/product",
    response={200: ProductResponse | ErrorResponse, **ERRORS},
    summary="Get product",
    tags=["catalog"],
    openapi_extra=agent_documented(),
)
def get_product(request: HttpRequest, payload: GetProductRequest) -> HttpResponse:
    return _run(request, "get_product", lambda ctx: operations.get_product(ctx, payload))


# --- subscriptions (extension br.dev.bcp.shopping.subscription, issue 38) -----------------------------------

SUBSCRIPTION_RESPONSES = {200: SubscriptionResponse | ErrorResponse, 201: SubscriptionResponse, **ERRORS}


@api.post(
    "/subscriptions",
    response=SUBSCRIPTION_RESPONSES,
    summary="Create subscription",
    tags=["subscription"],
    openapi_extra=writes_documented(),
)
def create_subscription(
    request: HttpRequest,
    payload: SubscriptionCreateRequest,
) -> HttpResponse:
    return _run(request, "create_subscription", lambda ctx: operations.create_subscription(ctx, payload))


@api.get(
    "/subscriptions/{subscription_id}", response=SUBSCRIPTION_RESPONSES, summary="Get subscription",
    tags=["subscription"], openapi_extra=agent_documented(),
)  # fmt: skip
def get_subscription(request: HttpRequest, subscription_id: PathId) -> HttpResponse:
    return _run(
        request, "get_subscription", lambda ctx: operations.get_subscription(ctx, subscription_id),
        path_ids={"subscription_id": subscription_id},
    )  # fmt: skip


@api.post(
    "/subscriptions/{subscription_id}/cancel", response=SUBSCRIPTION_RESPONSES, summary="Cancel subscription",
    tags=["subscription"],
    openapi_extra=writes_documented(),
)  # fmt: skip
def cancel_subscription(
    request: HttpRequest,
    subscription_id: PathId,
) -> HttpResponse:
    return _run(
        request, "cancel_subscription", lambda ctx: operations.cancel_subscription(ctx, subscription_id),
        path_ids={"subscription_id": subscription_id},
    )  # fmt: skip


@api.api_operation(["GET", "POST", "PUT", "PATCH", "DELETE"], "/{path:unknown}", include_in_schema=False)
def unknown_route(request: HttpRequest, unknown: str) -> HttpResponse:
    """Unknown paths (including trailing-slash variants) answer JSON 404, never an HTML page or a redirect."""
    return _json({"code": "not_found", "content": "Recurso BCP desconhecido."}, 404, request)
