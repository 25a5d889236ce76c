"""Storefront browsing pages: home, product list, product detail. Thin: parse → selector → template."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from django.conf import settings
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods

from kernel.money import parse_brl
from shop.cart import TYPED_QUANTITY_MAX
from shop.catalog.schema_org import cents_to_decimal_string, product_schema_org
from shop.catalog.selectors import (
    MAX_PER_PAGE,
    MAX_QUERY_LENGTH,
    CatalogQueryError,
    ProductPage,
    product_availability,
    product_get,
    product_live_signature,
    product_price_range,
    product_search,
    query_shortened,
)
from shop.checkout.fulfillment import (
    cep_invalid,
    cep_lookup,
    free_shipping_methods,
    free_shipping_threshold,
    freight_quote,
    shipping_config_load,
)
from shop.checkout.pricing import installment_offer, pix_price
from shop.checkout.reminders import optout_email, reminder_optout
from shop.checkout.stock import catalog_version
from shop.freight.parcels import FreightLine
from shop.freight.quotes import quote_for, weight_matters
from shop.models import Category, Product, Variant
from shop.store.services import store_get
from shop.storefront.page_cache import cacheable, render_shared, shared_or_render
from shop.subscriptions.offers import plan_offer, plan_terms
from shop.subscriptions.selectors import subscription_plans_by_variant
from shop.templatetags.money import format_brl

DEFAULT_PER_PAGE = 24
FIELD_LABELS = {
    "q": gettext_lazy("Busca"),
    "category": gettext_lazy("Categoria"),
    "in_stock": gettext_lazy("Em estoque"),
    "price_min": gettext_lazy("Preço mínimo"),
    "price_max": gettext_lazy("Preço máximo"),
    "sort": gettext_lazy("Ordenação"),
    "page": gettext_lazy("Página"),
    "per_page": gettext_lazy("Itens por página"),
}
SORT_LABELS = [
    ("relevance", gettext_lazy("Relevância")),
    ("price_asc", gettext_lazy("Menor preço")),
    ("price_desc", gettext_lazy("Maior preço")),
    ("newest", gettext_lazy("Novidades")),
    ("title", gettext_lazy("Nome (A–Z)")),
]
AVAILABILITY_LABELS = {
    "InStock": gettext_lazy("Em estoque"),
    "PreOrder": gettext_lazy("Sob encomenda"),
    "OutOfStock": gettext_lazy("Esgotado"),
}
# Option names are data ("tamanho"); the usual ones get a translated label, others show as typed.
OPTION_LABELS = {
    "tamanho": gettext_lazy("Tamanho"),
    "cor": gettext_lazy("Cor"),
    "moagem": gettext_lazy("Moagem"),
    "voltagem": gettext_lazy("Voltagem"),
}
_TRUE = {"1", "true", "on", "yes", "sim"}
_FALSE = {"", "0", "false", "off", "no", "nao", "não"}


@dataclass(frozen=True)
class ParamError:
    field: str
    message: str

    @property
    def label(self) -> str:
        return str(FIELD_LABELS.get(self.field, self.field))


def _parse_list_params(params: QueryDict) -> tuple[dict[str, object], list[ParamError]]:
    """Read the product list's query string; a bad value is dropped and reported, never raised."""
    errors: list[ParamError] = []
    query, shortened = query_shortened(params.get("q", ""))
    if shortened:
        # A pasted paragraph: search its start and say so (neither the whole catalog nor nothing).
        errors.append(
            ParamError(
                "q",
                _("A busca pode ter até %(n)d caracteres: buscamos só o começo do texto.") % {"n": MAX_QUERY_LENGTH},
            )
        )
    args: dict[str, object] = {"query": query, "category_slug": params.get("category", "").strip()}
    raw_stock = params.get("in_stock", "").strip().lower()
    if raw_stock in _TRUE:
        args["in_stock"] = True
    elif raw_stock not in _FALSE:
        errors.append(ParamError("in_stock", _("Use 1 ou 0 (sim ou não).")))
    for field in ("price_min", "price_max"):
        raw = params.get(field, "").strip()
        if not raw:
            continue
        try:
            args[field] = parse_brl(raw)  # the one money parser (admin, coupons, this filter)
        except ValueError:
            errors.append(
                ParamError(field, _("“%(value)s” não é um preço válido; use por exemplo 59,90.") % {"value": raw})
            )
    sort = params.get("sort", "").strip() or "relevance"
    args["sort"] = sort
    for field, default in (("page", 1), ("per_page", DEFAULT_PER_PAGE)):
        raw = params.get(field, "").strip()
        if not raw:
            args[field] = default
            continue
        try:
            args[field] = int(raw)
        except ValueError:
            errors.append(ParamError(field, _("“%(value)s” não é um número inteiro.") % {"value": raw}))
            args[field] = default
    if args["per_page"] > MAX_PER_PAGE or args["per_page"] < 1:  # type: ignore[operator]
        errors.append(ParamError("per_page", _("Itens por página deve estar entre 1 e %(n)d.") % {"n": MAX_PER_PAGE}))
        args["per_page"] = DEFAULT_PER_PAGE
    return args, errors


