"""Storefront template helpers that every page (including checkout pages) may use."""

from __future__ import annotations

from django import template
from django.forms import BoundField
from django.utils.formats import localize
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe

from shop.catalog.selectors import NavCategory, categories_for_nav
from shop.models import ProductImage
from shop.storefront.page_cache import shared_fragment

register = template.Library()


class SharedNode(template.Node):
    def __init__(self, name: str, nodelist: template.NodeList) -> None:
        self.name = name
        self.nodelist = nodelist

    def render(self, context: template.Context) -> str:
        return shared_fragment(self.name, context, self.nodelist.render)


@register.tag("shared")
def shared(parser: template.base.Parser, token: template.base.Token) -> SharedNode:
    """`{% shared "header" %}…{% endshared %}`: a part of base.html that is the same for every buyer but for the
    CSRF token, cart count, search box and language form's `next` (shop/storefront/page_cache.py)."""
    bits = token.split_contents()
    if len(bits) != 2 or bits[1][0] not in "\"'" or bits[1][0] != bits[1][-1]:
        raise template.TemplateSyntaxError("{% shared %} takes one quoted name")
    nodelist = parser.parse(("endshared",))
    parser.delete_first_token()
    return SharedNode(bits[1][1:-1], nodelist)


@register.simple_tag
def nav_categories() -> list[NavCategory]:
    """Top-level categories for the header menu (cached with the catalog version)."""
    return categories_for_nav()


# Storefront photo sizes: (1× alias, 2× alias, width in px, `sizes` for the browser's pick).
PHOTO_SIZES = {
    "card": ("card", "card_2x", 320, "(max-width: 640px) 50vw, 320px"),
    "detail": ("detail", "detail_2x", 600, "(max-width: 800px) 100vw, 600px"),
    "cart": ("cart", "cart_2x", 64, ""),
}


@register.filter
def photo_of(photos: dict[int, ProductImage], product_id: int) -> ProductImage | None:
    """`{{ photos|photo_of:product.pk }}`: a product's main photo from a `product_main_photos` dict."""
    return photos.get(product_id)


@register.simple_tag
def product_photo(image: ProductImage, size: str, alt: str, *, lazy: bool = True) -> str:
    """`<img>` of a product photo at a storefront size, from the thumbnails made at upload: `srcset` with the
    1× and 2× files, lazy loading, fixed dimensions (no layout shift). Old path/URL photos show as they are."""
    one, two, width, sizes = PHOTO_SIZES[size]
    src, src_2x = image.alias_url(one), image.alias_url(two)
    loading = mark_safe(' loading="lazy"') if lazy else ""
    if src == src_2x:  # no thumbnails (a path or URL photo): the picture itself
        return format_html('<img src="{}" alt="{}" width="{}" height="{}"{}>', src, alt, width, width, loading)
    if sizes:
        return format_html(
            '<img src="{}" srcset="{} {}w, {} {}w" sizes="{}" alt="{}" width="{}" height="{}" decoding="async"{}>',
            src, src, width, src_2x, width * 2, sizes, alt, width, width, loading,
        )  # fmt: skip
    return format_html(
        '<img src="{}" srcset="{} 1x, {} 2x" alt="{}" width="{}" height="{}" decoding="async"{}>',
        src, src, src_2x, alt, width, width, loading,
    )  # fmt: skip


@register.simple_tag
def checkout_field(
    field: BoundField,
    *,
    type: str = "",
    autocomplete: str = "",
    inputmode: str = "",
    placeholder: str = "",
    wide: bool = False,
) -> SafeString:
    """One labelled input of the checkout form, with its errors: the HTML the `_field.html` include made, built
    here because fourteen includes were a third of the checkout page's CPU (issue 34)."""
    errors = field.errors
    name = field.id_for_label
    value = field.value()
    max_length = getattr(field.field, "max_length", None)
    attributes = [
        format_html(' autocomplete="{}"', autocomplete) if autocomplete else "",
        format_html(' inputmode="{}"', inputmode) if inputmode else "",
        format_html(' placeholder="{}"', placeholder) if placeholder else "",
        format_html(' maxlength="{}"', max_length) if max_length else "",
        format_html(' aria-invalid="true" aria-describedby="{}-error"', name) if errors else "",
    ]
    message = (
        format_html(
            '<p class="field-error" id="{}-error" data-testid="error-{}">{}</p>',
            name,
            field.name,
            # each one escaped; iterating an ErrorList gives its messages (as the `join` filter did)
            mark_safe(" ".join(conditional_escape(error) for error in errors)),  # type: ignore[arg-type]  # noqa: S308
        )
        if errors
        else ""
    )
    return format_html(
        '<div class="field{}{}">\n  <label for="{}">{}</label>\n'
        '  <input id="{}" name="{}" type="{}" value="{}"{}>\n  {}\n</div>\n',
        " field-invalid" if errors else "",
        " field-wide" if wide else "",
        name,
        field.label,
        name,
        field.html_name,
        type or "text",
        localize("" if value is None else value),
        mark_safe("".join(attributes)),  # noqa: S308 (each one built by format_html)
        message,
    )
