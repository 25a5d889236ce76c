"""Catalog reads (contracts.md). Every selector runs a fixed number of queries, whatever the page size.

`product_search` and `product_get` prefetch the category, the *active* variants (as
`product.variants.all()`) and the images, so templates, schema.org and BCP presenters never query.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector, TrigramWordSimilarity
from django.db import connection
from django.db.models import (
    Exists,
    F,
    FloatField,
    Func,
    Max,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    StringAgg,
    Subquery,
    TextField,
    Value,
)
from django.db.models.functions import Cast, Concat
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from kernel.ops import request_cache
from shop.catalog import search
from shop.catalog.search import search_words
from shop.checkout.fulfillment import CACHE_KEY as SHIPPING_KEY
from shop.checkout.stock import CACHE_SECONDS as CATALOG_SECONDS
from shop.checkout.stock import VERSION_KEY, catalog_version
from shop.models import Category, Product, ProductImage, Variant
from shop.models.store import CACHE_KEY

_SLUG = re.compile(r"^[-a-zA-Z0-9_]{1,140}$")
SORT_OPTIONS: tuple[str, ...] = ("relevance", "price_asc", "price_desc", "newest", "title")
MAX_PER_PAGE = 50
MAX_QUERY_LENGTH = 200
# BigIntegerField headroom; larger filters are typos, not prices.
MAX_PRICE_CENTS = 10**12


class CatalogQueryError(ValueError):
    """Bad catalog input: `field` names the offending parameter, `message` says what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class ProductPage:
    products: list[Product]  # variants (active only), images and category prefetched
    total: int
    page: int
    per_page: int
    num_pages: int

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.num_pages

    @property
    def start_index(self) -> int:
        return 0 if self.total == 0 else (self.page - 1) * self.per_page + 1

    @property
    def end_index(self) -> int:
        return min(self.page * self.per_page, self.total)


def query_shortened(query: str) -> tuple[str, bool]:
    """`query` cut to MAX_QUERY_LENGTH at a word boundary, and whether it was cut: a page (where a pasted text
    is a person's slip) searches the start and says so; an API caller gets the CatalogQueryError instead."""
    query = (query or "").strip()
    if len(query) <= MAX_QUERY_LENGTH:
        return query, False
    cut = query[: MAX_QUERY_LENGTH + 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > 0 else cut[:MAX_QUERY_LENGTH]).strip(), True


def _active_variants() -> QuerySet[Variant]:
    return Variant.objects.filter(active=True).order_by("position", "id")


def _prefetched(qs: QuerySet[Product]) -> QuerySet[Product]:
    return qs.select_related("category").prefetch_related(
        Prefetch("variants", queryset=_active_variants()),
        Prefetch("images", queryset=ProductImage.objects.order_by("position", "id")),
    )


def _sellable_products() -> QuerySet[Product]:
    # A product without any active variant cannot be bought, so it is not shown either.
    return Product.objects.filter(active=True).filter(
        Exists(Variant.objects.filter(product=OuterRef("pk"), active=True))
    )


def _validate(
    *, query: str, in_stock: bool, price_min: int | None, price_max: int | None, sort: str, page: int, per_page: int
) -> None:
    if "\x00" in query:
        # PostgreSQL text cannot hold NUL; refuse it here instead of failing in the driver.
        raise CatalogQueryError("q", _("A busca contém caracteres inválidos."))
    if len(query) > MAX_QUERY_LENGTH:
        raise CatalogQueryError("q", _("A busca pode ter no máximo %(n)d caracteres.") % {"n": MAX_QUERY_LENGTH})
    for field, value in (("price_min", price_min), ("price_max", price_max)):
        if value is not None and not (0 <= value <= MAX_PRICE_CENTS):
            raise CatalogQueryError(field, _("O preço deve ser um valor positivo."))
    if price_min is not None and price_max is not None and price_min > price_max:
        raise CatalogQueryError("price_min", _("O preço mínimo não pode ser maior que o preço máximo."))
    if sort not in SORT_OPTIONS:
        raise CatalogQueryError(
            "sort", _("Ordenação desconhecida. Use uma de: %(opts)s.") % {"opts": ", ".join(SORT_OPTIONS)}
        )
    if not isinstance(per_page, int) or not (1 <= per_page <= MAX_PER_PAGE):
        raise CatalogQueryError("per_page", _("Itens por página deve estar entre 1 e %(n)d.") % {"n": MAX_PER_PAGE})
    if not isinstance(page, int) or page < 1:
        raise CatalogQueryError("page", _("A página deve ser um número inteiro a partir de 1."))


