"""`{% fixed %}` (shop/templatetags/storefront.py, issue 34): the buyer-independent text of the cart and checkout
pages, rendered once per language and URL prefix by each process; anything reading the context is refused."""

from __future__ import annotations

import pytest
from django.template import Context, Template, TemplateSyntaxError
from django.test import override_settings
from django.urls import set_script_prefix
from django.utils import translation

TEXT = (
    '{% load i18n static storefront %}{% fixed %}<a href="{% url "checkout:cart" %}">{% translate "Carrinho" %}</a>'
    '<img src="{% static "shop/logo.svg" %}">{% endfixed %}'
)


def test_a_fixed_fragment_follows_the_language_and_the_url_prefix() -> None:
    template = Template(TEXT)
    with translation.override("pt-br"):
        assert template.render(Context()) == '<a href="/carrinho/">Carrinho</a><img src="/static/shop/logo.svg">'
    with translation.override("en"):
        assert template.render(Context()) == '<a href="/carrinho/">Cart</a><img src="/static/shop/logo.svg">'
    set_script_prefix("/loja/")
    try:
        with translation.override("pt-br"):
            assert template.render(Context()).startswith('<a href="/loja/carrinho/">Carrinho</a>')
    finally:
        set_script_prefix("/")


def test_a_fixed_fragment_is_rendered_again_after_a_settings_change() -> None:
    template = Template(TEXT)
    with translation.override("pt-br"):
        template.render(Context())
        with override_settings(STATIC_URL="/arquivos/"):
            assert '<img src="/arquivos/shop/logo.svg">' in template.render(Context())


@pytest.mark.parametrize(
    "body",
    [
        "{{ request.path }}",
        "{% csrf_token %}",
        '{% translate "Carrinho"|upper %}',
        "{% translate message %}",
        '{% translate "Carrinho" as label %}',
        '{% url "checkout:resume" checkout_id %}',
        "{% static path %}",
        "{% if x %}a{% endif %}",
    ],
)
def test_anything_reading_the_context_is_refused_when_compiled(body: str) -> None:
    with pytest.raises(TemplateSyntaxError):
        Template("{% load i18n static storefront %}{% fixed %}" + body + "{% endfixed %}")


def test_a_blocktranslate_of_its_own_quoted_values_is_fixed_and_one_reading_the_context_is_refused() -> None:
    own = '{% blocktranslate with terms="/termos" %}Veja os <a href="{{ terms }}">termos</a>.{% endblocktranslate %}'
    template = Template("{% load i18n storefront %}{% fixed %}" + own + "{% endfixed %}")
    with translation.override("pt-br"):
        assert template.render(Context({"terms": "/outro"})) == 'Veja os <a href="/termos">termos</a>.'
    for body in (
        '{% blocktranslate with terms="/termos" %}{{ terms }} {{ name }}{% endblocktranslate %}',  # `name`: context
        "{% blocktranslate with terms=path %}{{ terms }}{% endblocktranslate %}",
        "{% blocktranslate count n=3 %}um{% plural %}{{ n }}{% endblocktranslate %}",
    ):
        with pytest.raises(TemplateSyntaxError):
            Template("{% load i18n storefront %}{% fixed %}" + body + "{% endfixed %}")


def test_a_shared_fragment_holds_no_block_and_a_child_page_still_fills_the_blocks_around_it() -> None:
    # `{% shared %}` and `{% fixed %}` are opaque to the `{% extends %}` search for blocks (issue 34), so a block
    # inside one could never be overridden: it is refused when compiled.
    with pytest.raises(TemplateSyntaxError):
        Template('{% load storefront %}{% shared "header" %}{% block nav %}{% endblock %}{% endshared %}')
    with pytest.raises(TemplateSyntaxError):
        Template("{% load storefront %}{% fixed %}{% block nav %}{% endblock %}{% endfixed %}")
    parent = Template(
        '{% load storefront %}{% shared "x" %}<h1>{% fixed %}Loja{% endfixed %}</h1>{% endshared %}'
        "{% block content %}vazio{% endblock %}"
    )
    child = Template("{% extends parent %}{% block content %}<p>{{ text }}</p>{% endblock %}")
    assert child.render(Context({"parent": parent, "text": "<b>"})) == "<h1>Loja</h1><p>&lt;b&gt;</p>"
