"""HTTP control API of the sandbox PSP (PIX.md §4.3), mounted under `/_sandbox/psp/` when BCP_PIX_SANDBOX.

Guarded by the sandbox secret: header `BCP-Sandbox-Secret: <PIX_SANDBOX_WEBHOOK_SECRET>`. A same-site
browser form with a valid CSRF token is accepted too (the "pay" button beside the QR): the sandbox itself
only runs with DEBUG on, or when explicitly forced (BCP_PIX_SANDBOX_FORCE) for a demo/staging site.

Programs (the secret header, or JSON) get the API Pix problem JSON; a person who pressed a form button gets
a page in Portuguese saying what happened (an expired Pix, a charge already paid…) with the way back.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.shortcuts import render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext_lazy as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from payments.boleto.codes import barcode_from_line, itf_svg, line_display
from payments.card.gateway import GatewayNotFound
from payments.card.models import SandboxCardCharge
from payments.card.sandbox import sandbox_boleto_pay
from payments.card.webhook import card_webhook_store
from payments.money import decimal_to_cents
from payments.psp.base import parse_datetime
from payments.qr import qr_svg
from payments.sandbox import bodies, recurring, services
from payments.sandbox.models import SandboxCob

SECRET_HEADER = "BCP-Sandbox-Secret"  # noqa: S105 - a header name


def _enabled() -> None:
    if not settings.BCP_PIX_SANDBOX:
        raise Http404("sandbox disabled")


def _authorized(request: HttpRequest) -> bool:
    if _by_secret(request):
        return True
    if _by_form(request):
        return CsrfViewMiddleware(lambda r: HttpResponse()).process_view(request, None, (), {}) is None
    return False


def _by_secret(request: HttpRequest) -> bool:
    secret = settings.PIX_SANDBOX_WEBHOOK_SECRET
    given = request.headers.get(SECRET_HEADER, "")
    return bool(secret and given and hmac.compare_digest(given.encode(), secret.encode()))


def _by_form(request: HttpRequest) -> bool:
    return request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data")


def _for_a_person(request: HttpRequest) -> bool:
    """A browser form without the secret: a person pressed a button, so answers are pages, not JSON."""
    return _by_form(request) and not _by_secret(request)


# What a person reads for each API Pix problem name (the JSON keeps the PSP's own names and English detail).
PERSON_MESSAGES = {
    "CobExpirada": _(
        "Este Pix expirou: o app do banco não aceita mais o pagamento. Volte à página do Pix e gere um novo Pix."
    ),
    "CobOperacaoInvalida": _("Esta cobrança não pode ser paga: ela já foi paga ou foi removida."),
    "CobNaoEncontrado": _("Cobrança Pix não encontrada no ambiente de testes."),
    "CobVNaoEncontrada": _("Cobrança Pix não encontrada no ambiente de testes."),
    "PixNaoEncontrado": _("Pix não encontrado no ambiente de testes."),
    "DevolucaoNaoEncontrada": _("Devolução não encontrada no ambiente de testes."),
    "DevolucaoOperacaoInvalida": _("A devolução passaria do valor do Pix."),
    "BoletoNaoEncontrado": _("Boleto não encontrado no ambiente de testes."),
    "forbidden": _("O formulário expirou. Volte, recarregue a página e tente de novo."),
}


def _person_page(request: HttpRequest, *, status: int, name: str, back: str) -> HttpResponse:
    message = PERSON_MESSAGES.get(name, _("O ambiente de testes recusou a operação: confira os dados e tente de novo."))
    back = back if back and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}) else ""
    return render(request, "payments/sandbox_error.html", {"message": message, "back": back}, status=status)


def _params(request: HttpRequest) -> dict[str, Any]:
    params: dict[str, Any] = dict(request.GET.items())
    if request.content_type == "application/json" and request.body:
        body = json.loads(request.body)
        if not isinstance(body, dict):
            raise ValueError("body must be a JSON object")
        params.update(body)
    else:
        params.update({key: value for key, value in request.POST.items() if key != "csrfmiddlewaretoken"})
    return params


def _flag(value: Any) -> bool:
    return str(value).lower() in {"1", "true", "yes", "on"}


def control(view: Callable[..., dict[str, Any]]) -> Callable[..., HttpResponse]:
    @csrf_exempt
    @require_POST
    def wrapper(request: HttpRequest, **kwargs: str) -> HttpResponse:
        _enabled()
        person = _for_a_person(request)
        back = request.POST.get("next", "") if person else ""
        if not _authorized(request):
            if person:
                return _person_page(request, status=403, name="forbidden", back=back)
            return JsonResponse({"error": "forbidden", "detail": f"missing or wrong {SECRET_HEADER}"}, status=403)
        try:
            params = _params(request)
            result = view(params, **kwargs)
        except ValueError as exc:
            if person:
                return _person_page(request, status=400, name="invalid_request", back=back)
            return JsonResponse({"error": "invalid_request", "detail": str(exc)}, status=400)
        except services.SandboxError as exc:
            if person:
                return _person_page(request, status=exc.status, name=exc.name, back=back)
            return JsonResponse(exc.problem(), status=exc.status)
        nxt = params.get("next", "")
        if nxt and url_has_allowed_host_and_scheme(nxt, allowed_hosts={request.get_host()}):
            return HttpResponseRedirect(nxt)
        return JsonResponse(result)

    wrapper.__name__ = view.__name__
    return wrapper


def pay_options(params: dict[str, Any]) -> services.PayOptions:
    amount = params.get("amount")
    at = params.get("at")
    try:
        delay_s = int(params.get("delay_s", 0) or 0)
    except (TypeError, ValueError):
        raise ValueError("delay_s: expected an integer number of seconds") from None
    return services.PayOptions(
        amount=decimal_to_cents(str(amount)) if amount not in (None, "") else None,
        at=parse_datetime(at, field_name="at") if at else None,
        payer_message=str(params.get("payer_message", "")),
        deliver=str(params.get("deliver", "once") or "once"),
        delay_s=delay_s,
        wrong_amount=_flag(params.get("wrong_amount", "")),
        batch_with=str(params.get("batch_with", "") or ""),
        refund_first=_flag(params.get("refund_first", "")),
    )


@control
def pay(params: dict[str, Any], *, txid: str) -> dict[str, Any]:
    paid = services.pay(txid=txid, options=pay_options(params))
    return {"pix": [bodies.pix_item(pix) for pix in paid]}


@control
def expire(params: dict[str, Any], *, txid: str) -> dict[str, Any]:
    return bodies.cob_body(services.expire(txid=txid))


@control
def redeliver(params: dict[str, Any]) -> dict[str, Any]:
    e2eid = params.get("e2eid")
    if not isinstance(e2eid, str) or not e2eid:
        raise ValueError("e2eid: required")
    return {"redelivered": bodies.pix_item(services.redeliver(e2eid=e2eid))}


@control
def refund_settle(params: dict[str, Any], *, e2eid: str, refund_id: str) -> dict[str, Any]:
    status = str(params.get("status", "DEVOLVIDO"))
    return bodies.refund_body(services.refund_settle(e2eid=e2eid, refund_id=refund_id, status=status))


# --- Pix Automático: the payer's bank app and the due date, played from the subscription page ------------------


@control
def rec_authorize(params: dict[str, Any], *, id_rec: str) -> dict[str, Any]:
    """The "Autorizar no sandbox" button: the payer approves the recurrence in the bank app (notified to `/rec`)."""
    return recurring.authorize(id_rec)


@control
def rec_payer_cancel(params: dict[str, Any], *, id_rec: str) -> dict[str, Any]:
    """The payer cancels the authorization in the bank app (notified to `/rec`)."""
    return recurring.payer_cancel(id_rec)


@control
def cobr_settle(params: dict[str, Any], *, txid: str) -> dict[str, Any]:
    """The cycle's due date: the attempt paid (`paid=1`, default) or refused (`paid=0`), notified to `/cobr`."""
    return recurring.cobr_settle(txid, paid=_flag(params.get("paid", "1")))


