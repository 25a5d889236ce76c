"""Storefront cart and one-page checkout (thin: session/forms → shop.checkout.services → templates).

The "Pagar com Pix" page and its status poll are in `pix_page.py`.
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from kernel.br_validation import email_invalid, email_valid
from kernel.json_limits import control_in
from shop.account.selectors import checkout_defaults, signed_in_email
from shop.cart import (
    CHECKOUT_KEY,
    TYPED_QUANTITY_MAX,
    CartError,
    CartLine,
    CartPage,
    cart_adopt,
    cart_bind_checkout,
    cart_clear,
    cart_coupons,
    cart_page,
    cart_set,
    cart_set_coupons,
    cart_sync_quantities,
)
from shop.cart import (
    cart_add as cart_add_item,
)
from shop.checkout.core import input_from_checkout
from shop.checkout.evaluate import CheckoutInputError, Evaluation, evaluate
from shop.checkout.fulfillment import DEST0, SEL_OPT, shipping_config_load
from shop.checkout.pricing import (
    card_offered,
    coupons_evaluate,
    coupons_load,
    installment_policy,
    pix_discount_bp,
)
from shop.checkout.selectors import CheckoutView, checkout_view, require_access
from shop.checkout.services import (
    CheckoutCreateImpossible,
    CheckoutNotFound,
    checkout_complete,
    checkout_create,
    checkout_email_save,
    checkout_get,
    checkout_pix_refresh,
    checkout_update,
)
from shop.checkout.types import (
    AGENT_COMPLETE_FORBIDDEN,
    STATUS_COMPLETED,
    STATUS_IN_PROGRESS,
    STATUS_INCOMPLETE,
    STATUS_READY,
    TERMINAL_STATUSES,
    CheckoutInput,
    CheckoutMessage,
    CheckoutResult,
    CompleteInput,
    InstrumentInput,
    LineInput,
    PaymentInput,
)
from shop.checkout.web.boleto_choice import boleto_context, boleto_instrument
from shop.checkout.web.card_page import card_context, card_instrument, in_progress_redirect, is_card, with_token
from shop.checkout.web.confirm import before_charging
from shop.checkout.web.forms import (
    ADDRESS_FIELDS,
    CheckoutForm,
    cpf_needed,
    field_for_path,
    initial_from_view,
    standing_codes,
)
from shop.checkout.web.payment_choice import payment_methods
from shop.freight.parcels import FreightLine
from shop.models import Cart, Checkout
from shop.storefront.csrf import lazy_csrf_token
from shop.storefront.page_cache import prefetch_page_reads
from shop.storefront.paths import path_with
from shop.storefront.views import freight_context

STOREFRONT_INSTRUMENT_ID = "pix_storefront"


def _pix_instrument() -> InstrumentInput:
    return InstrumentInput(id=STOREFRONT_INSTRUMENT_ID, handler_id=settings.PIX_HANDLER_ID, type="pix")


def _back(request: HttpRequest, default: str) -> str:
    referer = request.headers.get("Referer", "")
    if referer and url_has_allowed_host_and_scheme(referer, allowed_hosts={request.get_host()}):
        return referer
    return default


def _with_query(url: str, **params: str) -> str:
    """`url` with `params` set in its query string (the others kept)."""
    parts = urlsplit(url)
    query = QueryDict(parts.query, mutable=True)
    for name, value in params.items():
        query[name] = value
    return urlunsplit(parts._replace(query=query.urlencode()))


def _language(request: HttpRequest) -> str:
    """The storefront language the buyer is reading (engine messages follow it)."""
    return getattr(request, "LANGUAGE_CODE", "") or settings.LANGUAGE_CODE


def _local(url: str) -> str:
    """The path of one of our absolute URLs (BCP_PUBLIC_URL may differ from the request host)."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


# --- cart ------------------------------------------------------------------------------------------------


def _say_removed(request: HttpRequest, cart: CartPage) -> None:
    """Lines taken off sale while in the cart leave it; the buyer is told which (once: they are gone now)."""
    for title in cart.removed:
        messages.warning(request, _("%(title)s saiu de venda e não está mais no seu carrinho.") % {"title": title})


