"""Product resolution for A2A intents: ids typed or sent by the platform, and catalog full-text search.

Products come from `bcp_app.service.operations.find_products` (the checkout capability must be negotiated, like
every other transport's reads); matching is the pure `a2a_intents.match_product`. A refusal (an Error
Response) is handed back as the `OperationResult`.
"""

from __future__ import annotations

from typing import Any

from bcp_app.protocol.results import OperationResult
from bcp_app.service import operations
from bcp_app.transports.a2a.intents import Intent, Match, ProductCandidate, VariantCandidate, match_product

SEARCH_LIMIT = 10


def _candidate(product: Any) -> ProductCandidate:
    variants = []
    for variant in product.variants.all():
        title = f"{product.title} — {variant.title}" if variant.title else product.title
        options = {str(k): str(v) for k, v in (variant.options or {}).items()}
        variants.append(VariantCandidate(sku=variant.sku, title=title, price=int(variant.price), options=options,
                                         variant_title=variant.title or ""))
    return ProductCandidate(product_id=product.public_id, title=product.title, variants=tuple(variants))


def _by_id(ctx: Any, item_id: str) -> Match | OperationResult | None:
    """A SKU is the item itself; a `prod_…` id needs one variant; None when the id names nothing."""
    found = operations.find_products(ctx, item_id=item_id)
    if isinstance(found, OperationResult) or not found:
        return found or None
    candidate = _candidate(found[0])
    skus = [variant.sku for variant in candidate.variants]
    if item_id in skus:
        return Match(outcome="matched", sku=item_id)
    if len(skus) == 1:
        return Match(outcome="matched", sku=skus[0])
    if not skus:
        return Match(outcome="not_found")
    return Match(outcome="ambiguous", candidates=candidate.variants)


def resolve_item_id(ctx: Any, item_id: str) -> Match | OperationResult:
    """A structured `product_id`/`variant_id`. Unknown ids go to the checkout engine, which reports them as a
    business outcome (item_unavailable)."""
    if not item_id.startswith("prod_"):
        # A SKU goes to the engine as it is, with no lookup here: the add operation checks the negotiation,
        # prices it from the catalog cache and reports an unknown one as item_unavailable.
        return Match(outcome="matched", sku=item_id)
    match = _by_id(ctx, item_id)
    return Match(outcome="matched", sku=item_id) if match is None else match


def search_candidates(ctx: Any, query: str) -> list[ProductCandidate] | OperationResult:
    found = operations.find_products(ctx, query=query, limit=SEARCH_LIMIT)
    return found if isinstance(found, OperationResult) else [_candidate(product) for product in found]


def resolve_text(ctx: Any, intent: Intent) -> Match | OperationResult:
    """The variant a natural-language intent names, or candidates to ask about (never a guess)."""
    for typed in intent.ids:
        match = _by_id(ctx, typed)
        if match is not None:
            return match
    candidates = search_candidates(ctx, intent.query)
    if isinstance(candidates, OperationResult):
        return candidates
    if not candidates and (intent.colors or intent.sizes):
        # Colour words may be part of the product name ("Café Preto"): search with them too.
        candidates = search_candidates(ctx, " ".join([intent.query, *intent.colors]))
        if isinstance(candidates, OperationResult):
            return candidates
    return match_product(intent, candidates)
