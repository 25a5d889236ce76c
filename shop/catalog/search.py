"""The catalog search's words: folding, Portuguese stems, the merchant's synonyms, and the matcher of the
embedded SQLite store. `shop.catalog.selectors.product_search` is the one search (storefront, BCP
catalog.search, the seed-002 tools, A2A intents); this module turns a query into a plan that both stores run:

- a query is a list of **groups**, all of which must match (words in any order, stopwords dropped);
- a group is a list of **alternatives**, any of which may match: the word itself and, when the merchant listed
  it in a synonym row, the row's other terms ("camisa" → "camisa" | "camiseta");
- an alternative is a list of words (a synonym term may be a phrase, "fone de ouvido"), each to be found.

PostgreSQL runs the plan as a `portuguese` tsquery over unaccent()ed text (its Snowball stemmer: "canecas" and
"Caneca" are both `canec`); SQLite runs it in `sqlite_rank`, with the same Snowball algorithm from
`snowballstemmer`, so "camiseta pretas" or "graos" find the same products on both.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

import snowballstemmer

from kernel.ops import request_cache
from kernel.text import fold
from shop.models import SearchSynonym
from shop.models.catalog import synonym_terms

# Words that carry no meaning in a product search ("café *de* Minas"); dropped before word-by-word matching.
STOPWORDS = frozenset({"a", "o", "as", "os", "e", "de", "da", "do", "das", "dos", "com", "em", "na", "no", "para"})
_WORD = re.compile(r"\w+")

SYNONYMS_KEY = "shop:search-synonyms:v1"
SYNONYMS_SECONDS = 300  # a bound for caches that cannot hear another process's invalidation (local memory)

Alternative = tuple[str, ...]
Group = tuple[Alternative, ...]
Plan = tuple[Group, ...]
SynonymMap = dict[Alternative, tuple[Alternative, ...]]

# Relevance weights of the SQLite matcher, in the spirit of the Postgres document's A/B/C weights.
_WEIGHTS = {"title": 1.0, "brand": 0.4, "category": 0.4, "variants": 0.4, "description": 0.1}
_FIELDS = tuple(_WEIGHTS)


def search_words(query: str) -> list[str]:
    """The query's words, accent- and case-folded, stopwords dropped ("Café de Minas" → ["cafe", "minas"])."""
    words = [word for word in _WORD.findall(fold(query)) if word not in STOPWORDS]
    return list(dict.fromkeys(words))


_stemmer = snowballstemmer.stemmer("portuguese")


@lru_cache(maxsize=20_000)
def stem(word: str) -> str:
    """The Portuguese Snowball stem of a folded word ("canecas" → "canec", "pretas" → "pret")."""
    return str(_stemmer.stemWord(word))


def _stems(words: Alternative) -> Alternative:
    return tuple(stem(word) for word in words)


def _term_words(term: str) -> Alternative:
    return tuple(word for word in _WORD.findall(fold(term)) if word not in STOPWORDS)


def synonyms_load() -> SynonymMap:
    """{term's stems: the other terms of its rows}, each term a tuple of folded words; cached, one query when cold.

    Keyed by stems, so a plural or an accent-less spelling of a listed term ("camisas") finds its synonyms too.
    """
    cached = request_cache.get(SYNONYMS_KEY)
    if isinstance(cached, tuple):
        return dict(cached)
    found: dict[Alternative, list[Alternative]] = {}
    for words in SearchSynonym.objects.values_list("words", flat=True):
        terms = [t for t in dict.fromkeys(_term_words(term) for term in synonym_terms(words)) if t]
        for term in terms:
            others = found.setdefault(_stems(term), [])
            others.extend(t for t in terms if t != term and t not in others)
    loaded = {key: tuple(others) for key, others in found.items() if others}
    request_cache.set(SYNONYMS_KEY, tuple(loaded.items()), SYNONYMS_SECONDS)
    return loaded


def synonyms_cache_clear() -> None:
    request_cache.forget(SYNONYMS_KEY)


def search_plan(query: str, synonyms: SynonymMap) -> Plan:
    """The groups of `query` (see the module docstring); a synonym phrase takes its words as one group."""
    words = search_words(query)
    stems = [stem(word) for word in words]
    longest = max((len(term) for term in synonyms), default=1)
    groups: list[Group] = []
    i = 0
    while i < len(words):
        for size in range(min(longest, len(words) - i), 0, -1):
            key = tuple(stems[i : i + size])
            if size > 1 and key not in synonyms:
                continue
            term = tuple(words[i : i + size])
            groups.append((term, *(t for t in synonyms.get(key, ()) if t != term)))
            i += size
            break
    return tuple(dict.fromkeys(groups))


def plan_json(plan: Plan) -> str:
    return json.dumps(plan, separators=(",", ":"))


@lru_cache(maxsize=256)
def _plan_from_json(text: str) -> Plan:
    return tuple(tuple(tuple(alternative) for alternative in group) for group in json.loads(text))


@lru_cache(maxsize=8192)
def _indexed(text: str | None) -> tuple[str, frozenset[str]]:
    folded = fold(text)
    return folded, frozenset(stem(word) for word in _WORD.findall(folded))


def _word_weight(word: str, fields: list[tuple[float, str, frozenset[str]]]) -> float:
    """The weight of the best field holding `word`: as typed inside a word ("camis", "usb" in "usb-c"), or
    inflected (same stem: "canecas" ~ "Caneca"); 0 when no field holds it."""
    stemmed = stem(word)
    return max((weight for weight, text, stems in fields if word in text or stemmed in stems), default=0.0)


def sqlite_rank(
    plan: str, title: str | None, brand: str | None, category: str | None, variants: str | None, description: str | None
) -> float:
    """SQLite function `shop_search_rank`: 0 when the product misses a group of the plan, else its relevance
    (per group, the best alternative's sum of field weights per word)."""
    fields = [
        (_WEIGHTS[name], *_indexed(value))
        for name, value in zip(_FIELDS, (title, brand, category, variants, description), strict=True)
    ]
    total = 0.0
    for group in _plan_from_json(plan):
        best = 0.0
        for alternative in group:
            weights = [_word_weight(word, fields) for word in alternative]
            if weights and all(weights):
                best = max(best, sum(weights))
        if best == 0.0:
            return 0.0
        total += best
    return total


def option_values(options: str | None) -> str:
    """SQLite function `shop_option_values`: the values of a variant's options JSON ("Em grãos 500 g")."""
    try:
        parsed = json.loads(options or "{}")
    except ValueError:
        return ""
    return " ".join(str(value) for value in parsed.values()) if isinstance(parsed, dict) else ""