def _say_sold_out(request: HttpRequest, lines: list[CartLine]) -> None:
    """A line whose stock ran out while in the cart (QA walk: the cart listed it, priced, without a word, and only
    the checkout said "está sem estoque" at "Pagar"): said at once, with what to do (the variants are read already)."""
    for line in lines:
        if line.variant.stock <= 0 and not line.variant.allow_backorder:
            messages.warning(
                request,
                _("%(title)s está sem estoque: remova do carrinho para finalizar a compra.")
                % {"title": line.variant.display_title},
            )


@require_GET
def cart_detail(request: HttpRequest) -> HttpResponse:
    prefetch_page_reads()
    cart = cart_page(request.session)
    _say_removed(request, cart)
    lines = cart.lines
    _say_sold_out(request, lines)
    subtotal = sum(line.amount for line in lines)
    codes = tuple(cart.coupons)
    evaluation = coupons_evaluate(
        codes=codes,
        subtotal=subtotal,
        email="",
        now=timezone.now(),
        loaded=coupons_load(codes, email="", exclude_checkout_pk=None),
    )
    coupon_notes = {m.path: m for m in evaluation.messages}
    coupons = [(code, coupon_notes.get(f"$.discounts.codes[{i}]")) for i, code in enumerate(codes)]
    # A refused code is shown once with its reason, then leaves the cart (it would re-error on every action).
    kept = [code for code, note in coupons if note is None or note.type == "info"]
    if len(kept) != len(codes):
        cart_set_coupons(request.session, kept)
    # Same subtotal as the engine's free-shipping rule: all items after discounts.
    freight = freight_context(
        request, subtotal=subtotal - evaluation.total, action=request.path, hidden=[],
        lines=[FreightLine(line.variant.sku, line.quantity) for line in lines],
    )  # fmt: skip
    estimate = subtotal - evaluation.total
    return render(
        request,
        "shop/cart/cart.html",
        {
            "lines": lines,
            "subtotal": subtotal,
            "discount": evaluation.total,
            "estimate": estimate,
            # The summary below the coupons is kept per its inputs ({% memo %}): these two stand for what its
            # `{% pix_price %}` and installments line read of the store (cached row) and settings.
            "pix_bp": pix_discount_bp(),
            "card_policy": (card_offered(), installment_policy()),
            "coupons": coupons,
            "show_freight": any(line.variant.product.requires_shipping for line in lines),
            # the badge: the lines just read (cart_page dropped the unsellable ones), no second query
            "cart_count": sum(line.quantity for line in lines),
            "csrf_token": lazy_csrf_token(request),  # Django's token, its mask drawn at less cost
            **freight,
        },
    )


@require_GET
def cart_open(request: HttpRequest, cart_id: str) -> HttpResponse:
    """A cart's `continue_url` (BCP cart capability): the browser takes that cart as its own and shows it."""
    cart = Cart.objects.filter(public_id=cart_id, status=Cart.STATUS_ACTIVE, expires_at__gt=timezone.now()).first()
    if cart is None:
        messages.info(request, _("Este carrinho não existe mais ou expirou."))
        return redirect("checkout:cart")
    cart_adopt(request.session, cart)
    return redirect("checkout:cart")


@require_POST
def cart_add(request: HttpRequest) -> HttpResponse:
    try:
        change = cart_add_item(
            request.session, sku=request.POST.get("sku", ""), quantity=request.POST.get("quantity", "1")
        )
    except CartError as exc:
        messages.error(request, exc.message)
        back = _back(request, reverse("checkout:cart"))
        if exc.field == "quantity":  # the product page shows the quantity typed beside its error, not 1 again
            back = _with_query(back, quantidade=request.POST.get("quantity", "")[:TYPED_QUANTITY_MAX])
        return redirect(back)
    if change.capped:
        messages.warning(request, change.capped_message)
    else:
        messages.success(request, _("%(title)s adicionado ao carrinho.") % {"title": change.variant.display_title})
    return redirect("checkout:cart")


@require_POST
def cart_change(request: HttpRequest) -> HttpResponse:
    quantity = "0" if "remove" in request.POST else request.POST.get("quantity", "")
    try:
        change = cart_set(request.session, sku=request.POST.get("sku", ""), quantity=quantity)
    except CartError as exc:
        messages.error(request, exc.message)
    else:
        if change is not None and change.capped:
            messages.warning(request, change.capped_message)
    return redirect("checkout:cart")


