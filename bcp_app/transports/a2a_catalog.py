"""Product resolution for A2A intents: ids typed or sent by the platform, and catalog full-text search.

Reads only through the storefront selectors (`shop.selectors`, contracts.md); matching is the pure
`a2a_intents.match_product`.
"""

from __future__ import annotations

from typing import Any

from bcp_app.transports.a2a_intents import Intent, Match, ProductCandidate, VariantCandidate, match_product

SEARCH_LIMIT = 10


def _candidate(product: Any) -> ProductCandidate:
    variants = []
    for variant in product.variants.all():
        title = f"{product.title} — {variant.title}" if variant.title else product.title
        options = {str(k): str(v) for k, v in (variant.options or {}).items()}
        variants.append(VariantCandidate(sku=variant.sku, title=title, price=int(variant.price), options=options,
                                         variant_title=variant.title or ""))
    return ProductCandidate(product_id=product.public_id, title=product.title, variants=tuple(variants))


def resolve_item_id(item_id: str) -> Match:
    """A structured `product_id`/`variant_id`: a SKU is the item itself; a `prod_…` id needs one variant."""
    from shop.selectors import product_get, variants_by_sku

    if not item_id.startswith("prod_") or variants_by_sku([item_id]).get(item_id) is not None:
        # Anything but a product id goes to the engine as a SKU as it is (no lookup here: the engine prices
        # it from its catalog cache and reports an unknown one as a business outcome, item_unavailable).
        return Match(outcome="matched", sku=item_id)
    product = product_get(public_id=item_id)
    if product is None:
        # Unknown ids go to the checkout engine, which reports them as a business outcome (item_unavailable).
        return Match(outcome="matched", sku=item_id)
    candidate = _candidate(product)
    if len(candidate.variants) == 1:
        return Match(outcome="matched", sku=candidate.variants[0].sku)
    if not candidate.variants:
        return Match(outcome="not_found")
    return Match(outcome="ambiguous", candidates=candidate.variants)


def search_candidates(query: str) -> list[ProductCandidate]:
    from shop.selectors import CatalogQueryError, product_search

    if not query.strip():
        return []
    try:
        page = product_search(query=query[:200], per_page=SEARCH_LIMIT)
    except CatalogQueryError:
        return []
    return [_candidate(product) for product in page.products]


def resolve_text(intent: Intent) -> Match:
    """The variant a natural-language intent names, or candidates to ask about (never a guess)."""
    for typed in intent.ids:
        match = resolve_item_id(typed)
        if match.outcome != "matched" or _known_sku(match.sku):
            return match
    candidates = search_candidates(intent.query)
    if not candidates and (intent.colors or intent.sizes):
        # Colour words may be part of the product name ("Café Preto"): search with them too.
        candidates = search_candidates(" ".join([intent.query, *intent.colors]))
    return match_product(intent, candidates)


def _known_sku(sku: str) -> bool:
    from shop.selectors import variants_by_sku

    return sku in variants_by_sku([sku])
