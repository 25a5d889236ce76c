"""Shared storefront pages (issue 34, shop/storefront/page_cache.py): the home and product pages are rendered once
per catalog version for every buyer, with the buyer's own CSRF token, cart count and messages filled in.

Every writer of what they show is seen on the next view: the admin's forms and bulk actions, the services (the
spreadsheet import, stock reservations and releases at a sale), the photo thumbnails, the demo seeding. A buyer
never sees another's cart count, token or messages. Statement counts per page are fixed here.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.db import connection
from django.db.models.fields.files import FieldFile
from django.middleware.csrf import CSRF_ALLOWED_CHARS, _unmask_cipher_token
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext

from shop.catalog.services import catalog_import_apply
from shop.catalog.spreadsheet import import_plan
from shop.checkout.stock import stock_release, stock_reserve
from shop.models import (
    Category,
    Product,
    ProductImage,
    ShippingMethod,
    StoreSettings,
    SubscriptionPlan,
    Variant,
)
from shop.store.services import store_row
from shop.storefront.csrf import csrf_token
from tests.shop.checkout_factories import make_shipping, make_variant

pytestmark = pytest.mark.django_db
PAGE = "/produtos/sku-cafe/"


@pytest.fixture
def product() -> Product:
    variant = make_variant("SKU-CAFE", price=4290, stock=10, title="Café da serra")
    Variant.objects.create(product=variant.product, sku="SKU-CAFE-1KG", title="1 kg", price=7990, stock=2, position=1)
    make_shipping()
    return variant.product


def _html(client: Client, url: str = PAGE) -> str:
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def _statements(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def _price(html: str) -> str:
    match = re.search(r'data-role="price">([^<]*)<', html)
    assert match
    return match.group(1)


def _csrf(html: str) -> set[str]:
    return set(re.findall(r'name="csrfmiddlewaretoken" value="([^"]*)"', html))


def _admin_post(admin_client: Client, obj: Any, **changes: Any) -> None:
    """Save `obj` through its admin change form as a merchant would: the form as shown, with `changes`."""
    url = f"/admin/shop/{obj._meta.model_name}/{obj.pk}/change/"
    page = admin_client.get(url)
    assert page.status_code == 200
    data: dict[str, Any] = {}

    def take(form: Any) -> None:
        for name in form.fields:
            value = form[name].value()
            if isinstance(value, (dict, list)):
                value = json.dumps(value)
            if value is None or value is False or isinstance(value, FieldFile):
                continue  # unchecked, empty, or a file kept as it is
            data[form.add_prefix(name)] = "on" if value is True else value

    take(page.context["adminform"].form)
    for inline in page.context["inline_admin_formsets"]:
        formset = inline.formset
        take(formset.management_form)
        for form in formset.forms:
            take(form)
    data.update(changes)
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else response


# --- what a shared page costs -----------------------------------------------------------------------------------


def test_a_product_page_costs_one_statement_and_the_home_page_none(client: Client, product: Product) -> None:
    _html(client)  # rendered once, for everybody
    _html(client, "/")
    assert _statements(Client(), PAGE) == 1  # another buyer: its variants' live columns only
    assert _statements(Client(), "/") == 0


def test_a_query_string_is_rendered_for_the_request(client: Client, product: Product) -> None:
    _html(client)
    html = _html(client, f"{PAGE}?sku=SKU-CAFE-1KG")
    assert _price(html) == "R$ 79,90"  # the chosen variant, never the shared page's first one
    assert _price(_html(client)) == "R$ 42,90"
    assert 'value="bu&lt;sca"' in _html(client, "/?q=bu<sca")  # the search box shows the query, escaped


# --- a change shows on the next view ----------------------------------------------------------------------------


def test_admin_price_and_name_changes_show_on_the_next_view(admin_client: Client, product: Product) -> None:
    assert _price(_html(Client())) == "R$ 42,90"
    variant = Variant.objects.get(sku="SKU-CAFE")
    _admin_post(admin_client, variant, price="39,90")
    assert _price(_html(Client())) == "R$ 39,90"
    _admin_post(admin_client, product, title="Café do sítio")
    assert "<h1>Café do sítio</h1>" in _html(Client())


def test_admin_bulk_deactivation_removes_the_page_at_once(admin_client: Client, product: Product) -> None:
    _html(Client())
    response = admin_client.post(
        "/admin/shop/product/", {"action": "make_inactive", "_selected_action": [product.pk]}, follow=True
    )
    assert response.status_code == 200
    assert Client().get(PAGE).status_code == 404


def test_spreadsheet_import_changes_show_on_the_next_view(product: Product) -> None:
    _html(Client())
    rows = [(2, {"product": "sku-cafe", "sku": "SKU-CAFE", "price": "35,50", "title": "Café importado"})]
    plan = import_plan(rows)
    assert plan.errors == []
    catalog_import_apply(plan=plan)
    html = _html(Client())
    assert _price(html) == "R$ 35,50"
    assert "<h1>Café importado</h1>" in html


def test_stock_taken_by_a_sale_and_given_back_shows_on_the_next_view(product: Product) -> None:
    """A sale takes stock by a conditional UPDATE (no signal, no version bump): the live columns catch it."""
    assert 'data-testid="availability">Em estoque<' in _html(Client())
    variant = Variant.objects.get(sku="SKU-CAFE")
    stock_reserve(items=[(variant.pk, 10)])
    html = _html(Client())
    data = re.search(r'id="variant-data"[^>]*>(.*?)</script>', html, re.S)
    assert data and [(v["sku"], v["stock"]) for v in json.loads(data.group(1))] == [
        ("SKU-CAFE", 0),
        ("SKU-CAFE-1KG", 2),
    ]
    assert _price(html) == "R$ 79,90"  # the page opens on the variant still on sale
    stock_release(items=[(variant.pk, 2)])
    html = _html(Client())
    assert _price(html) == "R$ 42,90"
    assert '<p class="low-stock" data-role="low-stock">' in html  # "Últimas unidades!" shown, not hidden


def test_a_new_photo_and_its_thumbnails_show_on_the_next_view(product: Product) -> None:
    assert "gallery-placeholder" in _html(Client())
    ProductImage.objects.create(product=product, source="https://cdn.example.com/serra.jpg", alt_text="serra")
    html = _html(Client())
    assert "https://cdn.example.com/serra.jpg" in html and "gallery-placeholder" not in html


def test_category_store_plan_and_shipping_changes_show_on_the_next_view(admin_client: Client, product: Product) -> None:
    html = _html(Client())
    assert "Cafés</a>" in html
    category = Category.objects.get(slug="cafes")
    _admin_post(admin_client, category, name="Cafés especiais")
    assert "Cafés especiais</a>" in _html(Client())
    assert "Cafés especiais" in _html(Client(), "/")
    row = store_row()
    _admin_post(admin_client, row, trade_name="Empório da Serra")
    assert "<span>Empório da Serra</span>" in _html(Client())
    assert StoreSettings.objects.get().trade_name == "Empório da Serra"
    SubscriptionPlan.objects.create(variant=Variant.objects.get(sku="SKU-CAFE"), price=3990, cycle="monthly")
    assert 'data-testid="subscribe-link"' in _html(Client())
    assert "R$ 200,00" in _html(Client())  # PAC free from R$ 200 (make_shipping)
    pac = ShippingMethod.objects.get(code="pac")
    pac.free_above = 25000
    pac.save()
    html = _html(Client())
    assert "R$ 250,00" in html and "R$ 200,00" not in html


# --- one buyer's parts stay theirs ------------------------------------------------------------------------------


def test_a_buyer_never_sees_another_buyers_cart_token_or_messages(product: Product) -> None:
    ana, bia = Client(), Client()
    first = _html(ana)  # the shared page is rendered in Ana's request
    assert ana.post("/carrinho/adicionar", {"sku": "SKU-CAFE", "quantity": "3"}).status_code == 302
    ana_page = _html(ana)  # Ana's message ("… adicionado ao carrinho") and her count
    bia_page = _html(bia)
    assert 'data-testid="cart-count">3<' in ana_page
    assert "adicionado ao carrinho" in ana_page
    assert 'data-testid="cart-count">0<' in bia_page
    assert "adicionado ao carrinho" not in bia_page and 'class="flash"' not in bia_page
    assert "adicionado ao carrinho" not in _html(ana)  # a message is shown once
    assert _csrf(bia_page).isdisjoint(_csrf(ana_page) | _csrf(first))
    assert "<!--hole:" not in ana_page + bia_page
    # each token works for its own buyer only (Django's CSRF check, which the test client skips by default)
    own, other = Client(enforce_csrf_checks=True), Client(enforce_csrf_checks=True)
    token = next(iter(_csrf(_html(own))))
    _html(other)
    add = {"sku": "SKU-CAFE", "quantity": "1", "csrfmiddlewaretoken": token}
    assert other.post("/carrinho/adicionar", add).status_code == 403
    assert own.post("/carrinho/adicionar", add).status_code == 302
    assert 'data-testid="cart-count">1<' in _html(own)


# --- statements per page ----------------------------------------------------------------------------------------


def test_statements_per_storefront_page(product: Product, django_assert_max_num_queries: Any) -> None:
    buyer = Client()
    _html(buyer)
    _html(buyer, "/")
    with django_assert_max_num_queries(1):
        _html(Client())
    with django_assert_max_num_queries(0):
        _html(Client(), "/")
    assert buyer.post("/carrinho/adicionar", {"sku": "SKU-CAFE", "quantity": "1"}).status_code == 302
    _html(buyer, "/carrinho/")
    with django_assert_max_num_queries(3):  # with a cart: the session, the page's live columns, the cart count
        _html(buyer)
    with django_assert_max_num_queries(2):  # the session; the lines with their variants, photos and the coupons
        _html(buyer, "/carrinho/")
    started = buyer.get("/checkout/")
    assert started.status_code == 302
    _html(buyer, started["Location"])
    with django_assert_max_num_queries(3):  # session, the checkout with its lines, the cart count
        _html(buyer, started["Location"])


# --- the checkout's fields: the include they were, built in Python --------------------------------------------

_FIELD_INCLUDE = (  # templates/shop/checkout/_field.html as it was, before `{% checkout_field %}` replaced it
    '<div class="field{% if field.errors %} field-invalid{% endif %}{% if wide %} field-wide{% endif %}">\n'
    '  <label for="{{ field.id_for_label }}">{{ field.label }}</label>\n'
    '  <input id="{{ field.id_for_label }}" name="{{ field.html_name }}" type="{{ type|default:\'text\' }}"'
    ' value="{{ field.value|default_if_none:\'\' }}"{% if autocomplete %} autocomplete="{{ autocomplete }}"{% endif %}'
    '{% if inputmode %} inputmode="{{ inputmode }}"{% endif %}{% if placeholder %} placeholder="{{ placeholder }}"'
    '{% endif %}{% if field.field.max_length %} maxlength="{{ field.field.max_length }}"{% endif %}'
    '{% if field.errors %} aria-invalid="true" aria-describedby="{{ field.id_for_label }}-error"{% endif %}>\n'
    '  {% if field.errors %}<p class="field-error" id="{{ field.id_for_label }}-error"'
    ' data-testid="error-{{ field.name }}">{{ field.errors|join:" " }}</p>{% endif %}\n'
    "</div>\n"
)


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"email": 'ana<"x">@exemplo', "first_name": "Ana & Bia", "cep": "01310-100", "phone": "(11) 98765-4321"},
    ],
)
def test_checkout_field_renders_what_the_include_did(data: dict[str, str]) -> None:
    from django.template import Context, Template

    from shop.checkout.web.forms import CheckoutForm

    form = CheckoutForm(data=data) if data else CheckoutForm(initial={"email": "ana@exemplo.com.br"})
    if data:
        form.is_valid()
        form.add_error("first_name", 'Informe <o> nome & o "sobrenome".')  # as attach_messages does
        form.add_error("first_name", "Segunda mensagem.")
    include = Template(_FIELD_INCLUDE)
    tag = Template(
        "{% load storefront %}{% checkout_field field=field type=type autocomplete=autocomplete"
        " inputmode=inputmode placeholder=placeholder wide=wide %}"
    )
    for name in ("email", "first_name", "phone", "tax_id", "cep", "uf", "coupon"):
        for extra in (
            {},
            {"type": "tel", "autocomplete": "tel", "inputmode": "numeric", "placeholder": "<SP>", "wide": True},
        ):
            context = {
                "field": form[name],
                "type": "",
                "autocomplete": "",
                "inputmode": "",
                "placeholder": "",
                "wide": False,
            }
            context.update(extra)
            assert tag.render(Context(context)) == include.render(Context(context)), (name, extra)
    assert data == {} or len(form["first_name"].errors) == 2


def test_a_deploy_that_changes_a_template_renders_the_shared_pages_again(settings, tmp_path) -> None:
    from shop.storefront import page_cache

    (tmp_path / "promo.html").write_text("<p>antes</p>")
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [*settings.TEMPLATES[0]["DIRS"], str(tmp_path)]}]
    page_cache._build.cache_clear()
    try:
        before = page_cache._build()
        page_cache._build.cache_clear()
        assert page_cache._build() == before  # the same release: the same entries, on every server
        (tmp_path / "promo.html").write_text("<p>depois</p>")
        page_cache._build.cache_clear()
        assert page_cache._build() != before
    finally:
        page_cache._build.cache_clear()


# --- the CSRF token of the storefront pages (shop/storefront/csrf.py) ---------------------------------------------


def test_the_token_is_djangos_masked_secret_drawn_anew_each_time() -> None:
    """The mask is drawn from one random read, but the token is Django's: 64 allowed characters that unmask to the
    cookie's secret, another on every call (BREACH), and the cookie renewed on the answer as get_token does."""
    request = RequestFactory().get("/")
    request.META["CSRF_COOKIE"] = secret = "a" * 16 + "Z9" * 8
    tokens = {csrf_token(request) for _ in range(400)}
    assert len(tokens) == 400 and request.META["CSRF_COOKIE_NEEDS_UPDATE"] is True
    assert all(len(t) == 64 and set(t) <= set(CSRF_ALLOWED_CHARS) for t in tokens)
    assert {_unmask_cipher_token(t) for t in tokens} == {secret}
    masks = "".join(t[:32] for t in tokens)  # 12,800 draws over 62 characters: each about 206 times
    assert set(masks) == set(CSRF_ALLOWED_CHARS) and max(masks.count(c) for c in CSRF_ALLOWED_CHARS) < 320