# What to drop when the selector rejects a field, so the page can still show products.
_RESET_ON_ERROR: dict[str, dict[str, object]] = {
    "q": {"query": ""},
    "category": {"category_slug": ""},
    "price_min": {"price_min": None, "price_max": None},
    "price_max": {"price_min": None, "price_max": None},
    "sort": {"sort": "relevance"},
    "page": {"page": 1},
    "per_page": {"per_page": DEFAULT_PER_PAGE},
}


def _search_reporting_errors(args: dict[str, object], errors: list[ParamError]) -> ProductPage:
    # Each retry resets one more rejected field, so this ends after at most len(_RESET_ON_ERROR) rounds.
    for _attempt in range(len(_RESET_ON_ERROR) + 1):
        try:
            return product_search(**args)  # type: ignore[arg-type]
        except CatalogQueryError as exc:
            errors.append(ParamError(exc.field, exc.message))
            args = {**args, **_RESET_ON_ERROR.get(exc.field, {})}
    return product_search()


def _product_cards(products: list[Product]) -> list[dict[str, object]]:
    cards = []
    for product in products:
        variants = list(product.variants.all())
        images = list(product.images.all())
        price_range = product_price_range(product)
        availability = product_availability(product)
        compare = max((v.compare_at_price or 0 for v in variants), default=0)
        cards.append(
            {
                "product": product,
                "image": images[0] if images else None,
                "min_price": price_range[0] if price_range else None,
                "varies": bool(price_range and price_range[0] != price_range[1]),
                "compare_at": compare if price_range and compare > price_range[0] else None,
                "availability": availability,
                "availability_label": AVAILABILITY_LABELS[availability],
            }
        )
    return cards


def _nav_categories() -> list[Category]:
    # A top-level category counts the products of its subcategories too, as its listing shows them
    # (`product_search`: category or parent): "Roupas" over "Vestidos" read "0 produto" on the home.
    return list(
        Category.objects.filter(parent__isnull=True)
        .annotate(
            product_count=Count("products", filter=Q(products__active=True), distinct=True)
            + Count("children__products", filter=Q(children__products__active=True), distinct=True)
        )
        .order_by("position", "name")
    )


# The home page's featured cards (a search and eight cards) were most of its CPU: the template renders them once
# per catalog version and language (`{% cache %}`, shop/home.html), so a save of a product, variant or photo shows at
# once. A sale moves stock by a conditional UPDATE, which bumps no version: a product that sells out leaves the
# featured list within this many seconds. The whole page is shared as long (page_cache.py).
HOME_FEATURED_SECONDS = 60


def _featured_cards() -> list[dict[str, object]]:
    return _product_cards(product_search(sort="newest", in_stock=True, per_page=8).products)


def home(request: HttpRequest) -> HttpResponse:
    if not cacheable(request):
        return _home(request, key=None)
    return shared_or_render(request, "home", lambda key: _home(request, key=key))


def _home(request: HttpRequest, *, key: str | None) -> HttpResponse:
    # Only categories with something to buy, and the tab title names them (QA walk, a clothes shop: the title read
    # the demo's "Cafés, camisetas, casa e mais" and the home listed an empty "Acessórios — 0 produto").
    categories = [category for category in _nav_categories() if category.product_count]
    context = {  # `featured` is called by the template, only when its fragment is not cached
        "featured": _featured_cards,
        "featured_key": catalog_version(),
        "featured_seconds": HOME_FEATURED_SECONDS,
        "categories": categories,
        "title_categories": ", ".join(category.name for category in categories[:4]),
    }
    if key is not None:
        return render_shared(request, key, "shop/home.html", context, timeout=HOME_FEATURED_SECONDS)
    return render(request, "shop/home.html", context)


