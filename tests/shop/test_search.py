"""Storefront search on the demo catalog: words in any order, accents and case ignored, on PostgreSQL and on the
embedded SQLite store (the same cases run there in a subprocess on a real SQLite file); typos and stemming on
PostgreSQL (full-text search with unaccent, pg_trgm for typos), ranked.
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

from shop.catalog.selectors import product_search, search_words
from shop.demo.seed import seed_catalog

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
    assert _slugs(query, sort="relevance") == expected


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
        # Portuguese stemming: "preto" finds "Preta"
        ("preto", ["camiseta-basica-preta"]),
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
    # then all of them pass (13 cases + 2 rankings + words + page + the vendor guard)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert re.search(r"\b18 passed\b", result.stdout), result.stdout[-1500:]