@require_POST
def cart_coupon(request: HttpRequest) -> HttpResponse:
    codes = cart_coupons(request.session)
    if "remove" in request.POST:
        codes = [c for c in codes if c.upper() != request.POST["remove"].strip().upper()]
    else:
        code = request.POST.get("code", "").strip()
        if not code:
            messages.error(request, _("Informe o código do cupom."))
            return redirect("checkout:cart")
        codes.append(code)
    cart_set_coupons(request.session, codes)
    return redirect("checkout:cart")


# --- checkout --------------------------------------------------------------------------------------------


def _cart_input_lines(checkout: Checkout | None, lines: list[CartLine]) -> tuple[LineInput, ...]:
    by_sku = {line.sku: line.public_id for line in checkout.lines.all()} if checkout is not None else {}
    return tuple(
        LineInput(sku=line.variant.sku, quantity=line.quantity, line_id=by_sku.get(line.variant.sku)) for line in lines
    )  # type: ignore[arg-type]


@require_http_methods(["GET", "POST"])
def checkout_start(request: HttpRequest) -> HttpResponse:
    """From the session cart to the engine: create the storefront checkout or refresh its lines."""
    cart = cart_page(request.session)  # its lines and codes in one statement
    _say_removed(request, cart)
    if not cart.lines:
        messages.info(request, _("Seu carrinho está vazio."))
        return redirect("checkout:cart")
    codes = tuple(cart.coupons)
    existing_id = request.session.get(CHECKOUT_KEY)
    checkout = Checkout.objects.filter(public_id=existing_id).prefetch_related("lines").first() if existing_id else None
    if checkout is not None and checkout.status == STATUS_IN_PROGRESS:
        return in_progress_redirect(checkout)
    if checkout is not None and checkout.status not in TERMINAL_STATUSES:
        state = input_from_checkout(checkout, list(checkout.lines.all()))
        data = replace(state, lines=_cart_input_lines(checkout, cart.lines), discount_codes=codes)
        result = checkout_update(checkout_id=checkout.public_id, data=data, language=_language(request))
        _sync_cart(request, result.checkout)
        return redirect("checkout:resume", checkout_id=checkout.public_id)
    if not request.session.session_key:
        request.session.save()
    try:
        result = checkout_create(
            data=CheckoutInput(lines=_cart_input_lines(None, cart.lines), discount_codes=codes),
            session_key=request.session.session_key or "",
            language=_language(request),
        )
    except CheckoutCreateImpossible as exc:
        for message in exc.messages:
            messages.error(request, message.content)
        return redirect("checkout:cart")
    cart_bind_checkout(request.session, result.checkout.public_id)
    _sync_cart(request, result.checkout)
    return redirect("checkout:resume", checkout_id=result.checkout.public_id)


def _sync_cart(request: HttpRequest, checkout: Checkout) -> None:
    """The engine may lower quantities to the stock on sale; the cart (and its badge) follows it."""
    if checkout.session_key and checkout.session_key == request.session.session_key:
        cart_sync_quantities(request.session, [(line.sku, line.quantity) for line in checkout.lines.all()])


def _render_checkout(
    request: HttpRequest,
    checkout: Checkout,
    form: CheckoutForm,
    general: list[CheckoutMessage],
    *,
    status: int = 200,
    view: CheckoutView | None = None,
) -> HttpResponse:
    view = view if view is not None else checkout_view(checkout, page=True)
    line_messages: dict[int, list[CheckoutMessage]] = {}
    for message in view.messages:
        if message.path.startswith("$.line_items[") and message.type != "info":
            index = int(message.path[len("$.line_items[") :].split("]")[0])
            line_messages.setdefault(index, []).append(message)
    lines = [(line, line_messages.get(i, [])) for i, line in enumerate(view.lines)]
    method = view.fulfillment_methods[0] if view.fulfillment_methods else None
    card = card_context(view)
    boleto = boleto_context(view)
    return render(
        request,
        "shop/checkout/checkout.html",
        {
            "view": view,
            "form": form,
            "general": general,
            "lines": lines,
            "shipping_options": method.groups[0].options if method and method.type == "shipping" else (),
            "no_options_reason": _no_options_reason(view, form),
            "pickup_locations": _pickup_locations(),
            "ready": view.status == STATUS_READY,
            "card": card,
            "boleto": boleto,
            "payment_methods": payment_methods(view, card, _posted_method(request), boleto=boleto),
            "applied_coupons": standing_codes(view.discount_codes, view.messages),
            "pix_bp": pix_discount_bp(),  # an input of the payment choice's {% memo %}: the store's Pix rate
            "csrf_token": lazy_csrf_token(request),  # Django's token, its mask drawn at less cost
            # the form's own addresses ({% url %} with view.id reversed both on every view)
            "resume_url": path_with("checkout:resume", "checkout_id", view.id),
            "email_url": path_with("checkout:email", "checkout_id", view.id),
        },
        status=status,
    )


