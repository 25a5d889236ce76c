"""Storefront template helpers that every page (including checkout pages) may use."""

from __future__ import annotations

from html import escape

from django import template
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.forms import BoundField
from django.template.base import FilterExpression, TextNode, Variable
from django.template.defaulttags import CommentNode, LoadNode, URLNode
from django.templatetags.i18n import TranslateNode
from django.templatetags.static import StaticNode
from django.urls import get_script_prefix
from django.utils.formats import localize
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

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


def _literal(expression: FilterExpression | None) -> bool:
    """A quoted string with no filter (`'checkout:cart'`, or a `{% translate %}` message): no context read."""
    if expression is None:
        return True
    var = expression.var
    constant = isinstance(var, str) or (isinstance(var, Variable) and var.literal is not None and not var.lookups)
    return constant and not expression.filters


def _fixed(node: template.Node) -> bool:
    """A node whose output depends only on the language, the URL prefix and the settings."""
    if isinstance(node, (TextNode, CommentNode, LoadNode)):
        return True
    if isinstance(node, TranslateNode):
        return node.asvar is None and _literal(node.filter_expression) and _literal(node.message_context)
    if isinstance(node, StaticNode):
        return node.varname is None and _literal(node.path)
    if isinstance(node, URLNode):
        arguments = [*node.args, *node.kwargs.values()]
        return node.asvar is None and _literal(node.view_name) and all(_literal(a) for a in arguments)
    return False


_generation = [0]  # bumped when a test changes a setting: every fixed fragment is rendered again


@receiver(setting_changed)
def _settings_changed(**_kwargs: object) -> None:
    _generation[0] += 1


class FixedNode(template.Node):
    def __init__(self, nodelist: template.NodeList) -> None:
        self.nodelist = nodelist
        self.rendered: dict[tuple[object, ...], SafeString] = {}

    def render(self, context: template.Context) -> str:
        key = (get_language(), get_script_prefix(), context.autoescape, _generation[0])
        html = self.rendered.get(key)
        if html is None:
            html = self.rendered[key] = mark_safe(self.nodelist.render(context))  # noqa: S308 (rendered escaped)
        return html


@register.tag("fixed")
def fixed(parser: template.base.Parser, token: template.base.Token) -> FixedNode:
    """`{% fixed %}…{% endfixed %}`: template text, `{% translate "…" %}`, `{% static "…" %}` and `{% url "…" %}`
    with quoted arguments only, rendered once per language (and URL prefix) by each process and kept with the
    compiled template. A buyer's page holds a few dozen translated labels, each a gettext lookup, escaping and
    node walk per view (a fifth of the checkout page's CPU, issue 34). Anything that reads the context (a
    variable, a filter, `{% csrf_token %}`, another tag) is refused when the template is compiled."""
    if len(token.split_contents()) != 1:
        raise template.TemplateSyntaxError("{% fixed %} takes no argument")
    nodelist = parser.parse(("endfixed",))
    parser.delete_first_token()
    for node in nodelist:
        if not _fixed(node):
            raise template.TemplateSyntaxError(f"{{% fixed %}} holds only text, translate, static and url: {node!r}")
    return FixedNode(nodelist)


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
    here because fourteen includes were a third of the checkout page's CPU (issue 34). Escaped as `format_html`
    does (`_escaped`), without its per-argument lazy-string checks: those were most of this tag's own CPU."""
    errors = field.errors
    name = _escaped(field.id_for_label)
    value = field.value()
    max_length = getattr(field.field, "max_length", None)
    attributes = "".join(
        (
            f' autocomplete="{_escaped(autocomplete)}"' if autocomplete else "",
            f' inputmode="{_escaped(inputmode)}"' if inputmode else "",
            f' placeholder="{_escaped(placeholder)}"' if placeholder else "",
            f' maxlength="{_escaped(max_length)}"' if max_length else "",
            f' aria-invalid="true" aria-describedby="{name}-error"' if errors else "",
        )
    )
    # each error escaped; iterating an ErrorList gives its messages (as the `join` filter did)
    message = (
        f'<p class="field-error" id="{name}-error" data-testid="error-{_escaped(field.name)}">'
        f"{' '.join(_escaped(error) for error in errors)}</p>"
        if errors
        else ""
    )
    return mark_safe(  # noqa: S308 (every value above is escaped)
        f'<div class="field{" field-invalid" if errors else ""}{" field-wide" if wide else ""}">\n'
        f'  <label for="{name}">{_escaped(field.label)}</label>\n'
        f'  <input id="{name}" name="{_escaped(field.html_name)}" type="{_escaped(type or "text")}"'
        f' value="{_escaped(localize("" if value is None else value))}"{attributes}>\n'
        f"  {message}\n</div>\n"
    )


def _escaped(value: object) -> str:
    """`conditional_escape(value)`: safe HTML as it is, anything else through `html.escape` (Django's `escape`)."""
    html = getattr(value, "__html__", None)
    return str(html()) if html is not None else escape(str(value))
