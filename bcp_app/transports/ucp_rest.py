"""UCP's REST binding (2026-01-11, `source/services/shopping/openapi.json` at the spec's tag) under `/ucp/v1`; a
platform whose profile is written in UCP 2026-08-25 is answered in 2026-08-25's shapes (`ucp.body_2026_08_25`).

The same operations as BCP REST (`bcp_app/service/operations`), through the same `_run` (identity, negotiation,
idempotency, rate limits): each view renames the UCP request into BCP's (`bcp_app/protocol/ucp.py`), calls the
operation and renames its result back. The platform names itself with `UCP-Agent` (read like `BCP-Agent`); a
`version` parameter on it newer than ours is refused with `version_unsupported` (overview "Version Negotiation").
Two answers differ from BCP's for a 2026-01-11 platform only, as 2026-01-11 words them: its profile need not name
checkout to be served the core checkout (`negotiation.with_core_checkout_2026_01_11`), and an operation refused for
the checkout's status is a 409 (`ucp.refused_for_status`).

Also here: the UCP conformance suite's simulation endpoint, present only when `UCP_SIMULATION_SECRET` is set.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable
from dataclasses import replace
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
from bcp_app.service.negotiation import with_core_checkout_2026_01_11
from bcp_app.transports.rest import _json, _run, json_body
from bcp_app.transports.well_known import profile_response
from orders.errors import OrderError
from orders.services import order_ship

logger = logging.getLogger("bcp_app.transports.ucp_rest")

Translate = Callable[[dict[str, Any]], dict[str, Any]]
Renames = tuple[tuple[str, str], ...]
UCP_AGENT = "UCP-Agent"  # how a UCP platform names its profile (checkout-rest.md "Specific Header Requirements")
CHECKOUT_OPERATIONS = frozenset(
    {"create_checkout", "get_checkout", "update_checkout", "complete_checkout", "cancel_checkout"}
)


@csrf_exempt  # a POST is refused by require_safe with 405, not by the CSRF check with its HTML 403 page
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


def _mapped(result: OperationResult, translate: Translate) -> OperationResult:
    """The operation's result in UCP's shape. An unknown (or another platform's) checkout or order is BCP's
    `not_found` Error Response with 200; checkout-rest.md "Status Codes" at v2026-01-11 has `404 Not Found`: "The
    requested resource could not be found"."""
    status = result.status_code
    messages = result.body.get("messages") if result.is_error_response else None
    if isinstance(messages, list) and messages and isinstance(messages[0], dict):
        status = 404 if messages[0].get("code") == "not_found" else status
    return OperationResult(status, translate(result.body), result.headers, result.replayed)


def _face_version(request: HttpRequest) -> str:
    """The UCP version a refused request is answered in: the `version` the platform put on `UCP-Agent` when it is
    one we serve, else 2026-01-11 (the face's default, as `_for_version`)."""
    try:
        member = parse_dictionary((request.headers.get("UCP-Agent") or "").strip()).get("profile")
    except SFVError:
        return ucp.UCP_2026_01_11
    version = member.params.get("version") if isinstance(member, Item) else None
    return version if version in ucp.UCP_VERSIONS else ucp.UCP_2026_01_11


def _error(request: HttpRequest, exc: ProtocolError) -> HttpResponse:
    """A protocol error on the UCP face: BCP's `{code, content}` with the `ucp` member every UCP response carries
    (`ucp.protocol_error_envelope`), and 2026-01-11's status table (`_status_2026_01_11`)."""
    body = {"ucp": ucp.protocol_error_envelope(_face_version(request)), **exc.body()}
    return _status_2026_01_11(_json(body, exc.http_status, request, exc.http_headers()))


def _unknown_resource(request: HttpRequest) -> HttpResponse:
    body = {"ucp": ucp.protocol_error_envelope(_face_version(request)), "code": "not_found"}
    return _json({**body, "content": "Recurso UCP desconhecido."}, 404, request)


def _ucp(
    request: HttpRequest,
    operation: str,
    call: Callable[[RequestContext, Any], OperationResult],
    translate: Translate,
    *,
    path_ids: dict[str, str] | None = None,
    read_body: bool = True,
    renames: Callable[[Any], Renames] | None = None,
) -> HttpResponse:
    """Read the body (too large, not JSON: refused here, with BCP REST's `json_body`), run the operation through
    BCP REST's `_run` with `UCP-Agent` as the agent header, and answer in UCP's shape. `renames(body)`: BCP member
    paths the UCP request names otherwise (`ucp.COMPLETE_RENAMES`), for the messages and errors that name one."""
    try:
        body = json_body(request) if read_body else {}
    except ProtocolError as exc:
        return _error(request, exc)
    if (problem := _version_problem(request)) is not None:
        return _error(request, problem)
    names = renames(body) if renames is not None else ()

    def run(ctx: RequestContext) -> OperationResult:
        if operation in CHECKOUT_OPERATIONS:
            ctx = replace(ctx, capabilities=with_core_checkout_2026_01_11(ctx.profile, ctx.capabilities))
        try:
            result = call(ctx, body)
        except ProtocolError as exc:
            if not names:
                raise
            raise replace(exc, content=ucp.renamed_text(exc.content, names)) from exc
        to_ucp = _for_version(ctx, translate)
        mapped = _mapped(result, (lambda b: ucp.renamed_messages(to_ucp(b), names)) if names else to_ucp)
        if to_ucp is translate and ucp.refused_for_status(result.body):
            return replace(mapped, status_code=409)
        return mapped

    return _status_2026_01_11(_run(request, operation, run, path_ids=path_ids, agent=UCP_AGENT, on_error=_error))


def _for_version(ctx: RequestContext, translate: Translate) -> Translate:
    """A platform whose profile is UCP 2026-08-25 gets 2026-08-25's shapes; any other one 2026-01-11's."""
    return ucp.body_2026_08_25 if ucp.platform_ucp_version(ctx.profile) == ucp.UCP_2026_08_25 else translate


def _status_2026_01_11(response: HttpResponse) -> HttpResponse:
    """UCP 2026-01-11's REST status table (checkout-rest.md "Status Codes") has no 422 nor 424: BCP's
    `profile_malformed`/`version_unsupported` (422) and `profile_unreachable` (424) are its 400 there."""
    if response.status_code in (422, 424):
        response.status_code = 400
    return response


def _checkout_write(operation: Callable[..., OperationResult], *ids: str) -> Callable[..., OperationResult]:
    """Create/Update: the UCP body renamed into BCP's, with `ucp.with_request_warnings` (a non-BRL `currency`…)."""

    def call(ctx: RequestContext, body: Any) -> OperationResult:
        result = operation(ctx, *ids, ucp.checkout_request_to_bcp(body))
        out = ucp.with_request_warnings(result.body, body)
        return OperationResult(result.status_code, out, result.headers, result.replayed)

    return call


@csrf_exempt
@require_http_methods(["POST"])
def checkout_sessions(request: HttpRequest) -> HttpResponse:
    return _ucp(request, "create_checkout", _checkout_write(operations.create_checkout), ucp.checkout_to_ucp)


@csrf_exempt
@require_http_methods(["GET", "PUT"])
def checkout_session(request: HttpRequest, checkout_id: str) -> HttpResponse:
    ids = {"checkout_id": checkout_id}
    if request.method == "GET":
        return _ucp(
            request,
            "get_checkout",
            lambda ctx, _: operations.get_checkout(ctx, checkout_id),
            ucp.checkout_to_ucp,
            path_ids=ids,
            read_body=False,
        )
    return _ucp(
        request,
        "update_checkout",
        _checkout_write(operations.update_checkout, checkout_id),
        ucp.checkout_to_ucp,
        path_ids=ids,
    )


def _complete_renames(body: Any) -> Renames:
    """A 2026-01-11 Complete names its instrument `payment_data`; BCP's errors name `payment.instruments[0]`."""
    return ucp.COMPLETE_RENAMES if isinstance(body, dict) and "payment_data" in body else ()


@csrf_exempt
@require_http_methods(["POST"])
def complete_checkout(request: HttpRequest, checkout_id: str) -> HttpResponse:
    return _ucp(
        request,
        "complete_checkout",
        lambda ctx, body: operations.complete_checkout(ctx, checkout_id, ucp.complete_request_to_bcp(body)),
        ucp.checkout_to_ucp,
        path_ids={"checkout_id": checkout_id},
        renames=_complete_renames,
    )


@csrf_exempt
@require_http_methods(["POST"])
def cancel_checkout(request: HttpRequest, checkout_id: str) -> HttpResponse:
    return _ucp(
        request,
        "cancel_checkout",
        lambda ctx, body: operations.cancel_checkout(ctx, checkout_id, body),
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
        lambda ctx, _: operations.get_order(ctx, order_id),
        ucp.order_to_ucp,
        path_ids={"order_id": order_id},
        read_body=False,
    )


def _order_action(request: HttpRequest, operation: str, order_id: str) -> HttpResponse:
    """Cancel Order and Request Return of our extension `br.dev.bcp.shopping.order_actions` (it keeps its BCP name on
    the UCP face), the same operations as BCP REST, answered with the order in UCP's shape."""
    action = operations.cancel_order if operation == "cancel_order" else operations.request_return
    return _ucp(
        request,
        operation,
        lambda ctx, body: action(ctx, order_id, body),
        ucp.order_to_ucp,
        path_ids={"order_id": order_id},
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
    return _unknown_resource(request)


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
