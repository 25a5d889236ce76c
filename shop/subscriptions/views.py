"""The subscriber's pages (thin: parse → service → render): subscribe to a plan (Pix Automático, or a card stored
at the gateway: the card number is tokenized in the browser by `static/shop/card_tokenizer.js`, only the token
reaches us), and manage a subscription at `/assinaturas/<token>/` (skip a cycle, change the address, pause, resume,
cancel; a card subscription whose first charge was declined takes another card there). The token is the
capability, like an order's permalink; "Minha conta" (issue 33) can list these links by e-mail."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.functional import Promise
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods

from payments.card.gateway import GatewayError
from payments.card.service import card_gateway_configured
from payments.exceptions import PaymentInputError
from payments.psp import PSPRejected, PSPUnavailable
from shop.models import Subscription, SubscriptionPlan
from shop.subscriptions.offers import plan_offer, plan_terms
from shop.subscriptions.selectors import subscription_overview
from shop.subscriptions.services import (
    SubscriptionInputError,
    SubscriptionStateError,
    subscription_address_change,
    subscription_cancel,
    subscription_card_change,
    subscription_card_start,
    subscription_create,
    subscription_pause,
    subscription_resume,
    subscription_skip_next,
)

ACTIONS = {
    "skip": (subscription_skip_next, _("Pronto: o próximo ciclo foi pulado.")),
    "pause": (subscription_pause, _("Assinatura pausada. Nada será cobrado até você retomar.")),
    "resume": (subscription_resume, _("Assinatura retomada.")),
    "cancel": (subscription_cancel, _("Assinatura cancelada. Nenhuma nova cobrança será feita.")),
}
ADDRESS_SAVED = _("Endereço atualizado: os próximos ciclos vão para ele.")
CARD_CHANGED = _("Cartão trocado: as próximas cobranças vão para ele.")


ADDRESS_LABELS = {
    "postal_code": _("CEP"),
    "street": _("Rua"),
    "number": _("Número"),
    "complement": _("Complemento"),
    "neighborhood": _("Bairro"),
    "city": _("Cidade"),
    "state": _("UF"),
}
BUYER_FIELDS = (
    ("buyer_name", _("Nome completo"), "text"),
    ("buyer_tax_id", _("CPF"), "text"),
    ("buyer_email", _("E-mail"), "email"),
)

CARD_MISSING = "Informe os dados do cartão."
CARD_DOWN = _("A operadora do cartão não respondeu agora; tente de novo em instantes.")


def _card_form() -> dict[str, Any]:
    """What `templates/shop/subscriptions/_card.html` needs: whether a card is taken and which tokenizer runs."""
    pagarme = "pagarme" in getattr(settings, "PAYMENTS_CARD_GATEWAY", "")
    return {
        "enabled": card_gateway_configured(),
        "tokenizer": "pagarme" if pagarme else "sandbox",
        "public_key": getattr(settings, "PAGARME_PUBLIC_KEY", "") if pagarme else "",
    }


def _card_token(data: Any) -> str:
    token = str(data.get("card_token", "")).strip()
    if not token or len(token) > 200:
        raise SubscriptionInputError("card_token", CARD_MISSING)
    return token


def _address(data: Any) -> dict[str, str]:
    return {key: str(data.get(key, "")) for key in ADDRESS_LABELS}


def _address_rows(values: Any, errors: dict[str, str] | None = None) -> list[tuple[str, str | Promise, str, str]]:
    """Each address field's name, label, value and the message of its error ("" when it has none)."""
    errors = errors or {}
    return [
        (name, label, str(values.get(name, "") or ""), errors.get(name, "")) for name, label in ADDRESS_LABELS.items()
    ]


def _buyer_rows(values: Any, errors: dict[str, str] | None = None) -> list[tuple[str, str | Promise, str, str, str]]:
    errors = errors or {}
    return [(name, label, kind, values.get(name, ""), errors.get(name, "")) for name, label, kind in BUYER_FIELDS]