def _no_options_reason(view: CheckoutView, form: CheckoutForm) -> str:
    """Why no shipping rate is offered although a CEP is filled (an unknown CEP, a UF of another state): said
    where the rates would be, instead of asking for the CEP. Empty: the page asks for the CEP. When the form
    already shows that sentence under the CEP or UF, the options point up to it instead of saying it twice."""
    where = (f"{DEST0}.postal_code", f"{DEST0}.address_region")
    reason = next((m.content for m in view.messages if m.code == "field_invalid" and m.path in where), "")
    if reason and form.is_bound and reason in (*form.errors.get("cep", []), *form.errors.get("uf", [])):
        return str(_("Corrija o CEP ou a UF acima para ver as opções de entrega."))
    return reason


def _with_account_defaults(request: HttpRequest, initial: dict[str, str]) -> dict[str, str]:
    """A buyer signed in to "Minha conta" finds the form filled from their last order (only the empty fields;
    nothing is saved until they submit)."""
    email = signed_in_email(request)
    if not email:
        return initial
    defaults = checkout_defaults(email)
    return {**initial, **{name: value for name, value in defaults.items() if value and not initial.get(name)}}


def _posted_method(request: HttpRequest) -> str:
    """The payment method the buyer was on when the page comes back (an error, a recalculated total)."""
    if request.method != "POST":
        return ""
    action = request.POST.get("action", "")
    if action in ("pay", "pay_card", "pay_boleto"):
        return {"pay_card": "card", "pay_boleto": "boleto"}.get(action, "pix")
    return str(request.POST.get("payment_method", ""))[:16]


def _pickup_option_id(checkout: Checkout) -> str:
    """The pickup option the form asks for: the one the checkout already offered, else the shop's (first) pickup
    method. QA walk: a merchant's method coded "retirada-atelie" (not the demo's "retirada") answered a buyer's
    first "Retirar na loja" with "Opção de entrega indisponível para este destino" and dropped what was typed."""
    for method in (checkout.fulfillment_snapshot or {}).get("methods", []):
        if method["type"] == "pickup" and method["groups"] and method["groups"][0]["options"]:
            return str(method["groups"][0]["options"][0]["id"])
    methods = shipping_config_load().pickup_methods
    return methods[0].code if methods else "retirada"


def _pickup_locations() -> list[object]:
    # The shipping table's (cached with it, dropped on any save of a location): the same rows, no statement.
    return list(shipping_config_load().pickup_locations)


def _get_or_404(request: HttpRequest, checkout_id: str) -> Checkout:
    """The checkout when this browser may open it (its session created it, or a signed link): else 404."""
    try:
        checkout = checkout_get(checkout_id=checkout_id).checkout
    except CheckoutNotFound:
        raise Http404("checkout não encontrado") from None
    return require_access(request, checkout)


def _done_redirect(checkout: Checkout) -> HttpResponse | None:
    if checkout.status == STATUS_IN_PROGRESS:
        return in_progress_redirect(checkout)
    if checkout.status == STATUS_COMPLETED and checkout.order_permalink_url:
        return redirect(_local(checkout.order_permalink_url))
    return None