# pg_trgm word_similarity from which a word counts as a typo of a word of the title ("camizeta" ~ "camiseta").
TYPO_SIMILARITY = 0.45


def _unaccent(expression: Any) -> Func:
    return Func(expression, function="unaccent")


def _variant_text(*, postgres: bool) -> Subquery:
    """The active variants' titles and option values ("Em grãos Moído 250 g"), one string per product."""
    if postgres:
        # Only the values of the options JSON ({"moagem": "Em grãos"} → ["Em grãos"]): a key such as "cor"
        # would make every product with colours match a search for "cor".
        values: Any = Cast(Func(F("options"), template="jsonb_path_query_array(%(expressions)s, '$.*')"), TextField())
    else:
        values = Func(F("options"), function="shop_option_values", output_field=TextField())
    text = Concat(F("title"), Value(" "), values, output_field=TextField())
    return Subquery(
        Variant.objects.filter(product=OuterRef("pk"), active=True)
        .order_by()
        .values("product")
        .annotate(text=StringAgg(text, delimiter=Value(" ")))
        .values("text")[:1],
        output_field=TextField(),
    )


def _sqlite_search(qs: QuerySet[Product], plan: search.Plan, sku_match: Exists) -> QuerySet[Product]:
    """Every group of the plan somewhere in title, brand, category, variants or description, as typed or
    inflected (Snowball stems, as Postgres's `portuguese`); ranked by where the words are."""
    # SQLite has neither unaccent() nor a Portuguese stemmer: register ours on this connection (cheap, idempotent).
    connection.ensure_connection()
    raw = connection.connection
    raw.create_function("shop_option_values", 1, search.option_values, deterministic=True)
    raw.create_function("shop_search_rank", 6, search.sqlite_rank, deterministic=True)
    if not plan:
        return qs.filter(sku_match).annotate(rank=Value(0.0))
    rank = Func(
        Value(search.plan_json(plan)),
        F("title"),
        F("brand"),
        F("category__name"),
        _variant_text(postgres=False),
        F("description"),
        function="shop_search_rank",
        output_field=FloatField(),
    )
    return qs.annotate(rank=rank).filter(Q(rank__gt=0) | sku_match)


def _tsquery(plan: search.Plan) -> SearchQuery:
    """AND of the groups, each an OR of its alternatives (a phrase's words ANDed by plainto_tsquery)."""
    combined: SearchQuery | None = None
    for group in plan:
        either: SearchQuery | None = None
        for alternative in group:
            term = SearchQuery(" ".join(alternative), config="portuguese", search_type="plain")
            either = term if either is None else either | term
        assert either is not None  # a group always holds its own word
        combined = either if combined is None else combined & either
    assert combined is not None
    return combined


