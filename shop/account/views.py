""" "Minha conta" pages (app_name "account"): thin, the work is in services.py and selectors.py.

The session holds the signed-in e-mail (`SESSION_KEY`), set only by a used sign-in link; the session key is
cycled at sign-in (no fixation) and the whole session flushed at sign-out and after an erasure.
"""

from __future__ import annotations

import json

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from shop.account.selectors import (
    SESSION_KEY,
    account_export,
    account_export_csv,
    account_orders,
    saved_addresses,
    signed_in_email,
)
from shop.account.services import account_erase, account_link_request, account_link_use, link_minutes, request_allowed
from shop.subscriptions.selectors import subscriptions_of_buyer

SESSION_SECONDS = 24 * 3600


def _private(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "private, no-store"
    response["X-Robots-Tag"] = "noindex"
    return response


class LinkForm(forms.Form):
    email = forms.EmailField(
        label=_("E-mail usado nas compras"),
        max_length=254,
        error_messages={"required": _("Informe o e-mail."), "invalid": _("E-mail inválido: confira o endereço.")},
    )


@require_http_methods(["GET", "POST"])
def account_home(request: HttpRequest) -> HttpResponse:
    """Signed in: orders, addresses, data and LGPD. Else the e-mail form that sends the sign-in link."""
    email = signed_in_email(request)
    if email:
        orders = account_orders(email)
        context = {
            "email": email, "orders": orders, "addresses": saved_addresses(orders), "latest": orders[:1],
            "subscriptions": subscriptions_of_buyer(email),
        }  # fmt: skip
        return _private(render(request, "shop/account/home.html", context))
    form = LinkForm(request.POST if request.method == "POST" else None)
    status, sent = 200, False
    if request.method == "POST":
        if form.is_valid():
            address = form.cleaned_data["email"]
            if request_allowed(client=request.META.get("REMOTE_ADDR", ""), email=address):
                account_link_request(email=address)
                sent = True
            else:
                status = 429
                form.add_error(None, _("Muitos pedidos de link. Tente de novo em alguns minutos."))
        else:
            status = 400
    context = {"form": form, "sent": sent, "minutes": link_minutes()}
    return _private(render(request, "shop/account/request.html", context, status=status))


@require_http_methods(["GET", "POST"])
def account_enter(request: HttpRequest, token: str) -> HttpResponse:
    """GET shows one button (a mail scanner opening the link does not use it); POST signs in."""
    if request.method == "GET":
        return _private(render(request, "shop/account/enter.html", {"token": token}))
    email = account_link_use(token=token)
    if email is None:
        return _private(render(request, "shop/account/enter.html", {"token": token, "invalid": True}, status=410))
    request.session.cycle_key()
    request.session[SESSION_KEY] = email
    request.session["account_since"] = timezone.now().isoformat()
    request.session.set_expiry(SESSION_SECONDS)
    return redirect("account:home")


@require_POST
def account_leave(request: HttpRequest) -> HttpResponse:
    request.session.flush()
    return redirect("account:home")


@require_GET
def account_data(request: HttpRequest, fmt: str) -> HttpResponse:
    """LGPD export: a copy of the buyer's data, JSON or CSV, as a download."""
    email = signed_in_email(request)
    if not email:
        return redirect("account:home")
    data = account_export(email)
    if fmt == "csv":
        response = HttpResponse(account_export_csv(data), content_type="text/csv; charset=utf-8")
    else:
        body = json.dumps(data, ensure_ascii=False, indent=2, default=str)
        response = HttpResponse(body, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="meus-dados.{fmt}"'
    return _private(response)


class EraseForm(forms.Form):
    confirm = forms.BooleanField(
        label=_("Entendo que meus dados pessoais serão apagados e que isso não pode ser desfeito."),
        error_messages={"required": _("Marque a confirmação para apagar seus dados.")},
    )


@require_http_methods(["GET", "POST"])
def account_delete(request: HttpRequest) -> HttpResponse:
    email = signed_in_email(request)
    if not email:
        return redirect("account:home")
    form = EraseForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        erased = account_erase(email=email)
        request.session.flush()
        context = {"subscriptions_cancelled": erased["subscriptions_cancelled"]}
        return _private(render(request, "shop/account/deleted.html", context))
    status = 400 if request.method == "POST" else 200
    return _private(render(request, "shop/account/delete.html", {"form": form, "email": email}, status=status))