@require_http_methods(["GET", "POST"])
def checkout_resume(request: HttpRequest, checkout_id: str) -> HttpResponse:
    """The one-page checkout; also the BCP `continue_url` where a buyer resumes an agent's checkout."""
    prefetch_page_reads()
    checkout = _get_or_404(request, checkout_id)
    if checkout.status == STATUS_IN_PROGRESS and checkout_pix_refresh(checkout_id=checkout_id):
        checkout = _get_or_404(request, checkout_id)  # its Pix expired (lazily, no beat needed): back to the form
    done = _done_redirect(checkout)
    if done is not None:
        return done
    if checkout.status in TERMINAL_STATUSES:
        return render(request, "shop/checkout/closed.html", {"checkout": checkout}, status=410)
    if request.method == "GET":
        view = checkout_view(checkout, page=True)
        # A fresh storefront checkout shows no "required" errors until the buyer submits once (the e-mail
        # saved while typing is not a submit): only then is the stored state validated and its messages attached.
        if _buyer_submitted(checkout):
            form = CheckoutForm(data=initial_from_view(view))
            form.is_valid()
            # The buyer finishing an agent's checkout is not told that agents may not (it speaks to the agent).
            # Opening the page is not a submit: what is filled and wrong is marked, what is still missing waits for
            # the buyer's next submit (QA walk: a reminder's link opened on "Informe o sobrenome/a rua/a cidade").
            shown = [m for m in view.messages if m.code not in (AGENT_COMPLETE_FORBIDDEN, "field_required")]
            general = form.attach_messages(shown)
        else:
            form = CheckoutForm(initial=_with_account_defaults(request, initial_from_view(view)))
            general = []
        return _render_checkout(request, checkout, form, general, view=view)

    form = CheckoutForm(request.POST)
    if not form.is_valid():
        # The rest waits for the buyer's fix; a valid e-mail is kept now (reminders, also without JS).
        if _email_saved(request, checkout, form.cleaned_data.get("email", "")):
            checkout = _get_or_404(request, checkout_id)
        general = form.attach_messages(_other_errors(checkout, form))
        return _render_checkout(request, checkout, form, general, status=400)
    lines = list(checkout.lines.all())
    pickup_option = _pickup_option_id(checkout)
    state = input_from_checkout(checkout, lines)
    remove = request.POST.get("remove_coupon", "")
    action = "coupon" if remove else request.POST.get("action", "")  # "Remover" next to an applied code
    paying = action in ("pay", "pay_card", "pay_boleto")
    # Applied codes stay unless removed; the field adds new ones.
    stored = [CheckoutMessage.from_dict(m) for m in checkout.messages]
    codes = form.discount_codes(standing_codes(checkout.discount_codes or (), stored), remove=remove)
    instrument = card_instrument(request.POST) if action == "pay_card" else _pix_instrument()
    instrument = boleto_instrument() if action == "pay_boleto" else instrument  # issue 37
    # Street, bairro, city and UF from a new CEP (or on "Calcular frete"), before the engine's transaction.
    form.autofill_from_cep(previous_cep=checkout.ship_cep, asked=action == "shipping")
    if checkout.session_key and checkout.session_key == request.session.session_key:
        cart_set_coupons(request.session, list(codes))

    def update(with_option: bool) -> CheckoutResult:
        data = replace(
            state,
            buyer=form.buyer(previous=state.buyer),
            fulfillment=form.fulfillment(
                pickup_option_id=pickup_option, with_option=with_option, previous_cep=checkout.ship_cep
            ),
            discount_codes=codes,
            payment=PaymentInput(instruments=(instrument,)) if paying else state.payment,
        )
        return checkout_update(checkout_id=checkout_id, data=data, language=_language(request))

    result = update(with_option=True)
    if any(m.path == SEL_OPT and m.code == "field_invalid" for m in result.messages):
        # A new CEP changes the options: the old choice is dropped instead of rejecting the whole form.
        result = update(with_option=False)
    rejected = result.messages[len(result.checkout.messages) :]
    if rejected:
        # One thing refused (a delivery option or pickup store not offered here) refuses the whole update: the
        # contact is saved all the same, with the delivery stored before (QA walk: what was typed was lost).
        contact = replace(state, buyer=form.buyer(previous=state.buyer), discount_codes=codes)
        saved = checkout_update(checkout_id=checkout_id, data=contact, language=_language(request))
        if len(saved.messages) == len(saved.checkout.messages):
            result = replace(saved, messages=[*saved.messages, *rejected])
    if not paying and not rejected and (only := _only_option(result.checkout)):
        # One rate for this address: chosen for the buyer, so the summary's total carries the freight (QA walk: a
        # shop with one Correios rate listed it unchosen, the total without freight, and "Pagar" answered "Escolha a
        # forma de entrega"). Never while paying: the buyer pays a total the page has shown.
        form.cleaned_data["shipping_option"] = only
        result = update(with_option=True)
    _sync_cart(request, result.checkout)
    ready = result.checkout.status == STATUS_READY and not rejected  # never paid with what was refused
    held = before_charging(request.POST, action, result.checkout) if paying and ready else []
    if paying and ready and not held:
        # A card completes with the token the browser made (card_page.py); Pix with its instrument.
        paying_with = with_token(instrument, request.POST) if action == "pay_card" else instrument
        if paying_with is None:
            missing = CheckoutMessage(type="error", code="payment_failed", content=_("Informe os dados do cartão."))
            return _render_checkout(request, result.checkout, form, [missing], status=200)
        result = checkout_complete(checkout_id=checkout_id, data=CompleteInput(payment=PaymentInput((paying_with,))))
        if result.checkout.status == STATUS_COMPLETED and checkout.session_key == request.session.session_key:
            cart_clear(request.session)  # paid by card at once: the order page comes next
        done = _done_redirect(result.checkout)
        if done is not None:
            return done
    if len(result.messages) == len(result.checkout.messages):
        # Accepted: show the state as the engine normalized it (UF from the CEP, E.164 phone, …).
        shown = initial_from_view(checkout_view(result.checkout, page=True))
        if shown["method"] == "pickup":
            # A pickup stores no address: the one typed stays in the (hidden) delivery panel, so a buyer who goes
            # back to delivery does not type it all again (QA walk).
            shown.update({name: form.cleaned_data.get(name, "") for name in ADDRESS_FIELDS})
        form = CheckoutForm(data=shown)
        form.is_valid()
    kept = list(standing_codes(codes, result.messages))
    # The field empties: kept codes are listed as applied, a refused one is reported now and then dropped
    # from the cart as well.
    form.data = form.data.copy()
    form.data[form.add_prefix("coupon")] = ""
    if checkout.session_key and checkout.session_key == request.session.session_key:
        cart_set_coupons(request.session, kept)
    # "Calcular frete" is a step, not the final submit: it does not report what the buyer has not filled yet;
    # "Aplicar cupom" reports only what concerns the coupon.
    first = _why_total_changed(result.messages, held)
    said = [*result.messages, *held]
    if rejected:
        # The form keeps what was typed: the refusal goes next to its field whatever the button, and the other
        # messages are those of what was typed, not of the stored state ("Informe o nome" beside "Ana").
        said = [m for m in _posted_messages(result.checkout, form) if m.path not in {r.path for r in rejected}]
        first = form.attach_messages(rejected)
    general = form.attach_messages(
        [m for m in said if m not in first],
        filled_only=action == "shipping",
        only_fields=("coupon",) if action == "coupon" else None,
    )
    return _render_checkout(request, result.checkout, form, [*first, *general], status=200)