@require_http_methods(["GET", "POST"])
def subscribe_page(request: HttpRequest, plan_id: str) -> HttpResponse:
    plan = SubscriptionPlan.objects.select_related("variant__product").filter(public_id=plan_id, active=True).first()
    if plan is None:
        raise Http404("plano")
    context: dict[str, object] = {
        "plan": plan,
        "offer": plan_offer(plan),
        "terms": plan_terms(plan),
        "buyer_rows": _buyer_rows(request.POST),
        "address_rows": _address_rows(request.POST),
        "card": _card_form(),
    }
    if request.method == "POST":
        by_card = request.POST.get("action") == "pay_card"
        try:
            subscription = subscription_create(
                plan_id=plan.public_id,
                buyer_name=request.POST.get("buyer_name", ""),
                buyer_tax_id=request.POST.get("buyer_tax_id", ""),
                buyer_email=request.POST.get("buyer_email", ""),
                destination=_address(request.POST) if plan.ships_each_cycle else None,
                destination_required=True,
                card_token=_card_token(request.POST) if by_card else "",
                language=get_language() or settings.LANGUAGE_CODE,
            )
        except SubscriptionInputError as exc:
            # every field at fault beside it at once: the buyer does not learn of the next one after fixing this one
            context["error"] = {"field": exc.field, "message": exc.message}
            context["buyer_rows"] = _buyer_rows(request.POST, exc.errors)
            context["address_rows"] = _address_rows(request.POST, exc.errors)
            return render(request, "shop/subscriptions/subscribe.html", context, status=400)
        except GatewayError:
            context["error"] = {"field": "", "message": CARD_DOWN}
            return render(request, "shop/subscriptions/subscribe.html", context, status=503)
        except (PSPUnavailable, PSPRejected, PaymentInputError):
            context["error"] = {"field": "", "message": _("O Pix Automático está indisponível agora; tente de novo.")}
            return render(request, "shop/subscriptions/subscribe.html", context, status=503)
        return redirect("shop:subscription_page", token=subscription.access_token)
    return render(request, "shop/subscriptions/subscribe.html", context)


@require_http_methods(["GET", "POST"])
def subscription_page(request: HttpRequest, token: str) -> HttpResponse:
    subscription = Subscription.objects.filter(access_token=token).first()
    if subscription is None:
        raise Http404("assinatura")
    notice: object = ""
    error: object = ""
    status = 200
    confirm_cancel = False
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            if action == "cancel" and request.POST.get("confirm") != "1":
                # The first press only asks (same page, no JavaScript): cancelling says what happens to the money
                # before it is done, one more press and no retention steps (Decreto 7.962/2013).
                confirm_cancel = True
            elif action == "address":
                subscription_address_change(public_id=subscription.public_id, address=_address(request.POST))
            elif action == "pay_card":  # another card for a first charge that was declined
                subscription_card_start(public_id=subscription.public_id, card_token=_card_token(request.POST))
            elif action == "change_card":  # another card for the next charges
                subscription_card_change(public_id=subscription.public_id, card_token=_card_token(request.POST))
            elif action in ACTIONS:
                ACTIONS[action][0](public_id=subscription.public_id)
            else:
                error, status = _("Ação desconhecida."), 400
        except SubscriptionInputError as exc:
            error, status = exc.message, 400
        except SubscriptionStateError as exc:
            error, status = str(exc), 409
        except PSPUnavailable:
            error, status = _("O banco não respondeu agora; tente de novo em instantes."), 503
        except GatewayError:
            error, status = CARD_DOWN, 503
        if not error and not confirm_cancel:
            return redirect(f"{request.path}?ok={action}")
    else:  # the success notice only after the redirect of an action that succeeded (a refused POST says its error)
        done = request.GET.get("ok", "")
        notice = ADDRESS_SAVED if done == "address" else CARD_CHANGED if done == "change_card" else ""
        if done in ACTIONS:
            notice = ACTIONS[done][1]
    context = {
        **subscription_overview(subscription),
        "notice": notice,
        "error": error,
        "confirm_cancel": confirm_cancel,
        "sandbox": settings.BCP_PIX_SANDBOX,
        "address_rows": _address_rows(subscription.destination),
        "card": _card_form(),
    }
    return render(request, "shop/subscriptions/page.html", context, status=status)