def _apply_search(qs: QuerySet[Product], query: str) -> tuple[QuerySet[Product], bool]:
    """Filter by the free-text query; returns the queryset and whether a `rank` annotation exists."""
    sku_match = Exists(Variant.objects.filter(product=OuterRef("pk"), active=True, sku__iexact=query))
    plan = search.search_plan(query, search.synonyms_load())
    if connection.vendor != "postgresql":
        # The embedded SQLite database: accent- and case-folded, stemmed words, in any order.
        return _sqlite_search(qs, plan, sku_match), True
    if not plan:
        return qs.filter(sku_match | Q(title__unaccent__icontains=query)).annotate(rank=Value(0.0)), True
    # Accents ignored on both sides ("cafe" finds "Café": the plan's words are folded); title weighs more than
    # brand, category and the variants' titles and option values ("Em grãos"), which weigh more than the
    # description.
    vector = (
        SearchVector(_unaccent(F("title")), weight="A", config="portuguese")
        + SearchVector(_unaccent(F("brand")), weight="B", config="portuguese")
        + SearchVector(_unaccent(F("category__name")), weight="B", config="portuguese")
        + SearchVector(_unaccent(_variant_text(postgres=True)), weight="B", config="portuguese")
        + SearchVector(_unaccent(F("description")), weight="C", config="portuguese")
    )
    terms = _tsquery(plan)
    qs = qs.annotate(document=vector, rank=SearchRank(vector, terms))
    return qs.filter(
        # Full-text match (@@; ts_rank alone is not a match test), a prefix typed so far ("camis"), or a SKU.
        Q(document=terms) | Q(title__unaccent__icontains=query) | sku_match
    ), True


def _typo_search(qs: QuerySet[Product], query: str) -> QuerySet[Product] | None:
    """Postgres, when the query found nothing: every word found as typed (title, brand, category, description)
    or close to a word of the title (pg_trgm), "camizeta preta" → "Camiseta Básica Preta"; ranked by closeness.

    Only a fallback: trigram closeness cannot tell a typo from another word ("caneca" is as close to "canetas"
    as "camizeta" is to "camiseta"), so it never adds hits to a query that already found something.
    """
    words = [word for word in search_words(query) if len(word) >= 3]
    if connection.vendor != "postgresql" or not words:
        return None
    # Closeness to the title only: a short brand word ("Bom") would be as close to "bourbom" as "Bourbon" is.
    title = _unaccent(F("title"))
    text = _unaccent(
        Concat(
            F("title"),
            Value(" "),
            F("brand"),
            Value(" "),
            F("category__name"),
            Value(" "),
            F("description"),
            output_field=TextField(),
        )
    )
    similar = {f"_typo_{i}": TrigramWordSimilarity(Value(word), title) for i, word in enumerate(words)}
    qs = qs.annotate(_text=text, **similar)
    for i, word in enumerate(words):
        qs = qs.filter(Q(_text__icontains=word) | Q(**{f"_typo_{i}__gte": TYPO_SIMILARITY}))
    rank: Any = Value(0.0)
    for alias in similar:
        rank = rank + F(alias)
    return qs.annotate(rank=rank)


def _ordered(qs: QuerySet[Product], *, sort: str, ranked: bool) -> QuerySet[Product]:
    qs = qs.annotate(
        min_price=Subquery(_active_variants().filter(product=OuterRef("pk")).order_by("price").values("price")[:1])
    )
    if sort == "relevance":
        # The default listing (a category, a search) shows what can be bought first: a product none of whose
        # variants has stock or takes backorders goes after the others, in the same order among themselves.
        orderable = _active_variants().filter(product=OuterRef("pk")).filter(Q(stock__gt=0) | Q(allow_backorder=True))
        qs = qs.annotate(orderable=Exists(orderable))
    ordering = {
        "relevance": ["-orderable", "-rank", "title", "id"] if ranked else ["-orderable", "title", "id"],
        "price_asc": ["min_price", "title", "id"],
        "price_desc": ["-min_price", "title", "id"],
        "newest": ["-created_at", "-id"],
        "title": ["title", "id"],
    }[sort]
    return qs.order_by(*ordering)


