"""Storefront search on the demo catalog: words in any order, accents and case ignored, plurals and other
inflections (Portuguese Snowball stems), the variants' titles and option values, the merchant's synonyms, on
PostgreSQL and on the embedded SQLite store (the same cases run there in a subprocess on a real SQLite file);
typos on PostgreSQL (pg_trgm), ranked.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from shop.catalog.search import search_plan, synonyms_load
from shop.catalog.selectors import MAX_QUERY_LENGTH, CatalogQueryError, product_search, search_words
from shop.demo.seed import seed_catalog
from shop.models import SearchSynonym, Variant

pytestmark = pytest.mark.django_db

CAFES = [
    "cafe-bourbon-amarelo-250g",
    "cafe-cerrado-mineiro-1kg",
    "cafe-especial-250g",
    "cafe-especial-500g",
    "cafe-organico-sul-de-minas-500g",
    "camiseta-cafe-com-leite",
    "capsulas-espresso-10",
    "coador-de-pano-kit-3",
    "ebook-guia-do-cafe-especial",
]


@pytest.fixture
def demo() -> None:
    seed_catalog()


def _slugs(query: str, sort: str = "title") -> list[str]:
    return [product.slug for product in product_search(query=query, sort=sort, per_page=50).products]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # the examples: 0 results on SQLite before
        ("camiseta preta", ["camiseta-basica-preta"]),
        ("preta camiseta", ["camiseta-basica-preta"]),
        ("bourbon cafe", ["cafe-bourbon-amarelo-250g"]),
        ("cafe bourbon", ["cafe-bourbon-amarelo-250g"]),
        ("cafe moido", ["cafe-bourbon-amarelo-250g"]),
        ("CAFÉ MOÍDO", ["cafe-bourbon-amarelo-250g"]),
        # stopwords do not have to be in the product; words in any order
        ("panela de barro", ["panela-de-barro-capixaba"]),
        ("usb cabo", ["cabo-usb-c-trancado-2m"]),
        ("camiseta branca", ["camiseta-basica-branca"]),
        ("cafe", CAFES),
        ("camiseta pijama", []),
        ("xyz", []),
        # an exact SKU still finds its product
        ("CAF-BOURBON-MOIDO", ["cafe-bourbon-amarelo-250g"]),
    ],
)
def test_words_in_any_order_accents_ignored_on_every_database(demo, query, expected) -> None:
    # sorted: "title" order follows the database's collation, which differs between PostgreSQL and SQLite
    assert sorted(_slugs(query)) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # in the title first, then only in the description (alphabetical order would be the other way round)
        ("bluetooth", ["fone-bluetooth-samba", "caixa-de-som-prova-dagua"]),
        ("espresso", ["capsulas-espresso-10", "cafe-cerrado-mineiro-1kg"]),
    ],
)
def test_relevance_puts_title_hits_before_description_hits_on_every_database(demo, query, expected) -> None:
    # all in stock: the demo's capsules are sold out, and a sold-out product goes last (test_catalog.py)
    Variant.objects.update(stock=5)
    assert _slugs(query, sort="relevance") == expected


CAMISETAS = [
    "camiseta-basica-branca",
    "camiseta-basica-preta",
    "camiseta-cafe-com-leite",
    "camiseta-estampa-ipe-amarelo",
    "camiseta-infantil-arara",
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # issue 33: plurals found nothing on the embedded store
        ("canecas", ["caneca-ceramica-esmaltada"]),
        ("cadernos", ["caderno-pontilhado-a5-chita"]),
        ("fones", ["fone-bluetooth-samba"]),
        ("bules", ["bule-agata-branco-1l"]),
        ("carregadores", ["carregador-usb-c-30w"]),
        ("camiseta pretas", ["camiseta-basica-preta"]),
        ("CAMISETAS PRETAS", ["camiseta-basica-preta"]),
        # the variants' titles and option values are searched ("Em grãos", "Marrom" exist only there)
        ("graos", ["cafe-bourbon-amarelo-250g"]),
        ("grãos", ["cafe-bourbon-amarelo-250g"]),
        ("cafe em graos", ["cafe-bourbon-amarelo-250g"]),
        ("camiseta marrom", ["camiseta-cafe-com-leite"]),
        ("bege", ["camiseta-cafe-com-leite"]),
        # an option's name is not a product's word: "moagem" is only in the e-book's description
        ("moagem", ["ebook-guia-do-cafe-especial"]),
        # the demo's synonyms (admin, "Sinônimos da busca"), their plurals too; the regata says "camiseta"
        ("camisa", [*CAMISETAS, "regata-copacabana"]),
        ("camisas pretas", ["camiseta-basica-preta"]),
        ("celulares", ["pixel-10-pro"]),
        ("headphone", ["fone-bluetooth-samba"]),
        ("fone de ouvido", ["fone-bluetooth-samba"]),
        ("xícaras", ["caneca-ceramica-esmaltada"]),
    ],
)
def test_plurals_variant_words_and_synonyms_on_every_database(demo, query, expected) -> None:
    assert sorted(_slugs(query)) == expected


def test_a_synonym_typed_in_the_admin_finds_products_at_once_and_stops_when_deleted(admin_client, demo) -> None:
    # given a word the catalog does not use
    assert _slugs("caçarolas") == []
    # when the merchant adds a synonym row in the admin
    response = admin_client.post("/admin/shop/searchsynonym/add/", {"words": " caçarola ,panela "})
    assert response.status_code == 302
    synonym = SearchSynonym.objects.get(words__contains="panela")
    # then its plural finds the clay pot, and the row reads as typed, tidied
    assert _slugs("caçarolas") == ["panela-de-barro-capixaba"]
    assert synonym.words == "caçarola, panela"
    # when the row is deleted, the cached synonyms are dropped with it
    admin_client.post(f"/admin/shop/searchsynonym/{synonym.pk}/delete/", {"post": "yes"})
    assert _slugs("caçarolas") == []


@pytest.mark.parametrize(
    ("words", "message"),
    [
        ("camisa", "Informe pelo menos dois termos diferentes"),
        ("camisa, Camisa", "Informe pelo menos dois termos diferentes"),
        ("camisa, ---", "não tem letras nem números"),
        ("camisa, " + "x" * 61, "longo demais"),
    ],
)
def test_a_bad_synonym_row_is_refused_naming_the_problem(admin_client, words, message) -> None:
    response = admin_client.post("/admin/shop/searchsynonym/add/", {"words": words})
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not SearchSynonym.objects.filter(words__startswith="camisa").exists()


def test_the_plan_groups_words_and_takes_a_synonym_phrase_as_one_group(demo) -> None:
    synonyms = synonyms_load()
    assert search_plan("Fone de ouvido preto", synonyms) == (
        (("fone", "ouvido"), ("headphone",), ("fone",)),
        (("preto",),),
    )
    assert search_plan("camisas", synonyms) == ((("camisas",), ("camiseta",)),)
    assert search_plan("de da", synonyms) == ()


def test_the_synonyms_cost_one_query_when_cold_and_none_when_cached(demo, django_assert_num_queries) -> None:
    SearchSynonym.objects.create(words="bolsa, sacola")  # the save drops the cache
    # category none, count, page, variants, images + the synonyms once
    with django_assert_num_queries(5):
        product_search(query="caneca")
    with django_assert_num_queries(4):
        product_search(query="caneca")


def test_a_query_over_the_limit_is_refused_naming_the_field(demo) -> None:
    with pytest.raises(CatalogQueryError) as raised:
        product_search(query="caneca " * 50)
    assert (raised.value.field, raised.value.message) == ("q", "A busca pode ter no máximo 200 caracteres.")


def test_a_pasted_paragraph_on_the_page_searches_its_start_and_says_so(client, demo) -> None:
    # given a 300-character query (the issue: it listed the whole catalog)
    query = "canecas " + "esmaltadas azuis " * 18
    assert len(query) > 300
    html = client.get("/produtos/", {"q": query}).content.decode()
    # then the page says it searched the start, and lists only what that start finds
    assert "A busca pode ter até 200 caracteres: buscamos só o começo do texto." in html
    listed = set(re.findall(r'href="/produtos/([\w-]+)/"', html))
    assert listed <= {"caneca-ceramica-esmaltada"}
    assert "camiseta-basica-preta" not in listed
    # and the box holds what was searched, at most the limit
    box = re.search(r'id="f-q" type="search" name="q" value="([^"]*)"', html)
    assert box is not None and 0 < len(box.group(1)) <= MAX_QUERY_LENGTH


def test_search_words_fold_accents_and_drop_stopwords() -> None:
    assert search_words("Café  de Minas, MOÍDO!") == ["cafe", "minas", "moido"]
    assert search_words("de da do") == []


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # typos (pg_trgm), only when nothing matched as typed
        ("camizeta preta", ["camiseta-basica-preta"]),
        ("bourbom moido", ["cafe-bourbon-amarelo-250g"]),
        ("cafe burbon", ["cafe-bourbon-amarelo-250g"]),
        (
            "camizeta",
            [
                "camiseta-basica-branca",
                "camiseta-basica-preta",
                "camiseta-cafe-com-leite",
                "camiseta-estampa-ipe-amarelo",
                "camiseta-infantil-arara",
            ],
        ),
        # a word found as typed gets no "close" neighbours ("canetas" is as close to "caneca" as a typo)
        ("caneca", ["caneca-ceramica-esmaltada"]),
        # Portuguese stemming: "preto" finds "Preta", and the headphones' variant "Preto"
        ("preto", ["camiseta-basica-preta", "fone-bluetooth-samba"]),
    ],
)
def test_postgres_forgives_typos_and_inflections(demo, query, expected) -> None:
    assert _slugs(query) == expected


@pytest.mark.postgres
def test_postgres_ranks_the_closest_title_first_for_a_typo(demo) -> None:
    # "caneka": the mug (caneca) is closer than the pens (canetas)
    assert _slugs("caneka", sort="relevance") == ["caneca-ceramica-esmaltada", "kit-canetas-gel-tropicais"]


def test_product_list_page_finds_the_words_in_any_order(client, demo) -> None:
    html = client.get("/produtos/", {"q": "preta camiseta"}).content.decode()
    assert re.findall(r'href="/produtos/([\w-]+)/"', html).count("camiseta-basica-preta") >= 1
    assert "camiseta-basica-branca" not in html


@pytest.mark.skipif("SEARCH_EXPECT_VENDOR" not in os.environ, reason="guard of the SQLite subprocess run only")
def test_the_subprocess_really_runs_on_the_expected_database() -> None:
    assert connection.vendor == os.environ["SEARCH_EXPECT_VENDOR"]


@pytest.mark.postgres
def test_the_same_cases_pass_on_the_embedded_sqlite_store(tmp_path: Path) -> None:
    # given a real SQLite file, as `make run` uses without DATABASE_URL (CI=true refuses SQLite in-process)
    env = {k: v for k, v in os.environ.items() if k not in {"CI", "DATABASE_URL", "PYTEST_ADDOPTS"}}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'search.sqlite3'}"
    env["SHOP_VAR_DIR"] = str(tmp_path / "var")
    env["SEARCH_EXPECT_VENDOR"] = "sqlite"
    base = Path(settings.BASE_DIR)
    args = [__file__, "-q", "-m", "not postgres", "-p", "no:cacheprovider", "--rootdir", str(base)]
    # when this file's database-neutral tests run there
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=base,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # then all of them pass (13 cases + 2 rankings + 19 inflections/variants/synonyms + admin synonym + 4 bad
    # rows + plan + query budget + 2 long queries + words + page + the vendor guard)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert re.search(r"\b46 passed\b", result.stdout), result.stdout[-1500:]
