"""Browser tab titles: "Página · Loja" everywhere (home and product pages used "—", cart and checkout "·")."""

from __future__ import annotations

import html
import re

import pytest

from tests.shop.checkout_factories import make_variant

pytestmark = pytest.mark.django_db

PAGES = [
    "/",
    "/produtos/",
    "/produtos/?q=cafe",
    "/produtos/?categoria=cafes",
    "/produtos/sku-cafe-500g/",
    "/produtos/nao-existe/",
    "/carrinho/",
    "/pedido",
    "/termos",
    "/nao-existe",
]


def test_every_storefront_title_names_the_page_then_the_shop_with_one_separator(client) -> None:
    make_variant(price=4290, stock=10, title="Café especial 500 g")
    titles = {}
    for path in PAGES:
        page = client.get(path, follow=True).content.decode()
        titles[path] = html.unescape(re.search(r"<title>([^<]*)</title>", page).group(1)).strip()
    assert {path: title for path, title in titles.items() if "—" in title or not title.endswith(" · Loja Exemplo")} == {
        "/": "Loja Exemplo · Cafés",  # the home: the shop first, then its categories (not the demo's words)
    }
    assert titles["/produtos/sku-cafe-500g/"] == "Café especial 500 g · Loja Exemplo"
