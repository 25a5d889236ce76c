"""Being found (issue 35, item 6): /sitemap.xml, /robots.txt, the Google Merchant Center feed and the JSON catalog
feed for agents, with availability and price read from the stock at request time.

The sitemap is held to the sitemaps.org 0.9 schema (sitemap.xsd: `urlset` of `url` with `loc` (absolute, at most
2,048 characters), optional `lastmod` (W3C datetime), `changefreq` (its enumeration) and `priority` (0.0–1.0), no
other element); the feed to Merchant Center's product data specification (support.google.com/merchants/answer/7052112).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.test.utils import override_settings
from django.utils.timezone import localtime
from jsonschema import Draft202012Validator
from referencing import Resource

from shop.catalog.identifiers import validate_gtin
from shop.models import Category, Product, ProductImage, Variant
from shop.models.store import STORE_ROW_ID, StoreSettings
from tests.bcp_app.bcp_fixtures import bcp_settings  # noqa: F401 (the profile needs a signing key)
from tests.bcp_app.schema_check import BASE as SCHEMA_BASE
from tests.bcp_app.schema_check import VENDORED, registry

pytestmark = pytest.mark.django_db
BASE = "https://loja.example.com.br"
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
G = "{http://base.google.com/ns/1.0}"
CHANGEFREQ = {"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"}
# W3C Datetime as sitemaps.org allows it (YYYY-MM-DD, or with time and zone).
W3C_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$")
GOOGLE_PRICE = re.compile(r"^\d+\.\d{2} BRL$")
# Products and categories (a count and the rows each), the store settings row (policies) and its updated_at.
SITEMAP_QUERIES = 6
REQUIRED_FEED_FIELDS = ("id", "title", "description", "link", "image_link", "availability", "price")


@pytest.fixture
def catalog() -> dict[str, Product]:
    cafes = Category.objects.create(name="Cafés", slug="cafes", position=0)
    roupas = Category.objects.create(name="Camisetas", slug="camisetas", position=1)
    papel = Category.objects.create(name="Papelaria", slug="papelaria", position=2)
    Category.objects.create(name="Vazia", slug="vazia", position=3)  # no product: not in the sitemap
    cafe = Product.objects.create(
        title="Café especial 500 g",
        slug="cafe-especial-500g",
        description="Torra média.",
        brand="Torra Mineira",
        category=cafes,
    )
    Variant.objects.create(product=cafe, sku="SKU-CAFE-500G", price=4290, stock=10, gtin="7891000315507")
    ProductImage.objects.create(product=cafe, source="https://cdn.example.com/cafe.jpg", is_main=True)
    camiseta = Product.objects.create(
        title="Camiseta básica", slug="camiseta-basica", description="Algodão.", brand="", category=roupas
    )
    for position, (size, stock) in enumerate((("P", 3), ("M", 0))):
        Variant.objects.create(
            product=camiseta,
            sku=f"CAM-{size}",
            title=size,
            options={"tamanho": size, "cor": "Preta"},
            price=5990,
            compare_at_price=7990 if size == "P" else None,
            stock=stock,
            position=position,
        )
    ProductImage.objects.create(product=camiseta, source="/media/camiseta.jpg", is_main=True)
    agenda = Product.objects.create(title="Agenda 2027", slug="agenda-2027", description="", category=papel)
    Variant.objects.create(product=agenda, sku="AGENDA-27", price=3900, stock=0, allow_backorder=True, mpn="AG27")
    ProductImage.objects.create(product=agenda, source="https://cdn.example.com/agenda.jpg", is_main=True)
    caneta = Product.objects.create(title="Caneta", slug="caneta", description="Azul.", category=papel)
    Variant.objects.create(product=caneta, sku="CANETA-AZUL", price=500, stock=50)  # no photo
    hidden = Product.objects.create(title="Fora de linha", slug="fora-de-linha", category=papel, active=False)
    Variant.objects.create(product=hidden, sku="OLD-1", price=100, stock=5)
    return {"cafe": cafe, "camiseta": camiseta, "agenda": agenda}


def _sitemap_urls(client: Client, max_queries: Callable[[int], Any] | None = None) -> dict[str, dict[str, str]]:
    if max_queries is None:
        response = client.get("/sitemap.xml")
    else:
        with max_queries(SITEMAP_QUERIES):
            response = client.get("/sitemap.xml")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/xml"
    root = ET.fromstring(response.content)  # noqa: S314 (the shop's own answer in a test)
    # the shape of sitemap.xsd: urlset > url > (loc, lastmod?, changefreq?, priority?), nothing else
    assert root.tag == f"{{{SITEMAP_NS}}}urlset"
    urls: dict[str, dict[str, str]] = {}
    for url in root:
        assert url.tag == f"{{{SITEMAP_NS}}}url"
        children = {child.tag.removeprefix(f"{{{SITEMAP_NS}}}"): (child.text or "") for child in url}
        assert len(children) == len(url)  # no element twice
        assert set(children) <= {"loc", "lastmod", "changefreq", "priority"}
        loc = children["loc"]
        assert loc.startswith(f"{BASE}/") and len(loc) <= 2048
        if "lastmod" in children:
            assert W3C_DATETIME.match(children["lastmod"]), children["lastmod"]
        if "changefreq" in children:
            assert children["changefreq"] in CHANGEFREQ
        if "priority" in children:
            assert 0.0 <= float(children["priority"]) <= 1.0
        urls[loc] = children
    assert len(urls) <= 50_000
    return urls


@override_settings(BCP_PUBLIC_URL=BASE)
def test_sitemap_lists_products_categories_and_policy_pages_with_lastmod(
    client: Client, catalog: dict[str, Product], django_assert_max_num_queries: Callable[[int], Any]
) -> None:
    # given the store settings saved once (the policy texts live there)
    StoreSettings.objects.update_or_create(pk=STORE_ROW_ID, defaults={"trade_name": "Loja Exemplo"})
    store_changed = StoreSettings.objects.get(pk=STORE_ROW_ID).updated_at
    cafe = Product.objects.get(slug="cafe-especial-500g")
    # when (a fixed number of statements whatever the catalog's size)
    urls = _sitemap_urls(client, django_assert_max_num_queries)
    # then every sellable product, every category with one, the home, the catalog and the four policies
    assert sorted(urls) == sorted(
        [
            f"{BASE}/produtos/cafe-especial-500g/",
            f"{BASE}/produtos/camiseta-basica/",
            f"{BASE}/produtos/agenda-2027/",
            f"{BASE}/produtos/caneta/",
            f"{BASE}/produtos/?category=cafes",
            f"{BASE}/produtos/?category=camisetas",
            f"{BASE}/produtos/?category=papelaria",
            f"{BASE}/",
            f"{BASE}/produtos/",
            f"{BASE}/termos",
            f"{BASE}/privacidade",
            f"{BASE}/trocas-e-devolucoes",
            f"{BASE}/entrega",
        ]
    )
    # lastmod is the store's local date (TIME_ZONE America/Sao_Paulo; Django's sitemap writes "Y-m-d")
    assert urls[f"{BASE}/produtos/cafe-especial-500g/"]["lastmod"] == localtime(cafe.updated_at).strftime("%Y-%m-%d")
    assert (
        urls[f"{BASE}/produtos/?category=cafes"]["lastmod"] == urls[f"{BASE}/produtos/cafe-especial-500g/"]["lastmod"]
    )
    assert urls[f"{BASE}/entrega"]["lastmod"] == localtime(store_changed).strftime("%Y-%m-%d")


@override_settings(BCP_PUBLIC_URL=BASE)
def test_sitemap_leaves_out_a_policy_hosted_elsewhere_and_ignores_the_host_header(
    client: Client, catalog: dict[str, Product]
) -> None:
    StoreSettings.objects.update_or_create(pk=STORE_ROW_ID, defaults={"terms_url": "https://juridico.example/termos"})
    urls = _sitemap_urls(Client(HTTP_HOST="localhost"))
    assert f"{BASE}/termos" not in urls
    assert not [url for url in urls if "juridico" in url or "localhost" in url]


@override_settings(BCP_PUBLIC_URL=BASE)
def test_robots_txt_names_the_sitemap_and_keeps_private_pages_out(client: Client) -> None:
    response = client.get("/robots.txt")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    lines = response.content.decode().splitlines()
    assert f"Sitemap: {BASE}/sitemap.xml" in lines
    assert lines[0] == "User-agent: *"
    for private in ("/admin/", "/checkout/", "/carrinho/", "/orders/", "/pedido", "/comprar", "/api/"):
        assert f"Disallow: {private}" in lines


@override_settings(BCP_PUBLIC_URL=BASE)
def test_robots_txt_blocks_nothing_the_sitemap_or_the_feeds_list(client: Client, catalog: dict[str, Product]) -> None:
    disallowed = [
        line.removeprefix("Disallow: ")
        for line in client.get("/robots.txt").content.decode().splitlines()
        if line.startswith("Disallow: ")
    ]
    paths = [url.removeprefix(BASE) for url in _sitemap_urls(client)]
    paths += ["/feeds/google-merchant.xml", "/feeds/catalogo.json", "/sitemap.xml"]
    assert [p for p in paths if any(p.startswith(prefix) for prefix in disallowed)] == []


def _feed_items(client: Client) -> dict[str, dict[str, list[str]]]:
    response = client.get("/feeds/google-merchant.xml")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/rss+xml; charset=utf-8"
    root = ET.fromstring(response.content)  # noqa: S314 (the shop's own answer in a test)
    assert (root.tag, root.get("version")) == ("rss", "2.0")
    assert response.content.decode().count('xmlns:g="http://base.google.com/ns/1.0"') == 1
    channel = root.find("channel")
    assert channel is not None
    assert [channel.findtext(name) for name in ("title", "link")] == ["Loja Exemplo", f"{BASE}/"]
    items: dict[str, dict[str, list[str]]] = {}
    for item in channel.findall("item"):
        fields: dict[str, list[str]] = {}
        for child in item:
            assert child.tag.startswith(G), child.tag
            fields.setdefault(child.tag.removeprefix(G), []).append(child.text or "")
        for name in REQUIRED_FEED_FIELDS:
            assert fields.get(name, [""])[0], f"{fields.get('id')}: {name} is required"
        assert fields["availability"][0] in {"in_stock", "out_of_stock", "preorder", "backorder"}
        assert GOOGLE_PRICE.match(fields["price"][0])
        items[fields["id"][0]] = fields
    return items


@override_settings(BCP_PUBLIC_URL=BASE)
def test_merchant_feed_has_the_required_fields_per_variant(
    client: Client, catalog: dict[str, Product], django_assert_max_num_queries
) -> None:
    # when (products, variants, photos, and the store settings)
    with django_assert_max_num_queries(5):
        items = _feed_items(client)
    # then one item per active variant of an active product; one without a photo is left out (Merchant Center
    # disapproves items without image_link, and a placeholder image is against its rules)
    assert sorted(items) == ["AGENDA-27", "CAM-M", "CAM-P", "SKU-CAFE-500G"]
    assert items["SKU-CAFE-500G"] == {
        "id": ["SKU-CAFE-500G"],
        "title": ["Café especial 500 g"],
        "description": ["Torra média."],
        "link": [f"{BASE}/produtos/cafe-especial-500g/"],
        "image_link": ["https://cdn.example.com/cafe.jpg"],
        "availability": ["in_stock"],
        "price": ["42.90 BRL"],
        "condition": ["new"],
        "brand": ["Torra Mineira"],
        "gtin": ["7891000315507"],
        "product_type": ["Cafés"],
        "shipping_weight": ["500 g"],
    }
    camiseta = Product.objects.get(slug="camiseta-basica")
    # variants share item_group_id and carry their size and colour; a "de" price makes the price a sale price
    assert items["CAM-P"]["item_group_id"] == items["CAM-M"]["item_group_id"] == [camiseta.public_id]
    assert (items["CAM-P"]["title"], items["CAM-P"]["link"]) == (
        ["Camiseta básica — P"],
        [f"{BASE}/produtos/camiseta-basica/?sku=CAM-P"],
    )
    assert (items["CAM-P"]["size"], items["CAM-P"]["color"]) == (["P"], ["Preta"])
    assert (items["CAM-P"]["price"], items["CAM-P"]["sale_price"]) == (["79.90 BRL"], ["59.90 BRL"])
    assert (items["CAM-M"]["price"], "sale_price" in items["CAM-M"]) == (["59.90 BRL"], False)
    assert items["CAM-M"]["availability"] == ["out_of_stock"]
    assert items["CAM-P"]["image_link"] == [f"{BASE}/media/camiseta.jpg"]
    # no GTIN and no brand + MPN pair: Merchant Center wants identifier_exists "no"
    assert items["CAM-P"]["identifier_exists"] == ["no"]
    assert "identifier_exists" not in items["SKU-CAFE-500G"]
    # an empty description falls back to the title (the field is required)
    assert items["AGENDA-27"]["description"] == ["Agenda 2027"]


@override_settings(BCP_PUBLIC_URL=BASE, SHOP_FEED_BACKORDER_DAYS=30)
def test_merchant_feed_backorder_carries_its_availability_date(client: Client, catalog: dict[str, Product]) -> None:
    before = datetime.now(UTC).replace(second=0, microsecond=0)
    item = _feed_items(client)["AGENDA-27"]
    assert item["availability"] == ["backorder"]
    date = datetime.strptime(item["availability_date"][0], "%Y-%m-%dT%H:%MZ").replace(tzinfo=UTC)
    assert before + timedelta(days=30) <= date <= before + timedelta(days=30, minutes=2)
    assert item["mpn"] == ["AG27"]


@override_settings(BCP_PUBLIC_URL=BASE)
def test_feeds_follow_stock_and_price_at_once(client: Client, catalog: dict[str, Product]) -> None:
    # given the coffee in stock at R$ 42,90
    assert _feed_items(client)["SKU-CAFE-500G"]["availability"] == ["in_stock"]
    # when it sells out and its price changes
    Variant.objects.filter(sku="SKU-CAFE-500G").update(stock=0, price=4590)
    # then both feeds say so on the next read
    item = _feed_items(client)["SKU-CAFE-500G"]
    assert (item["availability"], item["price"]) == (["out_of_stock"], ["45.90 BRL"])
    offer = _catalog_feed(client)["cafe-especial-500g"]["offers"]
    assert (offer["availability"], offer["price"]) == ("https://schema.org/OutOfStock", 45.9)
    # and an inactive variant leaves them
    Variant.objects.filter(sku="CAM-M").update(active=False)
    assert "CAM-M" not in _feed_items(client)


@override_settings(BCP_PUBLIC_URL=BASE)
def test_merchant_feed_survives_characters_xml_forbids(client: Client, catalog: dict[str, Product]) -> None:
    Product.objects.filter(slug="cafe-especial-500g").update(description="Torra\x0b média </g:description> & co")
    assert _feed_items(client)["SKU-CAFE-500G"]["description"] == ["Torra média </g:description> & co"]


def _catalog_feed(client: Client) -> dict[str, dict[str, object]]:
    response = client.get("/feeds/catalogo.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/ld+json"
    feed = json.loads(response.content)
    assert (feed["@context"], feed["@type"]) == ("https://schema.org", "DataFeed")
    return {element["item"]["url"].rsplit("/", 2)[-2]: element["item"] for element in feed["dataFeedElement"]}


@override_settings(BCP_PUBLIC_URL=BASE)
def test_catalog_feed_gives_agents_the_product_pages_json_ld(client: Client, catalog: dict[str, Product]) -> None:
    # when
    products = _catalog_feed(client)
    page = client.get("/produtos/camiseta-basica/").content.decode()
    page_json_ld = json.loads(re.findall(r'<script type="application/ld\+json">(.*?)</script>', page, re.S)[0])
    # then each element is the product page's JSON-LD (seed 002: one vocabulary), plus gtin/mpn when known
    assert sorted(products) == ["agenda-2027", "cafe-especial-500g", "camiseta-basica", "caneta"]
    assert products["camiseta-basica"] == page_json_ld
    assert products["cafe-especial-500g"]["offers"] == {
        "@type": "Offer",
        "sku": "SKU-CAFE-500G",
        "price": 42.9,
        "priceCurrency": "BRL",
        "availability": "https://schema.org/InStock",
        "url": f"{BASE}/produtos/cafe-especial-500g/",
        "gtin": "7891000315507",
    }


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("7891000315508", "o dígito verificador não confere"),
        ("789100031550", "o dígito verificador não confere"),
        ("78910003155", "8, 12, 13 ou 14 dígitos"),
        ("7891-000315507", "8, 12, 13 ou 14 dígitos"),
    ],
)
def test_gtin_is_checked_with_a_portuguese_message(value: str, error: str) -> None:
    validate_gtin("7891000315507")
    validate_gtin("")
    with pytest.raises(ValidationError, match=error):
        validate_gtin(value)


def _feed_capability_errors(entry: dict[str, object]) -> list[str]:
    # Our schema (bcp_app/jsonschemas) beside the spec's, which hold capability.json.
    document = json.loads((VENDORED / "shopping" / "catalog_feed.json").read_text())
    with_ours = registry().with_resource(document["$id"], Resource.from_contents(document))
    ref = f"{SCHEMA_BASE}shopping/catalog_feed.json#/$defs/br.dev.bcp.shopping.catalog.feed/business_schema"
    validator = Draft202012Validator({"$ref": ref}, registry=with_ours)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(entry)]


@pytest.mark.usefixtures("bcp_settings")
def test_bcp_profile_links_the_feeds_for_bulk_discovery(client: Client, catalog: dict[str, Product]) -> None:
    # when an agent reads the business profile
    entries = client.get("/.well-known/bcp").json()["ucp"]["capabilities"]["br.dev.bcp.shopping.catalog.feed"]
    # then one entry points at the three documents, valid against the capability's schema
    assert entries == [
        {
            "version": "2026-07-28",
            "spec": "https://bcp.dev.br/draft/specification/catalog/feed",
            "schema": "https://bcp.dev.br/draft/schemas/shopping/catalog_feed.json",
            "config": {
                "endpoint": f"{BASE}/feeds/catalogo.json",
                "merchant_feed": f"{BASE}/feeds/google-merchant.xml",
                "sitemap": f"{BASE}/sitemap.xml",
            },
        }
    ]
    assert _feed_capability_errors(entries[0]) == []
    assert _feed_capability_errors({**entries[0], "config": {"endpoint": "http://x/feed"}}) != []
    # and the endpoint answers the catalog
    feed = client.get(entries[0]["config"]["endpoint"].removeprefix(BASE)).json()
    assert (feed["@type"], len(feed["dataFeedElement"]), feed["url"]) == ("DataFeed", 4, f"{BASE}/feeds/catalogo.json")