def _only_option(checkout: Checkout) -> str:
    """The id of the one delivery option offered to a shipping checkout that has none chosen; "" otherwise."""
    if checkout.fulfillment_type != "shipping" or checkout.selected_option_id:
        return ""
    methods = (checkout.fulfillment_snapshot or {}).get("methods") or []
    groups = methods[0].get("groups") or [] if methods else []
    options = groups[0].get("options") or [] if groups else []
    return str(options[0]["id"]) if len(options) == 1 else ""


def _why_total_changed(said: list[CheckoutMessage], held: list[CheckoutMessage]) -> list[CheckoutMessage]:
    """When paying is held back because the total changed, the coupons refused by this submit (e.g. once per
    e-mail, and the e-mail changed): their reasons go before the new total in the box the buyer reads, not only
    beside the coupon field at the end of the summary."""
    if not any(m.code == "total_changed" for m in held):
        return []
    return [m for m in said if m.path.startswith("$.discounts.codes[") and m.type != "info"]


def _evaluated(checkout: Checkout, form: CheckoutForm) -> Evaluation | None:
    """The engine's evaluation of the checkout with a valid form's buyer and delivery: nothing saved. None when
    the engine refuses the input outright."""
    lines = list(checkout.lines.all())
    state = input_from_checkout(checkout, lines)
    attempt = replace(
        state,
        buyer=form.buyer(previous=state.buyer),
        fulfillment=form.fulfillment(pickup_option_id=_pickup_option_id(checkout), previous_cep=checkout.ship_cep),
    )
    try:
        return evaluate(checkout=checkout, existing_lines=lines, data=attempt, now=timezone.now())
    except CheckoutInputError:
        return None