def product_search(
    *,
    query: str = "",
    category_slug: str = "",
    in_stock: bool = False,
    price_min: int | None = None,
    price_max: int | None = None,
    sort: str = "relevance",
    page: int = 1,
    per_page: int = 24,
) -> ProductPage:
    """One page of active products matching the filters. Prices are centavos; filters apply to variant prices.

    Raises CatalogQueryError(field, message) for bad input (unknown sort or category, price_min > price_max,
    page out of range, per_page outside 1..50, a query longer than MAX_QUERY_LENGTH). Queries: category check (if
    any), count, page, variants, images; with a query, the merchant's synonyms when not cached, and one more count
    only when it found nothing (the typo retry).
    """
    query = (query or "").strip()
    _validate(
        query=query,
        in_stock=in_stock,
        price_min=price_min,
        price_max=price_max,
        sort=sort,
        page=page,
        per_page=per_page,
    )
    qs = _sellable_products()
    if category_slug:
        if not _SLUG.match(category_slug) or not Category.objects.filter(slug=category_slug).exists():
            raise CatalogQueryError("category", _("Categoria desconhecida: “%(slug)s”.") % {"slug": category_slug})
        # Sub-categories are included: "Casa & Cozinha" lists its children's products too.
        qs = qs.filter(Q(category__slug=category_slug) | Q(category__parent__slug=category_slug))
    if in_stock:
        qs = qs.filter(Exists(Variant.objects.filter(product=OuterRef("pk"), active=True, stock__gt=0)))
    if price_min is not None or price_max is not None:
        priced = Variant.objects.filter(product=OuterRef("pk"), active=True)
        if price_min is not None:
            priced = priced.filter(price__gte=price_min)
        if price_max is not None:
            priced = priced.filter(price__lte=price_max)
        qs = qs.filter(Exists(priced))
    searched, ranked = _apply_search(qs, query) if query else (qs, False)
    searched = _ordered(searched, sort=sort, ranked=ranked)
    total = searched.count()
    if total == 0 and query:
        # Nothing as typed: one more count, only then, to try the query as a typo.
        typo = _typo_search(qs, query)
        if typo is not None:
            searched = _ordered(typo, sort=sort, ranked=True)
            total = searched.count()
    qs = searched
    num_pages = max(1, math.ceil(total / per_page))
    if page > num_pages:
        missing = ngettext(
            "A página %(page)d não existe; há %(n)d página.",
            "A página %(page)d não existe; há %(n)d páginas.",
            num_pages,
        )
        raise CatalogQueryError("page", missing % {"page": page, "n": num_pages})
    offset = (page - 1) * per_page
    products = list(_prefetched(qs)[offset : offset + per_page])
    return ProductPage(products=products, total=total, page=page, per_page=per_page, num_pages=num_pages)


def product_get(*, slug: str | None = None, public_id: str | None = None) -> Product | None:
    """An active product by slug or public id (`prod_…`), prefetched like `product_search`; None if absent."""
    if (slug is None) == (public_id is None):
        raise ValueError("product_get needs exactly one of slug= or public_id=")
    lookup = {"slug": slug} if slug is not None else {"public_id": public_id}
    if "\x00" in (slug or public_id or ""):
        return None  # no row can match, and PostgreSQL would refuse the parameter
    return _prefetched(Product.objects.filter(active=True, **lookup)).first()


def _live_sql() -> str:
    product, variant = Product._meta.db_table, Variant._meta.db_table  # from the models; the slug is a parameter
    return (
        f"SELECT v.id, v.stock, v.price, v.active, v.allow_backorder FROM {product} p"  # noqa: S608
        f" LEFT JOIN {variant} v ON v.product_id = p.id WHERE p.slug = %s AND p.active ORDER BY v.id"
    )


def product_live_signature(slug: str) -> tuple[tuple[Any, ...], ...] | None:
    """What of an active product's page moves without a save signal: each variant's (id, stock, price, active,
    allow_backorder), or None when no active product has `slug`. One hand-written statement (no ORM compile): the
    storefront's shared product page is rendered again when it changes (shop/storefront/page_cache.py)."""
    if "\x00" in slug:
        return None  # no row can match, and PostgreSQL would refuse the parameter
    with connection.cursor() as cursor:
        cursor.execute(_live_sql(), [slug])
        rows = cursor.fetchall()
    return tuple(tuple(row) for row in rows) if rows else None


