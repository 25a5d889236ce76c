"""UCP's REST binding (2026-01-11, `source/services/shopping/openapi.json` at the spec's tag) under `/ucp/v1`; a
platform whose profile is written in UCP 2026-08-25 is answered in 2026-08-25's shapes (`ucp.body_2026_08_25`).

The same operations as BCP REST (`bcp_app/service/operations`), through the same `_run` (identity, negotiation,
idempotency, rate limits): each view renames the UCP request into BCP's (`bcp_app/protocol/ucp.py`), calls the
operation and renames its result back. The platform names itself with `UCP-Agent` (read like `BCP-Agent`); a
`version` parameter on it newer than ours is refused with `version_unsupported` (overview "Version Negotiation").

Also here: the UCP conformance suite's simulation endpoint, present only when `UCP_SIMULATION_SECRET` is set.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_safe

from bcp_app.protocol import ucp
from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.results import OperationResult
from bcp_app.protocol.sfv import Item, SFVError, parse_dictionary
from bcp_app.service import operations
from bcp_app.service.context import RequestContext
from bcp_app.service.discovery import ucp_business_profile, ucp_default_version
from bcp_app.transports.rest import _json, _protocol_error, _run
from bcp_app.transports.well_known import profile_response
from kernel.json_limits import JsonLimitError, loads_bounded
from orders.errors import OrderError
from orders.services import order_ship

logger = logging.getLogger("bcp_app.transports.ucp_rest")

Translate = Callable[[dict[str, Any]], dict[str, Any]]


@require_safe
def well_known_ucp(request: HttpRequest, version: str | None = None) -> HttpResponse:
    """`/.well-known/ucp` (the version `UCP_DISCOVERY_VERSION` names) and `/.well-known/ucp/{version}`."""
    chosen = version or ucp_default_version()
    if chosen not in ucp.UCP_VERSIONS:
        raise Http404("UCP version not served")
    return profile_response(request, ucp_business_profile(chosen))


def _version_problem(request: HttpRequest) -> ProtocolError | None:
    """A `version` parameter on `UCP-Agent` newer than every version we serve (overview "Version Negotiation":
    platform version > business version → `version_unsupported`)."""
    header = request.headers.get("UCP-Agent")
    if not header:
        return None
    try:
        member = parse_dictionary(header.strip()).get("profile")
    except SFVError:
        return None  # the header's own error is `_run`'s (invalid_profile_url)
    version = member.params.get("version") if isinstance(member, Item) else None
    if isinstance(version, str) and ucp.version_newer_than_ours(version):
        return ProtocolError(
            "version_unsupported",
            f"Versão {version} do UCP não suportada; esta loja fala {', '.join(ucp.UCP_VERSIONS)}.",
        )
    return None


def _body(request: HttpRequest) -> Any:
    if not request.body:
        return {}
    return loads_bounded(request.body, max_bytes=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)


def _mapped(result: OperationResult, translate: Translate) -> OperationResult:
    return OperationResult(result.status_code, translate(result.body), result.headers, result.replayed)


def _ucp(
    request: HttpRequest,
    operation: str,
    call: Callable[[RequestContext], OperationResult],
    translate: Translate,
    *,
    path_ids: dict[str, str] | None = None,
) -> HttpResponse:
    if (problem := _version_problem(request)) is not None:
        return _status_2026_01_11(_protocol_error(request, problem))
    return _status_2026_01_11(
        _run(request, operation, lambda ctx: _mapped(call(ctx), _for_version(ctx, translate)), path_ids=path_ids)
    )


def _for_version(ctx: RequestContext, translate: Translate) -> Translate:
    """A platform whose profile is UCP 2026-08-25 gets 2026-08-25's shapes; any other one 2026-01-11's."""
    return ucp.body_2026_08_25 if ucp.platform_ucp_version(ctx.profile) == ucp.UCP_2026_08_25 else translate


def _status_2026_01_11(response: HttpResponse) -> HttpResponse:
    """UCP 2026-01-11's REST status table (checkout-rest.md "Status Codes") has no 422 nor 424: BCP's
    `profile_malformed`/`version_unsupported` (422) and `profile_unreachable` (424) are its 400 there."""
    if response.status_code in (422, 424):
        response.status_code = 400
    return response


def _invalid_json(request: HttpRequest) -> HttpResponse:
    return _protocol_error(request, ProtocolError("invalid_request", "O corpo não é JSON válido (UTF-8)."))


@csrf_exempt
@require_http_methods(["POST"])
def checkout_sessions(request: HttpRequest) -> HttpResponse:
    try:
        body = ucp.checkout_request_to_bcp(_body(request))
    except JsonLimitError:
        return _invalid_json(request)
    return _ucp(request, "create_checkout", lambda ctx: operations.create_checkout(ctx, body), ucp.checkout_to_ucp)


@csrf_exempt
@require_http_methods(["GET", "PUT"])
def checkout_session(request: HttpRequest, checkout_id: str) -> HttpResponse:
    ids = {"checkout_id": checkout_id}
    if request.method == "GET":
        return _ucp(
            request,
            "get_checkout",
            lambda ctx: operations.get_checkout(ctx, checkout_id),
            ucp.checkout_to_ucp,
            path_ids=ids,
        )
    try:
        body = ucp.checkout_request_to_bcp(_body(request))
    except JsonLimitError:
        return _invalid_json(request)
    return _ucp(
        request,
        "update_checkout",
        lambda ctx: operations.update_checkout(ctx, checkout_id, body),
        ucp.checkout_to_ucp,
        path_ids=ids,
    )


@csrf_exempt
@require_http_methods(["POST"])
def complete_checkout(request: HttpRequest, checkout_id: str) -> HttpResponse:
    try:
        body = ucp.complete_request_to_bcp(_body(request))
    except JsonLimitError:
        return _invalid_json(request)
    return _ucp(
        request,
        "complete_checkout",
        lambda ctx: operations.complete_checkout(ctx, checkout_id, body),
        ucp.checkout_to_ucp,
        path_ids={"checkout_id": checkout_id},
    )


@csrf_exempt
@require_http_methods(["POST"])
def cancel_checkout(request: HttpRequest, checkout_id: str) -> HttpResponse:
    try:
        body = _body(request)
    except JsonLimitError:
        return _invalid_json(request)
    return _ucp(
        request,
        "cancel_checkout",
        lambda ctx: operations.cancel_checkout(ctx, checkout_id, body),
        ucp.checkout_to_ucp,
        path_ids={"checkout_id": checkout_id},
    )


@require_safe
def get_order(request: HttpRequest, order_id: str) -> HttpResponse:
    """Not an operation of UCP 2026-01-11's REST binding (orders reach the platform by webhook there); served
    as BCP §7 serves it, in UCP's shape, for platforms that poll."""
    return _ucp(
        request,
        "get_order",
        lambda ctx: operations.get_order(ctx, order_id),
        ucp.order_to_ucp,
        path_ids={"order_id": order_id},
    )