def product_list(request: HttpRequest) -> HttpResponse:
    args, errors = _parse_list_params(request.GET)
    page = _search_reporting_errors(args, errors)
    categories = _nav_categories()
    current_category = next((c for c in categories if c.slug == args["category_slug"]), None)
    if current_category is None and args["category_slug"] and not any(e.field == "category" for e in errors):
        current_category = Category.objects.filter(slug=args["category_slug"]).first()
    return render(
        request,
        "shop/product_list.html",
        {
            "page": page,
            "cards": _product_cards(page.products),
            "errors": errors,
            "categories": categories,
            "current_category": current_category,
            "sort_options": SORT_LABELS,
            "form": {
                "q": args["query"],
                "category": request.GET.get("category", ""),
                "in_stock": args.get("in_stock", False),
                "price_min": request.GET.get("price_min", ""),
                "price_max": request.GET.get("price_max", ""),
                "sort": args["sort"] if not any(e.field == "sort" for e in errors) else "relevance",
            },
        },
    )


def _select_variant(variants: list[Variant], params: QueryDict) -> Variant | None:
    """?sku= wins; otherwise option values in the query (?tamanho=M); otherwise the first available one."""
    if not variants:
        return None
    sku = params.get("sku", "")
    for variant in variants:
        if variant.sku == sku:
            return variant
    chosen = {name: params[name] for name in {k for v in variants for k in v.options} if params.get(name)}
    if chosen:
        for variant in variants:
            if all(str(variant.options.get(name)) == value for name, value in chosen.items()):
                return variant
    return next((v for v in variants if v.availability != "OutOfStock"), variants[0])


def _option_groups(variants: list[Variant], selected: Variant | None) -> list[dict[str, object]]:
    groups: dict[str, list[str]] = {}
    for variant in variants:
        for name, value in variant.options.items():
            values = groups.setdefault(name, [])
            if str(value) not in values:
                values.append(str(value))
    chosen = {name: str(value) for name, value in (selected.options if selected else {}).items()}
    combinations = [{name: str(value) for name, value in v.options.items()} for v in variants]

    def missing(name: str, value: str) -> bool:
        # No variant has this value beside the other options chosen now (Rosa only in M, P chosen): shown greyed,
        # still clickable (shop.js then moves the other options to a variant that has it).
        wanted = {**chosen, name: value}
        return not any(all(c.get(k) == v for k, v in wanted.items()) for c in combinations)

    return [
        {
            "name": name,
            "label": OPTION_LABELS.get(name, name.capitalize()),
            "values": [
                {"value": v, "checked": chosen.get(name) == v, "missing": bool(chosen) and missing(name, v)}
                for v in values
            ],
        }
        for name, values in groups.items()
    ]