def _posted_messages(checkout: Checkout, form: CheckoutForm) -> list[CheckoutMessage]:
    """What the engine says of the posted (valid) form, evaluated only: nothing saved."""
    ev = _evaluated(checkout, form)
    return [] if ev is None else [*ev.messages, *ev.rejections]


def _other_errors(checkout: Checkout, form: CheckoutForm) -> list[CheckoutMessage]:
    """What the engine says of the fields the form accepted, while one is refused (a NUL, too long): the buyer
    sees every error at once. Evaluated only, nothing saved; the refused fields keep their stored values."""
    stored = initial_from_view(checkout_view(checkout, page=True))
    data = {name: form.data.get(name, "") for name in form.fields}
    data.update({name: stored.get(name, "") for name in form.errors if name in form.fields})
    data["coupon"] = ""
    accepted = CheckoutForm(data)
    if not accepted.is_valid():
        return []
    ev = _evaluated(checkout, accepted)
    return [] if ev is None else [m for m in ev.messages if field_for_path(m.path) not in form.errors]


def _buyer_submitted(checkout: Checkout) -> bool:
    """The buyer (or their agent) gave more than the e-mail the page saves while it is typed."""
    return checkout.buyer_given and any(
        (
            checkout.buyer_first_name,
            checkout.buyer_last_name,
            checkout.buyer_phone,
            checkout.buyer_tax_id,
            checkout.fulfillment_type,
        )
    )


def _email_saved(request: HttpRequest, checkout: Checkout, email: str) -> bool:
    """Save the typed e-mail alone when it is a valid address, new, and the checkout can still change."""
    email = email.strip()
    if not email or email == checkout.buyer_email or len(email) > 254 or not email_valid(email):
        return False
    if checkout.status not in (STATUS_INCOMPLETE, STATUS_READY) or checkout.paid_at is not None:
        return False
    result = checkout_email_save(checkout_id=checkout.public_id, email=email, language=_language(request))
    return result.checkout.buyer_email == email


@require_POST
def checkout_email(request: HttpRequest, checkout_id: str) -> JsonResponse:
    """The e-mail field, posted by the page as soon as the buyer leaves it (CSRF-checked): saved alone, so an
    abandoned checkout can get its reminder (shop/checkout/reminders.py). The full form saves it too."""
    checkout = _get_or_404(request, checkout_id)
    email = request.POST.get("email", "").strip()
    if len(email) > 254 or not email_valid(email) or control_in(email):
        return JsonResponse({"saved": False, "error": email_invalid()}, status=400)
    if checkout.status not in (STATUS_INCOMPLETE, STATUS_READY) or checkout.paid_at is not None:
        return JsonResponse({"saved": False, "error": _("Este checkout não pode mais ser alterado.")}, status=409)
    _email_saved(request, checkout, email)
    return JsonResponse({"saved": True})


# --- policies ----------------------------------------------------------------------------------------


@require_GET
def terms(request: HttpRequest) -> HttpResponse:
    return render(request, "shop/checkout/terms.html", {})


@require_GET
def privacy(request: HttpRequest) -> HttpResponse:
    return render(request, "shop/checkout/privacy.html", {"cpf_needed": cpf_needed()})


@require_GET
def card_pending(request: HttpRequest, checkout_id: str) -> HttpResponse:
    """The gateway did not answer in time: the stock is held until the webhook or the sweep decides."""
    checkout = _get_or_404(request, checkout_id)
    if checkout.status == STATUS_COMPLETED and checkout.order_permalink_url:
        return redirect(_local(checkout.order_permalink_url))
    if checkout.status != STATUS_IN_PROGRESS or not is_card(checkout):
        return redirect("checkout:resume", checkout_id=checkout_id)
    return render(request, "shop/checkout/card_pending.html", {"checkout": checkout})
