"""Catalog: database constraints and the read selectors (shop/catalog/selectors.py)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction
from django.db.models import F

from shop.catalog.selectors import CatalogQueryError, product_get, product_search, variants_by_sku
from shop.models import Category, Product, ProductImage, Variant

pytestmark = pytest.mark.django_db


def _product(slug: str, title: str, *, category: Category, prices: list[int], stock: int = 5) -> Product:
    product = Product.objects.create(slug=slug, title=title, category=category, description=f"Descrição de {title}")
    for index, price in enumerate(prices):
        Variant.objects.create(product=product, sku=f"{slug.upper()}-{index}", price=price, stock=stock, position=index)
    ProductImage.objects.create(product=product, source=f"shop/demo/{slug}.svg")
    return product


@pytest.fixture
def catalog() -> dict[str, Product]:
    cafes = Category.objects.create(name="Cafés", slug="cafes")
    casa = Category.objects.create(name="Casa", slug="casa")
    return {
        "cafe": _product("cafe-torrado", "Café Torrado Especial", category=cafes, prices=[4290]),
        "caneca": _product("caneca-azul", "Caneca Azul", category=casa, prices=[4900, 5900]),
        "bule": _product("bule-agata", "Bule de Ágata", category=casa, prices=[8990], stock=0),
    }


# --- constraints ------------------------------------------------------------------------------------------


def test_variant_sku_is_unique_in_the_database(catalog: dict[str, Product]) -> None:
    # given an existing SKU
    # when another variant reuses it
    # then the database refuses it
    with pytest.raises(IntegrityError), transaction.atomic():
        Variant.objects.create(product=catalog["caneca"], sku="CAFE-TORRADO-0", price=100, stock=1)


def test_negative_stock_is_rejected_by_the_database(catalog: dict[str, Product]) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Variant.objects.filter(sku="CAFE-TORRADO-0").update(stock=-1)
    assert Variant.objects.get(sku="CAFE-TORRADO-0").stock == 5


def test_negative_price_is_rejected_by_the_database(catalog: dict[str, Product]) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Variant.objects.create(product=catalog["cafe"], sku="NEG-PRICE", price=-1, stock=1)
    assert not Variant.objects.filter(sku="NEG-PRICE").exists()


def test_compare_at_price_below_price_is_rejected(catalog: dict[str, Product]) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Variant.objects.create(product=catalog["cafe"], sku="CMP-LOW", price=5000, compare_at_price=4000, stock=1)


@pytest.mark.postgres
def test_conditional_stock_update_cannot_go_below_zero_on_postgres(catalog: dict[str, Product]) -> None:
    # given 5 units; when two decrements of 3 are attempted as conditional updates (as the checkout does)
    first = Variant.objects.filter(sku="CAFE-TORRADO-0", stock__gte=3).update(stock=F("stock") - 3)
    second = Variant.objects.filter(sku="CAFE-TORRADO-0", stock__gte=3).update(stock=F("stock") - 3)
    # then only the first one applies
    assert (first, second) == (1, 0)
    assert Variant.objects.get(sku="CAFE-TORRADO-0").stock == 2


# --- selectors ----------------------------------------------------------------------------------------------


def test_product_search_lists_active_products_by_title(catalog: dict[str, Product]) -> None:
    Product.objects.filter(pk=catalog["bule"].pk).update(active=False)
    page = product_search(sort="title")
    assert [p.title for p in page.products] == ["Café Torrado Especial", "Caneca Azul"]
    assert (page.total, page.page, page.per_page, page.num_pages) == (2, 1, 24, 1)


def test_product_search_hides_products_without_active_variants(catalog: dict[str, Product]) -> None:
    Variant.objects.filter(product=catalog["cafe"]).update(active=False)
    assert [p.slug for p in product_search(sort="title").products] == ["bule-agata", "caneca-azul"]


def test_product_search_filters_by_category_stock_and_price(catalog: dict[str, Product]) -> None:
    assert [p.slug for p in product_search(category_slug="casa", sort="title").products] == [
        "bule-agata",
        "caneca-azul",
    ]
    assert [p.slug for p in product_search(category_slug="casa", in_stock=True).products] == ["caneca-azul"]
    # any variant price inside the range counts: Caneca Azul has 4900 and 5900
    assert [p.slug for p in product_search(price_min=5000, price_max=6000).products] == ["caneca-azul"]
    assert [p.slug for p in product_search(price_min=8990, sort="title").products] == ["bule-agata"]
    assert [p.slug for p in product_search(price_max=4290).products] == ["cafe-torrado"]


def test_product_search_sorts_by_lowest_variant_price(catalog: dict[str, Product]) -> None:
    assert [p.slug for p in product_search(sort="price_asc").products] == ["cafe-torrado", "caneca-azul", "bule-agata"]
    assert [p.slug for p in product_search(sort="price_desc").products] == ["bule-agata", "caneca-azul", "cafe-torrado"]
    assert [p.slug for p in product_search(sort="newest").products] == ["bule-agata", "caneca-azul", "cafe-torrado"]


def test_product_search_matches_exact_sku(catalog: dict[str, Product]) -> None:
    assert [p.slug for p in product_search(query="caneca-azul-1").products] == ["caneca-azul"]


def test_product_search_ignores_accents_and_case_on_every_backend(catalog: dict[str, Product]) -> None:
    # Postgres uses unaccent + full-text search; the SQLite fallback folds accents and case itself.
    assert [p.slug for p in product_search(query="CAFE").products] == ["cafe-torrado"]
    assert [p.slug for p in product_search(query="ágata").products] == ["bule-agata"]
    assert [p.slug for p in product_search(query="Agata").products] == ["bule-agata"]
    assert product_search(query="chá").total == 0


@pytest.mark.postgres
def test_product_search_ignores_accents_and_plurals_on_postgres(catalog: dict[str, Product]) -> None:
    # "cafe" (no accent) finds "Café", "agata" finds "Ágata", plural "canecas" finds "Caneca"
    assert [p.slug for p in product_search(query="cafe").products] == ["cafe-torrado"]
    assert [p.slug for p in product_search(query="agata").products] == ["bule-agata"]
    assert [p.slug for p in product_search(query="canecas").products] == ["caneca-azul"]
    # a prefix typed so far still finds the product
    assert [p.slug for p in product_search(query="can").products] == ["caneca-azul"]


@pytest.mark.postgres
def test_product_search_ranks_title_matches_first_on_postgres(catalog: dict[str, Product]) -> None:
    Product.objects.filter(pk=catalog["bule"].pk).update(description="Ótimo para passar café coado")
    page = product_search(query="café", sort="relevance")
    assert [p.slug for p in page.products] == ["cafe-torrado", "bule-agata"]


def test_product_search_paginates(catalog: dict[str, Product]) -> None:
    page = product_search(sort="title", per_page=2, page=2)
    assert [p.slug for p in page.products] == ["caneca-azul"]
    assert (page.total, page.num_pages, page.has_previous, page.has_next) == (3, 2, True, False)
    assert (page.start_index, page.end_index) == (3, 3)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"price_min": 5000, "price_max": 100}, "price_min"),
        ({"price_min": -1}, "price_min"),
        ({"price_max": -1}, "price_max"),
        ({"sort": "cheapest"}, "sort"),
        ({"page": 0}, "page"),
        ({"page": 3}, "page"),
        ({"per_page": 51}, "per_page"),
        ({"per_page": 0}, "per_page"),
        ({"category_slug": "nao-existe"}, "category"),
        ({"query": "x" * 201}, "q"),
    ],
)
def test_product_search_rejects_bad_input_naming_the_field(
    catalog: dict[str, Product], kwargs: dict[str, object], field: str
) -> None:
    with pytest.raises(CatalogQueryError) as excinfo:
        product_search(**kwargs)  # type: ignore[arg-type]
    assert excinfo.value.field == field
    assert excinfo.value.message


def test_product_search_query_count_does_not_grow_with_page_size(
    catalog: dict[str, Product], django_assert_num_queries: object
) -> None:
    for index in range(60):
        _product(f"extra-{index}", f"Extra {index}", category=catalog["cafe"].category, prices=[1000, 2000])
    # count + page + variants + images, whatever the page size; templates then run no query
    for per_page in (12, 50):
        with django_assert_num_queries(4):  # type: ignore[operator]
            page = product_search(per_page=per_page)
            for product in page.products:
                _ = [v.sku for v in product.variants.all()], [i.url for i in product.images.all()]
                _ = product.category.name
        assert len(page.products) == per_page


def test_product_get_by_slug_and_public_id_prefetched(
    catalog: dict[str, Product], django_assert_num_queries: object
) -> None:
    caneca = catalog["caneca"]
    with django_assert_num_queries(3):  # type: ignore[operator]
        by_slug = product_get(slug="caneca-azul")
        assert by_slug is not None
        assert [v.sku for v in by_slug.variants.all()] == ["CANECA-AZUL-0", "CANECA-AZUL-1"]
        assert by_slug.category.slug == "casa"
    by_id = product_get(public_id=caneca.public_id)
    assert by_id is not None and by_id.pk == caneca.pk
    assert caneca.public_id.startswith("prod_")


def test_product_get_returns_none_for_unknown_or_inactive(catalog: dict[str, Product]) -> None:
    Product.objects.filter(pk=catalog["bule"].pk).update(active=False)
    assert product_get(slug="bule-agata") is None
    assert product_get(slug="nao-existe") is None
    assert product_get(public_id="prod_000") is None
    assert product_get(public_id="prod_\x00") is None  # PostgreSQL cannot even receive a NUL
    with pytest.raises(ValueError, match="exactly one"):
        product_get()


def test_variants_by_sku_one_query_skips_unknown_and_inactive(
    catalog: dict[str, Product], django_assert_num_queries: object
) -> None:
    Variant.objects.filter(sku="CANECA-AZUL-1").update(active=False)
    with django_assert_num_queries(1):  # type: ignore[operator]
        found = variants_by_sku(["CAFE-TORRADO-0", "CANECA-AZUL-1", "NOPE", "CANECA-AZUL-0"])
        titles = {sku: v.product.title for sku, v in found.items()}
    assert titles == {"CAFE-TORRADO-0": "Café Torrado Especial", "CANECA-AZUL-0": "Caneca Azul"}
    assert variants_by_sku([]) == {}
    assert variants_by_sku(["SKU\x00"]) == {}


def test_default_listing_puts_sold_out_products_after_the_others(catalog: dict[str, Product], client) -> None:
    """QA F8: "Bule de Ágata" (no stock, no backorder) was the first card of its category, by title."""
    assert [p.slug for p in product_search(category_slug="casa").products] == ["caneca-azul", "bule-agata"]
    # an explicit sort is the buyer's choice and stays as asked
    assert [p.slug for p in product_search(category_slug="casa", sort="title").products] == [
        "bule-agata",
        "caneca-azul",
    ]
    # the storefront's category page (and its first card) says the same
    html = client.get("/produtos/?category=casa").content.decode()
    assert html.index("/produtos/caneca-azul/") < html.index("/produtos/bule-agata/")
    # a search too: the sold-out exact match goes after the product that can be bought
    _product("caneca", "Caneca", category=catalog["caneca"].category, prices=[3000], stock=0)
    assert [p.slug for p in product_search(query="caneca").products] == ["caneca-azul", "caneca"]
    # taking backorders counts as available: back in title order
    Variant.objects.filter(product=catalog["bule"]).update(allow_backorder=True)
    assert [p.slug for p in product_search(category_slug="casa").products] == ["bule-agata", "caneca-azul", "caneca"]