def _order_action(request: HttpRequest, operation: str, order_id: str) -> HttpResponse:
    """Cancel Order and Request Return of our extension `br.dev.bcp.shopping.order_actions` (it keeps its BCP name on
    the UCP face), the same operations as BCP REST, answered with the order in UCP's shape."""
    try:
        body = _body(request)
    except JsonLimitError:
        return _invalid_json(request)
    call = operations.cancel_order if operation == "cancel_order" else operations.request_return
    return _ucp(
        request, operation, lambda ctx: call(ctx, order_id, body), ucp.order_to_ucp, path_ids={"order_id": order_id}
    )


@csrf_exempt
@require_http_methods(["POST"])
def cancel_order(request: HttpRequest, order_id: str) -> HttpResponse:
    return _order_action(request, "cancel_order", order_id)


@csrf_exempt
@require_http_methods(["POST"])
def request_return(request: HttpRequest, order_id: str) -> HttpResponse:
    return _order_action(request, "request_return", order_id)


@csrf_exempt
@require_http_methods(["GET", "POST", "PUT", "PATCH", "DELETE"])
def unknown(request: HttpRequest, path: str) -> HttpResponse:
    return _json({"code": "not_found", "content": "Recurso UCP desconhecido."}, 404, request)


@csrf_exempt
@require_http_methods(["POST"])
def simulate_shipping(request: HttpRequest, order_id: str) -> HttpResponse:
    """The conformance suite's `/testing/simulate-shipping/{order_id}`: ships the whole order as the staff's
    "Registrar envio" does. Absent (404) unless `UCP_SIMULATION_SECRET` is set; 403 unless the request's
    `Simulation-Secret` equals it (compared in constant time)."""
    secret = getattr(settings, "UCP_SIMULATION_SECRET", "")
    if not secret:
        raise Http404("simulation endpoints are off")
    given = request.headers.get("Simulation-Secret", "")
    if not hmac.compare_digest(given.encode(), secret.encode()):
        return _json({"code": "forbidden", "content": "Simulation-Secret ausente ou incorreto."}, 403, request)
    try:
        event = order_ship(order_id=order_id, tracking_number="", carrier="Simulação", actor="ucp-simulation")
    except OrderError as exc:
        return _json({"code": "invalid_request", "content": str(exc)}, 400, request)
    return _json({"status": "shipped", "order_id": order_id, "event_id": event.public_id}, 200, request)