def variants_by_sku(skus: Iterable[str]) -> dict[str, Variant]:
    """Sellable variants (variant and product active) by SKU, product select_related; one query.

    Unknown or inactive SKUs are simply absent from the result.
    """
    wanted = {sku for sku in skus if sku and "\x00" not in sku}
    if not wanted:
        return {}
    variants = Variant.objects.filter(sku__in=wanted, active=True, product__active=True).select_related("product")
    return {variant.sku: variant for variant in variants}


def variant_titles(skus: Iterable[str]) -> dict[str, str]:
    """The buyer-facing title ("Produto — Variante") of each known SKU, sellable or not; one query (none for no
    SKUs). Unknown SKUs are absent."""
    wanted = {sku for sku in skus if sku and "\x00" not in sku}
    if not wanted:
        return {}
    return {
        variant.sku: variant.display_title
        for variant in Variant.objects.filter(sku__in=wanted).select_related("product")
    }


def feed_products() -> list[Product]:
    """Every sellable product with its active variants, photos and category, for the sitemap and the product
    feeds; three queries whatever the catalog's size."""
    return list(_prefetched(_sellable_products()).order_by("pk"))


def sitemap_products() -> QuerySet[Product]:
    """Sellable products, only what a sitemap entry needs (slug, updated_at); one query."""
    return _sellable_products().only("slug", "updated_at").order_by("pk")


def sitemap_categories() -> QuerySet[Category]:
    """Categories holding a sellable product, each with `last_product_change` (its latest product change)."""
    sellable = Q(products__active=True, products__variants__active=True)
    return (
        Category.objects.annotate(last_product_change=Max("products__updated_at", filter=sellable))
        .filter(last_product_change__isnull=False)
        .only("slug")
        .order_by("position", "name")
    )


@dataclass(frozen=True)
class NavCategory:
    name: str
    url: str


NAV_KEY = "shop:nav-categories:v1"
NAV_SECONDS = 3600  # a category save bumps the catalog version; this bounds a missed bump (Redis)


def categories_for_nav() -> list[NavCategory]:
    """Top-level categories, ordered for menus (every page's header): kept in the cache with the catalog version
    they were read at (a save of a category bumps it, shop/receivers.py), read with it in one round trip; one
    query when stale."""
    request_cache.prefetch(VERSION_KEY, NAV_KEY)
    version = catalog_version()
    entry = request_cache.get(NAV_KEY)
    if isinstance(entry, tuple) and len(entry) == 2 and entry[0] == version:
        return list(entry[1])
    # Only categories with something on sale, directly or in a subcategory (QA walk: a new shop's empty
    # "Acessórios" led every visitor to "Nenhum produto encontrado").
    rows = (
        Category.objects.filter(parent__isnull=True)
        .filter(Q(products__active=True) | Q(children__products__active=True))
        .distinct()
        .order_by("position", "name")
    )
    items = tuple(NavCategory(category.name, category.get_absolute_url()) for category in rows)
    # local memory: another process cannot hear the bump, so as long as a catalog snapshot
    request_cache.set(NAV_KEY, (version, items), NAV_SECONDS if settings.REDIS_URL else CATALOG_SECONDS)
    return list(items)


def product_price_range(product: Product) -> tuple[int, int] | None:
    """(lowest, highest) active variant price in centavos from the prefetched variants; None without variants."""
    prices = [variant.price for variant in product.variants.all()]
    return (min(prices), max(prices)) if prices else None


def product_availability(product: Product) -> str:
    """schema.org availability name of the product as a whole: InStock, PreOrder or OutOfStock."""
    states = {variant.availability for variant in product.variants.all()}
    for state in ("InStock", "PreOrder"):
        if state in states:
            return state
    return "OutOfStock"


def checkout_read_keys(*, pricing: bool) -> list[str]:
    """The read-mostly cache entries a checkout request reads (the version token of the store settings and
    their policies; with `pricing`, also the shipping table's and the catalog version), for a caller that can
    fetch them in one round trip beforehand (`kernel.ops.request_cache.prefetch`). The values themselves are
    kept by each process under those tokens (kernel/ops/kept.py)."""
    return [CACHE_KEY, SHIPPING_KEY, VERSION_KEY] if pricing else [CACHE_KEY]