def test_without_a_cookie_the_token_is_djangos_own() -> None:
    request = RequestFactory().get("/")
    token = csrf_token(request)
    assert _unmask_cipher_token(token) == request.META["CSRF_COOKIE"]  # Django made the secret (and its cookie)
    assert request.META["CSRF_COOKIE_NEEDS_UPDATE"] is True


def test_the_cart_and_checkout_tokens_pass_djangos_check(product: Product) -> None:
    buyer = Client(enforce_csrf_checks=True)
    _html(buyer)  # the cookie
    token = next(iter(_csrf(_html(buyer))))
    assert buyer.post("/carrinho/adicionar", {"sku": "SKU-CAFE", "quantity": "1", "csrfmiddlewaretoken": token})[
        "Location"
    ].endswith("/carrinho/")
    cart = _html(buyer, "/carrinho/")
    cart_tokens = _csrf(cart)
    assert len(cart_tokens) == 1 and cart.count(next(iter(cart_tokens))) >= 3  # every form of the view has it
    assert _csrf(_html(buyer, "/carrinho/")).isdisjoint(cart_tokens)  # another view, another mask
    secret = buyer.cookies["csrftoken"].value
    assert {_unmask_cipher_token(t) for t in cart_tokens} == {secret}
    change = {"sku": "SKU-CAFE", "quantity": "2", "csrfmiddlewaretoken": next(iter(cart_tokens))}
    assert buyer.post("/carrinho/alterar", change).status_code == 302
    assert 'data-testid="cart-count">2<' in _html(buyer, "/carrinho/")
    forged = {**change, "csrfmiddlewaretoken": "x" * 64}
    assert buyer.post("/carrinho/alterar", forged).status_code == 403
    started = buyer.post("/checkout/", {"csrfmiddlewaretoken": next(iter(cart_tokens))})
    assert started.status_code == 302
    checkout = _html(buyer, started["Location"])
    assert {_unmask_cipher_token(t) for t in _csrf(checkout)} == {secret}
