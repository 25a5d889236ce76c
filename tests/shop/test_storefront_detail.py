"""Product detail page: variant choice, price, availability, add-to-cart form, schema.org JSON-LD, language."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.test.utils import override_settings

from bcp_app.service.catalogue.contracts import ProductDetailInput, ProductDetailOk
from bcp_app.service.catalogue.reads import product_detail
from shop.catalog.schema_org import product_schema_org
from shop.catalog.selectors import product_get
from shop.demo.seed import seed_catalog
from shop.models import Product, Variant

pytestmark = pytest.mark.django_db
BASE = "https://loja.example.com.br"


@pytest.fixture
def demo() -> None:
    seed_catalog()


def _html(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def _json_ld(html: str) -> dict[str, object]:
    blocks = re.findall(r'<script type="application/ld\+json">(.*?)</script>', html, flags=re.S)
    assert len(blocks) == 1
    return json.loads(blocks[0])


def _hidden_sku(html: str) -> str:
    match = re.search(r'<input type="hidden" name="sku" value="([^"]*)"', html)
    assert match
    return match.group(1)


def test_detail_shows_price_availability_and_add_to_cart_form(client: Client, demo: None) -> None:
    html = _html(client, "/produtos/cafe-especial-500g/")
    assert "<h1>Café especial 500 g</h1>" in html
    assert '<span class="price-now" data-role="price">R$ 42,90</span>' in html
    assert 'data-testid="availability">Em estoque<' in html
    form = re.search(r'<form class="add-to-cart" method="post" action="/carrinho/adicionar".*?</form>', html, re.S)
    assert form
    assert 'name="csrfmiddlewaretoken"' in form.group(0)
    assert 'name="quantity" value="1"' in form.group(0)
    assert _hidden_sku(html) == "SKU-CAFE-500G"


@override_settings(BCP_PUBLIC_URL=BASE)
def test_detail_shows_compare_at_price_and_open_graph(client: Client, demo: None) -> None:
    html = _html(client, "/produtos/pixel-10-pro/")
    assert "R$ 6.999,00" in html
    assert f'<meta property="og:image" content="{BASE}/media/demo/pixel-10-pro.jpg">' in html
    assert '<meta property="product:price:amount" content="6999.00">' in html
    assert '<s class="price-was" data-role="compare-at">R$ 7.999,00</s>' in html


def test_variant_chosen_by_option_value(client: Client, demo: None) -> None:
    html = _html(client, "/produtos/camiseta-basica-preta/?tamanho=M")
    assert _hidden_sku(html) == "CAM-BAS-PRETA-M"
    assert re.search(r'<input type="radio" name="tamanho" value="M" checked>', html)
    for size in ("P", "M", "G"):
        assert f'name="tamanho" value="{size}"' in html


def test_variant_chosen_by_sku_out_of_stock_disables_button(client: Client, demo: None) -> None:
    html = _html(client, "/produtos/camiseta-basica-preta/?sku=CAM-BAS-PRETA-G")
    assert _hidden_sku(html) == "CAM-BAS-PRETA-G"
    assert 'data-testid="availability">Esgotado<' in html
    assert re.search(r'data-role="add-button"\s+disabled', html)


def test_default_variant_is_the_first_available(client: Client, demo: None) -> None:
    # Caneca: Verde 14, Azul 2, Terracota 0 → Verde; Marrom/M of Café com Leite is out → Bege/M first
    assert _hidden_sku(_html(client, "/produtos/caneca-ceramica-esmaltada/")) == "CAN-CER-VERDE"
    Variant.objects.filter(sku="CAN-CER-VERDE").update(stock=0)
    assert _hidden_sku(_html(client, "/produtos/caneca-ceramica-esmaltada/")) == "CAN-CER-AZUL"


def test_backorder_variant_shows_pre_order(client: Client, demo: None) -> None:
    html = _html(client, "/produtos/agenda-2027-semanal/")
    assert 'data-testid="availability">Sob encomenda<' in html
    assert not re.search(r'data-role="add-button"\s+disabled', html)


def test_unknown_or_inactive_product_is_404(client: Client, demo: None) -> None:
    response = client.get("/produtos/nao-existe/")
    assert response.status_code == 404
    assert 'data-testid="product-not-found"' in response.content.decode()
    Product.objects.filter(slug="bule-agata-branco-1l").update(active=False)
    assert client.get("/produtos/bule-agata-branco-1l/").status_code == 404


@override_settings(BCP_PUBLIC_URL=BASE)
def test_json_ld_single_offer_matches_product(client: Client, demo: None) -> None:
    data = _json_ld(_html(client, "/produtos/cafe-especial-500g/"))
    product = Product.objects.get(slug="cafe-especial-500g")
    url = f"{BASE}/produtos/cafe-especial-500g/"
    assert data == {
        "@context": "https://schema.org",
        "@type": "Product",
        "productID": product.public_id,
        "name": "Café especial 500 g",
        "description": product.description,
        "url": url,
        "sku": "SKU-CAFE-500G",
        "image": f"{BASE}/media/demo/cafe-especial-500g.jpg",
        "brand": {"@type": "Brand", "name": "Torra Mineira"},
        "category": "Cafés",
        "offers": {
            "@type": "Offer",
            "sku": "SKU-CAFE-500G",
            "price": 42.9,
            "priceCurrency": "BRL",
            "availability": "https://schema.org/InStock",
            "url": url,
        },
    }


@override_settings(BCP_PUBLIC_URL=BASE)
def test_json_ld_aggregate_offer_lists_each_variant(client: Client, demo: None) -> None:
    offers = _json_ld(_html(client, "/produtos/camiseta-basica-preta/"))["offers"]
    assert isinstance(offers, dict)
    assert {
        k: offers[k] for k in ("@type", "lowPrice", "highPrice", "priceCurrency", "offerCount", "availability")
    } == {
        "@type": "AggregateOffer",
        "lowPrice": 59.9,
        "highPrice": 59.9,
        "priceCurrency": "BRL",
        "offerCount": 3,
        "availability": "https://schema.org/InStock",
    }
    assert [(o["sku"], o["price"], o["availability"], o["url"]) for o in offers["offers"]] == [
        (sku, 59.9, f"https://schema.org/{state}", f"{BASE}/produtos/camiseta-basica-preta/?sku={sku}")
        for sku, state in (
            ("CAM-BAS-PRETA-P", "InStock"),
            ("CAM-BAS-PRETA-M", "InStock"),
            ("CAM-BAS-PRETA-G", "OutOfStock"),
        )
    ]


@override_settings(BCP_PUBLIC_URL=BASE)
def test_json_ld_offer_price_has_the_shape_of_product_detail_seed_002(client: Client, demo: None) -> None:
    """Seed 002 ("o mesmo vocabulário em todas as superfícies"): the page's JSON-LD and the `product.detail` tool
    give one Offer shape, `price` a JSON number of reais (42.9), never the string "42.90" (issue 35, item 7)."""
    page = _json_ld(_html(client, "/produtos/cafe-especial-500g/"))
    detail = product_detail(ProductDetailInput(slug="cafe-especial-500g"))
    assert isinstance(detail, ProductDetailOk)
    tool_offer = detail.model_dump(mode="json", by_alias=True, exclude_none=True)["product"]["offers"]
    assert page["offers"] == tool_offer
    assert json.dumps(page["offers"]["price"]) == "42.9"  # type: ignore[index]


def test_json_ld_availability_pre_order_and_out_of_stock(demo: None) -> None:
    agenda = product_get(slug="agenda-2027-semanal")
    panela = product_get(slug="panela-de-barro-capixaba")
    assert agenda is not None and panela is not None
    assert product_schema_org(agenda, base_url=BASE)["offers"]["availability"] == "https://schema.org/PreOrder"  # type: ignore[index]
    assert product_schema_org(panela, base_url=BASE)["offers"]["availability"] == "https://schema.org/OutOfStock"  # type: ignore[index]


def test_json_ld_cannot_be_broken_out_of_by_product_text(client: Client, demo: None) -> None:
    Product.objects.filter(slug="bloco-de-notas-cordel").update(description="</script><script>alert(1)</script> & co")
    html = _html(client, "/produtos/bloco-de-notas-cordel/")
    assert "</script><script>alert(1)" not in html
    assert _json_ld(html)["description"] == "</script><script>alert(1)</script> & co"


def test_language_switch_to_english_and_back(client: Client, demo: None) -> None:
    # given the default pt-BR page; when English is chosen through set_language; then pages render in English
    assert "Adicionar ao carrinho" in _html(client, "/produtos/cafe-especial-500g/")
    response = client.post("/i18n/setlang/", {"language": "en", "next": "/produtos/cafe-especial-500g/"})
    assert response.status_code == 302
    assert response["Location"] == "/produtos/cafe-especial-500g/"
    html = _html(client, "/produtos/cafe-especial-500g/")
    assert '<html lang="en">' in html
    assert "Add to cart" in html and "In stock" in html
    assert "R$42.90" in html and "R$ 42,90" not in html  # in reais, written the English way (CLDR)
    client.post("/i18n/setlang/", {"language": "pt-br", "next": "/"})
    assert "Adicionar ao carrinho" in _html(client, "/produtos/cafe-especial-500g/")


def test_english_list_page_names_bad_parameter(client: Client, demo: None) -> None:
    client.post("/i18n/setlang/", {"language": "en", "next": "/"})
    html = _html(client, "/produtos/?price_min=abc")
    assert "<code>price_min</code>" in html
    assert "is not a valid price" in html