# The sandbox gateway's charge codes as the buyer reads them on the boleto (QA walk: "Situação: pending").
BOLETO_STATUS_WORDS = {
    "pending": _("Aguardando pagamento"),
    "paid": _("Pago"),
    "failed": _("Falhou"),
    "canceled": _("Cancelado"),
}


@require_GET
def charge_page(request: HttpRequest, txid: str) -> HttpResponse:
    """Developer page: the sandbox's view of a charge with its QR and "pay" buttons."""
    _enabled()
    cob = SandboxCob.objects.filter(txid=txid).first()
    if cob is None:
        raise Http404("unknown txid")
    context = {"cob": cob, "body": bodies.cob_body(cob), "qr": qr_svg(cob.br_code)}
    return render(request, "payments/sandbox_charge.html", context)


@control
def boleto_pay(params: dict[str, Any], *, charge_id: str) -> dict[str, Any]:
    """The bank pays a sandbox boleto; the gateway then "posts" its `charge.paid` webhook (into the inbox,
    processed like Pagar.me's: read back with `GET /charges/{id}`, settled once)."""
    try:
        charge = sandbox_boleto_pay(charge_id)
    except GatewayNotFound:
        raise services.SandboxError(404, "BoletoNaoEncontrado", f"no sandbox boleto {charge_id}") from None
    hook = {
        "id": f"hook_sbx_{secrets.token_hex(8)}",
        "type": "charge.paid",
        "created_at": timezone.now().isoformat(),
        "data": {"id": charge.charge_id, "status": charge.status, "payment_method": "boleto",
                 "order": {"id": charge.order_id, "code": charge.code}},
    }  # fmt: skip
    stored = card_webhook_store(hook, json.dumps(hook).encode())
    return {"charge": {"id": charge.charge_id, "status": charge.status, "paid_amount": charge.paid_amount}, **stored}


@require_GET
def boleto_page(request: HttpRequest, charge_id: str) -> HttpResponse:
    """The sandbox boleto itself (what the gateway's PDF shows): line, barcode, amount, due date."""
    _enabled()
    row = SandboxCardCharge.objects.filter(charge_id=charge_id, payment_method="boleto").first()
    if row is None:
        raise Http404("unknown boleto")
    context = {
        "row": row,
        "status": BOLETO_STATUS_WORDS.get(row.status, row.status),
        "line": line_display(row.boleto_line),
        "barcode_svg": itf_svg(barcode_from_line(row.boleto_line)),
    }
    return render(request, "payments/sandbox_boleto.html", context)
