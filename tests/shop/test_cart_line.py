"""Issue 34: a cart row is built by `{% cart_line %}` (shop/templatetags/storefront.py) instead of the template body
the cart page's loop had. The tag must render byte for byte what that body rendered, for every kind of line: with
an uploaded photo, a path or URL photo, no photo, text to escape, a variant title, big numbers, each language, with
and without a CSRF token (the tag renders Django's own `{% csrf_token %}` node)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.template import Context, Template
from django.urls import NoReverseMatch, reverse, set_script_prefix
from django.utils import translation

from shop.cart import CartLine
from shop.models import Product, ProductImage, Variant
from shop.storefront.paths import path_with

# The loop body of templates/shop/cart/cart.html before the tag (the general path), as it was written there.
TEMPLATE_ROW = """\
        <tr data-sku="{{ line.variant.sku }}">
          <td class="cart-product">{% if line.photo %}<span class="cart-photo">{% product_photo line.photo "cart" line.variant.display_title %}</span>{% endif %}<a href="{{ line.variant.product.get_absolute_url }}">{{ line.variant.display_title }}</a><br><small class="muted">SKU {{ line.variant.sku }}</small></td>
{% fixed %}          <td class="cart-price" data-label="{% translate 'Preço' %}"><span class="money" data-role="money">{% endfixed %}{{ line.variant.price|brl }}</span></td>
{% fixed %}          <td class="cart-qty">
            <form method="post" action="{% url 'checkout:cart_change' %}" class="inline-form" novalidate>
{% endfixed %}              {% csrf_token %}
              <input type="hidden" name="sku" value="{{ line.variant.sku }}">
              <label class="visually-hidden" for="qty-{{ forloop.counter }}">{% blocktranslate with product=line.variant.display_title %}Quantidade de {{ product }}{% endblocktranslate %}</label>
              <input id="qty-{{ forloop.counter }}" class="qty-input" type="number" name="quantity" min="0" max="99" value="{{ line.quantity }}" inputmode="numeric">
              <button type="submit" class="button" aria-label="{% blocktranslate with product=line.variant.display_title %}Atualizar a quantidade de {{ product }}{% endblocktranslate %}">{% translate "Atualizar" %}</button>
              <button type="submit" name="remove" value="1" class="button-link" aria-label="{% blocktranslate with product=line.variant.display_title %}Remover {{ product }} do carrinho{% endblocktranslate %}">{% translate "Remover" %}</button>
{% fixed %}            </form>
          </td>
          <td class="cart-amount" data-label="{% translate 'Total' %}"><span class="money" data-role="money">{% endfixed %}{{ line.amount|brl }}</span></td>
        </tr>"""  # noqa: E501
LOOP = "{%% load i18n money storefront %%}{%% for line in lines %%}\n%s\n      {%% endfor %%}"
GENERAL = Template(LOOP % TEMPLATE_ROW)
FAST = Template(LOOP % "{% cart_line line forloop.counter %}")


def _line(sku: str, title: str, variant_title: str, price: int, quantity: int, photo: ProductImage | None) -> CartLine:
    product = Product(title=title, slug=f"produto-{sku.lower().replace('&', '-')}")
    if photo is not None:
        photo.product = product
    return CartLine(Variant(product=product, sku=sku, title=variant_title, price=price), quantity, photo)


LINES = [
    _line(
        "SKU-CAFE",
        "Café torrado",
        "500 g",
        4290,
        2,
        ProductImage(
            image="produtos/prod_x/cafe.jpg",
            thumbnails={"cart": "produtos/prod_x/cafe_cart.jpg", "cart_2x": "produtos/prod_x/cafe_cart_2x.jpg"},
        ),
    ),
    _line("SKU-A&B", "Caneca \"<b>grande</b>\" & 'azul'", "", 123456789, 99, ProductImage(source="shop/caneca.jpg")),
    _line("SKU-URL", "Foto de fora", "P", 0, 1, ProductImage(source="https://cdn.example.com/a.jpg?x=1&y=2")),
    _line("SKU-SEM-FOTO", "Sem foto", "", 1, 1234, None),
    _line("SKU-A_B-c", "Outro", "G", 5, 1, ProductImage(source="shop/cafe.jpg")),
]


def test_the_cart_page_loops_over_the_tag() -> None:
    page = (Path(settings.BASE_DIR) / "templates/shop/cart/cart.html").read_text()
    start = page.index("{% for line in lines %}") + len("{% for line in lines %}")
    assert page[start : page.index("{% endfor %}", start)] == "\n{% cart_line line forloop.counter %}\n      "


@pytest.mark.parametrize("language", ["pt-br", "en"])
@pytest.mark.parametrize("token", ["Tok3n<&>", None])
def test_a_cart_row_is_what_the_template_rendered(language: str, token: str | None) -> None:
    context = {"lines": LINES} | ({"csrf_token": token} if token is not None else {})
    with translation.override(language):
        general = GENERAL.render(Context(context))
        fast = FAST.render(Context(context))
    assert fast == general
    assert fast.count("<tr ") == len(LINES)
    assert "&quot;&lt;b&gt;grande&lt;/b&gt;&quot;" in fast and 'value="1234"' in fast
    assert ('name="csrfmiddlewaretoken" value="Tok3n&lt;&amp;&gt;"' in fast) is (token == "Tok3n<&>")
    # amounts as the reader writes them (CLDR): "R$42.90" in English, "R$ 42,90" in Portuguese
    money = re.findall(r'data-role="money">(.*?)</span>', fast)
    if language == "en":
        assert money[:3] == ["R$42.90", "R$85.80", "R$1,234,567.89"]
    else:
        assert money[:3] == ["R$ 42,90", "R$ 85,80", "R$ 1.234.567,89"]


def test_a_changed_photo_shows_at_once() -> None:
    """The row's `<img>` is kept per what it is made of: another thumbnail, path or alt text is a new row at once."""
    photo = ProductImage(image="produtos/prod_y/a.jpg", thumbnails={"cart": "a_cart.jpg", "cart_2x": "a_cart_2x.jpg"})
    line = _line("SKU-FOTO", "Foto", "", 100, 1, photo)
    first = FAST.render(Context({"lines": [line]}))
    assert FAST.render(Context({"lines": [line]})) == first and "a_cart_2x.jpg" in first
    photo.thumbnails = {"cart": "b_cart.jpg", "cart_2x": "b_cart_2x.jpg"}
    changed = FAST.render(Context({"lines": [line]}))
    assert "b_cart.jpg" in changed and "a_cart.jpg" not in changed
    assert changed == GENERAL.render(Context({"lines": [line]}))
    line.variant.title = "Nova"  # the alt text is the variant's title
    renamed = FAST.render(Context({"lines": [line]}))
    assert (
        renamed == GENERAL.render(Context({"lines": [line]})) and renamed.count("Nova") == 5
    )  # alt, link, the field's label, the buttons' names


@pytest.mark.parametrize("slug", ["café-moído", "a b", ""])
def test_path_with_refuses_what_reverse_refuses(slug: str) -> None:
    with pytest.raises(NoReverseMatch):
        path_with("shop:product_detail", "slug", slug)


@pytest.mark.parametrize("slug", ["cafe-500g", "Cafe_2", "-"])
def test_path_with_is_reverse(slug: str) -> None:
    """`path_with` (shop/storefront/paths.py) gives what `reverse()` gives, also under another URL prefix."""
    assert path_with("shop:product_detail", "slug", slug) == reverse("shop:product_detail", kwargs={"slug": slug})
    set_script_prefix("/loja/")
    try:
        assert path_with("shop:product_detail", "slug", slug) == reverse("shop:product_detail", kwargs={"slug": slug})
        assert path_with("shop:product_detail", "slug", slug).startswith("/loja/")
    finally:
        set_script_prefix("/")
    assert path_with("checkout:resume", "checkout_id", "checkout_ab12") == reverse(
        "checkout:resume", args=["checkout_ab12"]
    )