def _json_ld(data: dict[str, object]) -> str:
    # Escape HTML-significant characters so product text can never close the <script> element.
    text = json.dumps(data, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def product_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """The product page; a bare URL is shared by every buyer while its catalog version and its variants' live
    columns stay the same (page_cache.py): one statement then, instead of five and the whole render."""
    signature = product_live_signature(slug) if cacheable(request) else None
    if signature is None:
        return _product_page(request, slug, key=None, signature=None)
    return shared_or_render(
        request,
        "product",
        lambda key: _product_page(request, slug, key=key, signature=signature),
        signature=signature,
    )


def _product_page(
    request: HttpRequest, slug: str, *, key: str | None, signature: tuple[tuple[object, ...], ...] | None
) -> HttpResponse:
    product = product_get(slug=slug)
    if product is None:
        # A shop page (header, search) rather than the bare 404, so the buyer can keep browsing.
        return render(request, "shop/product_not_found.html", status=404)
    variants = list(product.variants.all())
    query = request.GET
    if "variante" in query and "sku" not in query:  # the "Calcular frete" form keeps the chosen variant
        query = query.copy()
        query["sku"] = query["variante"]
    selected = _select_variant(variants, query)
    plans = subscription_plans_by_variant(v.id for v in variants)
    variant_data = [
        {
            "sku": v.sku,
            "title": v.title,
            "options": {k: str(val) for k, val in v.options.items()},
            "price": format_brl(v.price),
            "pix_price": format_brl(pix_price(v.price)),
            "compare_at": format_brl(v.compare_at_price) if v.compare_at_price else "",
            "availability": v.availability,
            "availability_label": str(AVAILABILITY_LABELS[v.availability]),
            "low_stock": v.is_low_stock,
            "stock": v.stock,
            "installments": installment_offer(v.price),  # "ou 12x de R$ 583,25 sem juros" or ""
            # "Assinar por R$ 89,90 por mês" (issue 38): one line per active plan of the variant.
            "subscriptions": [plan_offer(plan) for plan in plans.get(v.id, [])],
        }
        for v in variants
    ]
    freight: dict[str, object] = {}
    if selected is not None and product.requires_shipping:
        # "variante", not "sku": the add-to-cart form owns the page's one `sku` input (the picker updates both).
        hidden = [("variante", selected.sku)]
        freight = freight_context(
            request, subtotal=selected.price, action=request.path, hidden=hidden, lines=[FreightLine(selected.sku, 1)]
        )
    schema = product_schema_org(product, base_url=settings.BCP_PUBLIC_URL)
    og_image = schema.get("image", "")
    if isinstance(og_image, list):
        og_image = og_image[0]
    context = {
        "product": product,
        "images": list(product.images.all()),
        "variants": variants,
        "selected": selected,
        "selected_availability_label": AVAILABILITY_LABELS[selected.availability] if selected else "",
        "subscription_offers": [
            {"text": plan_offer(plan), "terms": plan_terms(plan), "plan_id": plan.public_id}
            for plan in plans.get(selected.id, [])
        ]
        if selected
        else [],
        "option_groups": _option_groups(variants, selected),
        "variant_data": variant_data,
        "json_ld": _json_ld(schema),
        "canonical_url": schema["url"],
        "og_image": og_image,
        "og_price": cents_to_decimal_string(selected.price) if selected else "",
        "show_freight": bool(freight),
        # A quantity the cart refused comes back here (`?quantidade=`, never a shared page) to stay in its field.
        "typed_quantity": request.GET.get("quantidade", "1")[:TYPED_QUANTITY_MAX] or "1",
        **freight,
    }
    if key is not None:
        return render_shared(request, key, "shop/product_detail.html", context, signature=signature)
    return render(request, "shop/product_detail.html", context)


def freight_context(
    request: HttpRequest,
    *,
    subtotal: int,
    action: str,
    hidden: list[tuple[str, str]],
    lines: list[FreightLine] | None = None,
) -> dict[str, object]:
    """The "Calcular frete" box: the notice, and the quote when the buyer sent a CEP (`?cep=`). With a carrier or
    a table by weight, the options are `shop.freight`'s for `lines` (the checkout's, for the same lines and CEP;
    a page view holds no lock, so the carrier may be asked here, within its deadline)."""
    config = shipping_config_load()
    threshold = free_shipping_threshold(config)
    context: dict[str, object] = {
        "free_threshold": threshold,
        "free_methods": free_shipping_methods(config, threshold),
        "freight_action": action,
        "freight_hidden": hidden,
        "freight_cep": "",
        "freight": None,
        "freight_error": "",
        # the options' days are the carrier's: the box says the store posts first (Dados da loja → Frete)
        "handling_days": store_get().handling_days,
    }
    cep = request.GET.get("cep", "").strip()[:12]
    if cep:
        context["freight_cep"] = cep
        try:
            quote = freight_quote(cep=cep, subtotal_after_discounts=subtotal, config=config)
            if lines and weight_matters(config):
                quoted = quote_for(lines=lines, destination_cep=cep, subtotal_after_discounts=subtotal)
                quote = replace(quote, options=quoted.option_views())
            context["freight"] = quote
        except ValueError as exc:
            context["freight_error"] = str(exc)
    return context


@require_GET
def cep_address(request: HttpRequest, cep: str) -> JsonResponse:
    """`/cep/<cep>`: the address of a CEP as JSON for the checkout's autofill (never a 500, offline fallback)."""
    address = cep_lookup(cep)
    if address is None:
        return JsonResponse({"error": "cep_invalid", "message": cep_invalid()}, status=400)
    # An unknown CEP is an answer (`"found": false`), not a missing resource: a 404 logged a console error in
    # the buyer's browser for every mistyped CEP.
    response = JsonResponse(address.as_dict())
    # A provider answer can be kept a day by the browser; the offline fallback should be asked again soon.
    response["Cache-Control"] = "private, max-age=86400" if address.source == "provider" else "no-store"
    return response


@require_http_methods(["GET", "POST"])
def reminder_optout_page(request: HttpRequest, token: str) -> HttpResponse:
    """The reminder e-mail's opt-out link: GET asks (mail scanners open links), POST stops the reminders."""
    email = optout_email(token)
    if email is None:
        return render(request, "shop/reminder_optout.html", {"invalid": True}, status=400)
    done = request.method == "POST" and reminder_optout(token=token)
    return render(request, "shop/reminder_optout.html", {"email": email, "done": done})
