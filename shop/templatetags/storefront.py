"""Storefront template helpers that every page (including checkout pages) may use."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from html import escape

from django import template
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.forms import BoundField
from django.template.base import FilterExpression, TextNode, TokenType, Variable
from django.template.defaulttags import CommentNode, CsrfTokenNode, LoadNode, URLNode
from django.template.loader_tags import BlockNode
from django.templatetags.i18n import BlockTranslateNode, TranslateNode
from django.templatetags.static import StaticNode
from django.urls import get_script_prefix, reverse
from django.utils.formats import localize
from django.utils.functional import Promise
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language, gettext

from kernel.money import format_brl
from shop.cart import CartLine
from shop.catalog.selectors import NavCategory, categories_for_nav
from shop.models import ProductImage
from shop.storefront.page_cache import shared_fragment
from shop.storefront.paths import path_with

register = template.Library()


class SharedNode(template.Node):
    # Opaque to the search for `{% block %}`s that `{% extends %}` repeats over the parent on every render of a
    # child page (base.html's header and footer were most of the nodes it walked): a shared fragment holds no block.
    child_nodelists = ()

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
    if nodelist.get_nodes_by_type(BlockNode):  # one HTML per language: no page could override the block
        raise template.TemplateSyntaxError("{% shared %} cannot hold a {% block %}")
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
    if isinstance(node, BlockTranslateNode):
        # `{% blocktranslate with name="…" %}…{{ name }}…`: every variable one of its own quoted values
        names = {token.contents for token in node.singular if token.token_type == TokenType.VAR}
        literal = all(_literal(value) for value in node.extra_context.values())
        plain = node.asvar is None and not node.plural and node.counter is None
        return plain and literal and _literal(node.message_context) and names <= set(node.extra_context)
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


def _fixed_where(context: template.Context) -> tuple[object, ...]:
    """What a fixed fragment depends on: the language, the URL prefix and the settings' generation. Read once per
    render (a page holds a few dozen fixed parts; each lookup of the language is an asgiref Local read): no
    template switches language or prefix midway ({% language %} is not used)."""
    where = getattr(context.render_context, "fixed_where", None)
    if where is None:
        where = (get_language(), get_script_prefix(), _generation[0])
        context.render_context.fixed_where = where  # type: ignore[attr-defined]
    return where  # type: ignore[no-any-return]


class FixedNode(template.Node):
    child_nodelists = ()  # text, translate, static and url only: nothing a search for blocks or tags looks for

    def __init__(self, nodelist: template.NodeList) -> None:
        self.nodelist = nodelist
        self.rendered: dict[tuple[object, ...], SafeString] = {}

    def render(self, context: template.Context) -> str:
        key = (*_fixed_where(context), context.autoescape)
        html = self.rendered.get(key)
        if html is None:
            html = self.rendered[key] = mark_safe(self.nodelist.render(context))  # noqa: S308 (rendered escaped)
        return html


@register.tag("fixed")
def fixed(parser: template.base.Parser, token: template.base.Token) -> FixedNode:
    """`{% fixed %}…{% endfixed %}`: template text, `{% translate "…" %}`, `{% static "…" %}` and `{% url "…" %}`
    with quoted arguments only (and a `{% blocktranslate with name="…" %}` of its own quoted values), rendered once
    per language (and URL prefix) by each process and kept with the compiled template. A buyer's page holds a few
    dozen translated labels, each a gettext lookup, escaping and node walk per view (a fifth of the checkout
    page's CPU, issue 34). Anything that reads the context (a variable, a filter, `{% csrf_token %}`, another tag)
    is refused when the template is compiled."""
    if len(token.split_contents()) != 1:
        raise template.TemplateSyntaxError("{% fixed %} takes no argument")
    nodelist = parser.parse(("endfixed",))
    parser.delete_first_token()
    for node in nodelist:
        if not _fixed(node):
            raise template.TemplateSyntaxError(
                f"{{% fixed %}} holds only text, translate, blocktranslate of quoted values, static and url: {node!r}"
            )
    return FixedNode(nodelist)


class Unfrozen(Exception):
    """A `{% memo %}` input that cannot be a key (the fragment is then rendered, not kept)."""


_PLAIN = frozenset({type(None), bool, int, str})  # exactly these types (a safe string goes the long way)
_DATACLASS_FIELDS: dict[type, tuple[str, ...]] = {}  # per dataclass: its fields' names (dataclasses.fields is slow)


def _frozen(value: object) -> object:
    """`value` as a hashable key that tells apart every value rendering differently (a safe string from a plain
    one, a lazy string by its text in the current language). The common types are tested by their exact type
    first: a page's memo inputs are a few dozen values, each once per view (issue 34)."""
    kind = type(value)
    if kind in _PLAIN:
        return (kind, value)
    if kind is tuple or kind is list:
        return (tuple, *[_frozen(item) for item in value])  # type: ignore[attr-defined]
    names = _DATACLASS_FIELDS.get(kind)
    if names is not None:
        return (kind, *[_frozen(getattr(value, name)) for name in names])
    if value is None or isinstance(value, (bool, int, str)):
        return (type(value), value)
    if isinstance(value, Promise):
        return (str, str(value))
    if isinstance(value, (list, tuple)):
        return (tuple, *(_frozen(item) for item in value))
    if isinstance(value, dict):
        return (dict, *sorted((str(k), _frozen(v)) for k, v in value.items()))
    if is_dataclass(value) and not isinstance(value, type):
        names = _DATACLASS_FIELDS[kind] = tuple(f.name for f in fields(value))
        return (kind, *[_frozen(getattr(value, name)) for name in names])
    raise Unfrozen(kind.__name__)


MEMO_SIZE = 512  # per {% memo %} node and process: distinct inputs kept, then all dropped at once


class MemoNode(template.Node):
    def __init__(self, nodelist: template.NodeList, inputs: dict[str, FilterExpression]) -> None:
        self.nodelist = nodelist
        self.inputs = inputs
        self.rendered: dict[object, SafeString] = {}

    def render(self, context: template.Context) -> str:
        values = {name: expression.resolve(context) for name, expression in self.inputs.items()}
        try:
            # the inputs in the tag's own order (the same names every time): no sort of their names
            key = (*_fixed_where(context), context.autoescape, *[_frozen(value) for value in values.values()])
        except Unfrozen:
            key = None
        html = self.rendered.get(key) if key is not None else None
        if html is None:
            # only the named inputs: what the fragment shows can depend on nothing else
            html = mark_safe(self.nodelist.render(context.new(values)))  # noqa: S308 (rendered escaped)
            if key is not None:
                if len(self.rendered) >= MEMO_SIZE:
                    self.rendered.clear()
                self.rendered[key] = html
        return html


@register.tag("memo")
def memo(parser: template.base.Parser, token: template.base.Token) -> MemoNode:
    """`{% memo name=expression … %}…{% endmemo %}`: the fragment rendered with only these inputs in its context
    (no request, no context processor, no other variable), kept per distinct value of the inputs, language and URL
    prefix by each process (at most MEMO_SIZE). For a part that many buyers see alike — the payment choice with
    its prices, plans and selected method — so that it is rendered once per distinct state instead of on every
    view (issue 34). Inputs must be plain values (str, int, bool, None, lists, dicts, dataclasses); another object
    renders the fragment every time."""
    inputs: dict[str, FilterExpression] = {}
    for bit in token.split_contents()[1:]:
        name, equals, expression = bit.partition("=")
        if not equals or not name.isidentifier() or name in inputs:
            raise template.TemplateSyntaxError(f"{{% memo %}} takes name=expression inputs: {bit!r}")
        inputs[name] = parser.compile_filter(expression)
    nodelist = parser.parse(("endmemo",))
    parser.delete_first_token()
    return MemoNode(nodelist, inputs)


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


@register.simple_tag(takes_context=True)
def checkout_field(
    context: template.Context,
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
    does (`_escaped`), without its per-argument lazy-string checks: those were most of this tag's own CPU. A field
    without errors is its markup before and after the value, kept per everything that markup shows."""
    errors = field.form.errors.get(field.name)  # as `field.errors`, without an empty ErrorList per field
    value = field.value()
    value_html = _escaped(localize("" if value is None else value))
    # The label and maxlength are the field object's (in this language): keyed by that object, which the entry
    # holds, so its id is not another field's while the entry lives.
    language = _fixed_where(context)[0]  # once per render, not once per field
    shape = (id(field.field), language, field.id_for_label, field.html_name, type, autocomplete, inputmode)
    key = (*shape, placeholder, wide)
    entry = None if errors else _FIELD_PARTS.get(key)
    if entry is None or entry[0] is not field.field:
        entry = (field.field, *_field_parts(field, key, errors))
        if not errors:
            if len(_FIELD_PARTS) >= MEMO_SIZE:
                _FIELD_PARTS.clear()
            _FIELD_PARTS[key] = entry
    return mark_safe(f"{entry[1]}{value_html}{entry[2]}")  # noqa: S308 (every value is escaped)


_FIELD_PARTS: dict[tuple[object, ...], tuple[object, str, str]] = {}


def _field_parts(field: BoundField, key: tuple[object, ...], errors: object) -> tuple[str, str]:
    """The field's markup before and after its value."""
    _, _, id_for_label, html_name, type, autocomplete, inputmode, placeholder, wide = key
    label, max_length, field_name = field.label, getattr(field.field, "max_length", None), field.name
    name = _escaped(id_for_label)
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
        f'<p class="field-error" id="{name}-error" data-testid="error-{_escaped(field_name)}">'
        f"{' '.join(_escaped(error) for error in errors)}</p>"  # type: ignore[attr-defined]
        if errors
        else ""
    )
    return (
        f'<div class="field{" field-invalid" if errors else ""}{" field-wide" if wide else ""}">\n'
        f'  <label for="{name}">{_escaped(label)}</label>\n'
        f'  <input id="{name}" name="{_escaped(html_name)}" type="{_escaped(type or "text")}" value="',
        f'"{attributes}>\n  {message}\n</div>\n',
    )


def _escaped(value: object) -> str:
    """`conditional_escape(value)`: safe HTML as it is, anything else through `html.escape` (Django's `escape`)."""
    html = getattr(value, "__html__", None)
    return str(html()) if html is not None else escape(str(value))


@register.simple_tag(takes_context=True)
def cart_line(context: template.Context, line: CartLine, number: int) -> SafeString:
    """One row of the cart table (`number`: its place, from 1): the HTML the `{% for %}` body of cart.html made with
    twelve variables, two `brl` filters, `{% csrf_token %}` and `{% product_photo %}`, built here because that body
    was a quarter of the cart page's CPU for a one-line cart (issue 34). The labels and the form's action are kept
    per language and URL prefix; every value is escaped as the template escaped it. Compared with the template
    in tests/shop/test_cart_line.py."""
    labels = _cart_line_labels(context)
    variant = line.variant
    sku, title = _escaped(variant.sku), _escaped(variant.display_title)
    photo = (
        f'<span class="cart-photo">{_cart_photo(context, line.photo, variant.display_title)}</span>'
        if line.photo
        else ""
    )
    # as Product.get_absolute_url, without a reverse() per line
    href = path_with("shop:product_detail", "slug", variant.product.slug)
    return mark_safe(  # noqa: S308 (every value is escaped)
        f'        <tr data-sku="{sku}">\n'
        f'          <td class="cart-product">{photo}<a href="{_escaped(href)}">'
        f'{title}</a><br><small class="muted">SKU {sku}</small></td>\n'
        f'          <td class="cart-price" data-label="{labels["price"]}"><span class="money" data-role="money">'
        f"{_escaped(format_brl(variant.price))}</span></td>\n"
        '          <td class="cart-qty">\n'
        f'            <form method="post" action="{labels["action"]}" class="inline-form" novalidate>\n'
        f"              {_CSRF_TOKEN.render(context)}\n"
        f'              <input type="hidden" name="sku" value="{sku}">\n'
        f'              <label class="visually-hidden" for="qty-{_number(number)}">'
        f"{labels['quantity_of'] % {'product': title}}</label>\n"
        f'              <input id="qty-{_number(number)}" class="qty-input" type="number" name="quantity" min="0"'
        f' max="99" value="{_number(line.quantity)}" inputmode="numeric">\n'
        f'              <button type="submit" class="button" aria-label="{labels["update_of"] % {"product": title}}">'
        f"{labels['update']}</button>\n"
        f'              <button type="submit" name="remove" value="1" class="button-link"'
        f' aria-label="{labels["remove_of"] % {"product": title}}">{labels["remove"]}</button>\n'
        "            </form>\n"
        "          </td>\n"
        f'          <td class="cart-amount" data-label="{labels["total"]}"><span class="money" data-role="money">'
        f"{_escaped(format_brl(line.amount))}</span></td>\n"
        "        </tr>"
    )


_CART_PHOTOS: dict[tuple[object, ...], str] = {}


def _cart_photo(context: template.Context, photo: ProductImage, alt: str) -> str:
    """`{% product_photo photo "cart" alt %}`, kept per everything its `<img>` is made of (the files' names, the
    old path or URL, the alt text) and, as a fixed fragment, the settings' generation: the storage and static URLs
    it builds are a fixed function of those."""
    thumbnails = photo.thumbnails if isinstance(photo.thumbnails, dict) else {}
    one, two, _, _ = PHOTO_SIZES["cart"]
    files = (photo.image.name, photo.source, thumbnails.get(one), thumbnails.get(two), alt)
    if not all(part is None or isinstance(part, str) for part in files):
        return product_photo(photo, "cart", alt)  # nothing a key can hold: as the template made it
    key = (*_fixed_where(context), *files)
    html = _CART_PHOTOS.get(key)
    if html is None:
        if len(_CART_PHOTOS) >= MEMO_SIZE:
            _CART_PHOTOS.clear()
        html = _CART_PHOTOS[key] = product_photo(photo, "cart", alt)
    return html


_CART_LINE_LABELS: dict[tuple[object, ...], dict[str, str]] = {}
_CSRF_TOKEN = CsrfTokenNode()  # `{% csrf_token %}` itself (it holds no state)


def _cart_line_labels(context: template.Context) -> dict[str, str]:
    """The row's translated labels and its form's action, escaped, kept as a fixed fragment is (`_fixed_where`)."""
    key = _fixed_where(context)
    labels = _CART_LINE_LABELS.get(key)
    if labels is None:
        labels = _CART_LINE_LABELS[key] = {
            "price": _escaped(gettext("Preço")),
            # each row's field and buttons name its product: a screen reader heard "Quantidade", "Remover" once per
            # line with nothing telling the lines apart (QA walk); "%(product)s" survives escaping, the title is
            # escaped before it goes in
            "quantity_of": _escaped(gettext("Quantidade de %(product)s")),
            "update": _escaped(gettext("Atualizar")),
            "update_of": _escaped(gettext("Atualizar a quantidade de %(product)s")),
            "remove": _escaped(gettext("Remover")),
            "remove_of": _escaped(gettext("Remover %(product)s do carrinho")),
            "total": _escaped(gettext("Total")),
            "action": _escaped(reverse("checkout:cart_change")),
        }
    return labels


def _number(value: int) -> str:
    """An integer as `{{ value }}` shows it: localized (a thousands separator) only from 1000 on."""
    return str(value) if -1000 < value < 1000 else _escaped(localize(value))
