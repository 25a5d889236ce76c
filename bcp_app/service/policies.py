"""Policies on the wire: `policies[]` of checkout, cart, order and catalog responses, and `policies.search`.

The texts, URLs and the return window come from the store settings (`shop.store.policies`); this module only
renders them as BCP policy objects (`common/types/policy.json`). Every policy applies to the whole response
(no `applies_to`): the shop has one policy of each kind for everything it sells.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from bcp_app.protocol.names import PROTOCOL_VERSION
from bcp_app.protocol.results import OperationResult
from bcp_app.protocol.schemas.common import Description
from bcp_app.protocol.schemas.policies import PoliciesSearchRequest, PoliciesSearchResponse, PolicyOut, ReturnWindow
from bcp_app.protocol.validation import validate
from shop.store.policies import Policy, policies_search, store_policies

# What an accepted return gives back here: the money by the same means (Pix devolução) or a store credit note.
RETURN_RESOLUTIONS = ["original_payment_method", "store_credit"]


def _language(value: str | None) -> str:
    return "en" if (value or "").lower().startswith("en") else "pt-br"


def kept_policies(kept: Any) -> tuple[Any, ...] | None:
    """The policies an order kept at placement (`orders.Order.policies`), or None to use today's."""
    if not isinstance(kept, list) or not kept:
        return None  # orders placed before the snapshot existed
    try:
        return tuple(Policy(**entry) for entry in kept)
    except TypeError:
        return None


def policy_models(language: str | None = None, *, kept: Any = None) -> list[PolicyOut]:
    """`kept`: an order's policy snapshot; its policies win over the current store settings."""
    return _models(kept_policies(kept) or store_policies(_language(language)))


def _models(policies: tuple[Policy, ...]) -> list[PolicyOut]:
    out = []
    for policy in policies:
        model = PolicyOut(
            type=policy.type, description=Description(plain=policy.text), url=policy.url, title=policy.title
        )
        if policy.return_window_days:
            model.window = ReturnWindow(days=policy.return_window_days, anchor="delivered")
            model.supported_resolutions = list(RETURN_RESOLUTIONS)
        out.append(model)
    return out


def policies_json(language: str | None = None, *, kept: Any = None) -> list[dict[str, Any]]:
    """`policies[]` of a response, in the response's language (an order: those it was placed under)."""
    policies = kept_policies(kept) or store_policies(_language(language))
    try:
        built = _built.get(policies)
    except TypeError:  # an order's snapshot with a value that cannot be a key: built for this answer only
        return [model.model_dump(exclude_none=True) for model in _models(policies)]
    if built is None:
        dumped = [model.model_dump(exclude_none=True) for model in _models(policies)]
        try:
            text = orjson.dumps(dumped)
        except TypeError:  # a text orjson cannot say (a lone surrogate): built for this answer only
            return dumped
        if len(_built) >= _BUILT_MAX:
            _built.clear()
        built = _built[policies] = text
    return orjson.loads(built)


# The wire form of each distinct set of policies, built once per process (issue 34: building and dumping four
# pydantic models was about a fifth of every checkout presenter's CPU). Keyed by the policies' values, so a change
# of the store settings (new `Policy` values) or an order's own snapshot is a different entry. Kept as its JSON
# text: each response gets its own copy by one C call (a walk in Python copied some thirty objects per answer), so
# nothing a caller does to its body reaches the next one.
_built: dict[tuple[Policy, ...], bytes] = {}
_BUILT_MAX = 256


def search_policies(ctx: Any, body: PoliciesSearchRequest | Mapping[str, Any]) -> OperationResult:
    """`policies.search`: the policies a buyer's question is about, with their text as the answer."""
    request = validate(PoliciesSearchRequest, body)
    language = _language(request.language or ctx.language)
    found = [policy.kind for policy, _score in policies_search(request.query, language=language)]
    by_kind = dict(zip(("terms", "privacy", "returns", "shipping"), policy_models(language), strict=True))
    chosen = [by_kind[kind] for kind in found]
    first = chosen[0]
    answer = f"{first.title}: {first.description.plain}" + (f" ({first.url})" if first.url else "")
    response = PoliciesSearchResponse(
        ucp={"version": PROTOCOL_VERSION}, query=request.query, policies=chosen, answer=answer
    )
    return OperationResult(200, response.model_dump(exclude_none=True))
