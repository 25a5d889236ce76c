"""The sandbox PSP's Bacen-shaped API Pix over HTTP (PIX.md §4.3: same JSON shapes), under `/_sandbox/psp/api/`.

Lets `BacenPixPSP` itself run against the sandbox (PIX_PSP_BASE_URL={BCP_PUBLIC_URL}/_sandbox/psp/api,
PIX_PSP_TOKEN_URL=…/oauth/token, client secret = PIX_SANDBOX_WEBHOOK_SECRET). No mTLS here.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from payments.psp.base import parse_datetime
from payments.sandbox import bodies, services
from payments.sandbox.views import _enabled


def _token() -> str:
    secret = settings.PIX_SANDBOX_WEBHOOK_SECRET.encode()
    return "sbx." + hmac.new(secret, b"sandbox-api-token", hashlib.sha256).hexdigest()


def _problem(status: int, name: str, detail: str) -> JsonResponse:
    return JsonResponse(services.SandboxError(status, name, detail).problem(), status=status)


@csrf_exempt
def token(request: HttpRequest) -> HttpResponse:
    _enabled()
    if request.method != "POST":
        return _problem(405, "MetodoNaoPermitido", "POST only")
    scheme, _, encoded = request.headers.get("Authorization", "").partition(" ")
    try:
        _client_id, _, secret = base64.b64decode(encoded).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        secret = ""
    if scheme != "Basic" or not hmac.compare_digest(secret.encode(), settings.PIX_SANDBOX_WEBHOOK_SECRET.encode()):
        return JsonResponse({"error": "invalid_client"}, status=401)
    scope = request.POST.get("scope", "")
    return JsonResponse({"access_token": _token(), "token_type": "Bearer", "expires_in": 3600, "scope": scope})


def api(view: Callable[..., tuple[int, Any]]) -> Callable[..., HttpResponse]:
    @csrf_exempt
    def wrapper(request: HttpRequest, **kwargs: str) -> HttpResponse:
        _enabled()
        given = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if not hmac.compare_digest(given.encode(), _token().encode()):
            return _problem(401, "AcessoNegado", "missing or invalid Bearer token")
        try:
            body = json.loads(request.body) if request.body else {}
            status, payload = view(request, body, **kwargs)
        except services.SandboxError as exc:
            return JsonResponse(exc.problem(), status=exc.status)
        except ValueError as exc:
            return _problem(400, "RequisicaoInvalida", str(exc))
        return JsonResponse(payload, status=status, safe=False)

    wrapper.__name__ = view.__name__
    return wrapper


def _charge(request: HttpRequest, body: dict[str, Any], txid: str, kind: str) -> tuple[int, Any]:
    if request.method == "PUT":
        put = services.cobv_put if kind == "cobv" else services.cob_put
        return 201, bodies.cob_body(put(txid=txid, body=body))
    if request.method == "GET":
        return 200, bodies.cob_body(services.get_cob(txid, kind=kind))
    if request.method == "PATCH":
        if body.get("status") != "REMOVIDA_PELO_USUARIO_RECEBEDOR":
            raise services.SandboxError(400, "CobPayloadInvalido", "only status REMOVIDA_PELO_USUARIO_RECEBEDOR")
        return 200, bodies.cob_body(services.cob_patch_removed(txid=txid, kind=kind))
    raise services.SandboxError(405, "MetodoNaoPermitido", request.method or "")


@api
def cob(request: HttpRequest, body: dict[str, Any], *, txid: str) -> tuple[int, Any]:
    return _charge(request, body, txid, "cob")


@api
def cobv(request: HttpRequest, body: dict[str, Any], *, txid: str) -> tuple[int, Any]:
    """`PUT/GET/PATCH /cobv/{txid}`: Pix com vencimento, same shapes as Bacen's CobV."""
    return _charge(request, body, txid, "cobv")


@api
def devolucao(request: HttpRequest, body: dict[str, Any], *, e2eid: str, refund_id: str) -> tuple[int, Any]:
    if request.method == "PUT":
        return 201, bodies.refund_body(services.refund_put(e2eid=e2eid, refund_id=refund_id, body=body))
    if request.method == "GET":
        return 200, bodies.refund_body(services.get_refund(e2eid=e2eid, refund_id=refund_id))
    raise services.SandboxError(405, "MetodoNaoPermitido", request.method or "")


@api
def pix_list(request: HttpRequest, body: dict[str, Any]) -> tuple[int, Any]:
    start = parse_datetime(request.GET.get("inicio"), field_name="inicio")
    end = parse_datetime(request.GET.get("fim"), field_name="fim")
    items = services.list_received(start=start, end=end)
    paging = {
        "paginaAtual": 0,
        "itensPorPagina": len(items),
        "quantidadeDePaginas": 1,
        "quantidadeTotalDeItens": len(items),
    }
    return 200, {
        "parametros": {"inicio": request.GET["inicio"], "fim": request.GET["fim"], "paginacao": paging},
        "pix": items,
    }


@api
def webhook(request: HttpRequest, body: dict[str, Any], *, key: str) -> tuple[int, Any]:
    # Deliveries always go to PIX_SANDBOX_WEBHOOK_URL; registration is accepted and ignored.
    if not isinstance(body.get("webhookUrl"), str):
        raise services.SandboxError(400, "WebhookPayloadInvalido", "webhookUrl is required")
    return 200, {}
