"""The shop's policies — terms, privacy, returns (trocas e devoluções), shipping — as pages and as data.

One source for both: each policy's text is the merchant's own text from the store settings, or the shop's
standard text (a template fragment, translated), rendered to HTML on the storefront page and to plain text
for BCP `policies[]` (checkout, cart, order and catalog responses) and the `policies.search` tool. A
merchant may point a policy at an external page instead (`…_url` in the store settings).

`store_policies(language)` is kept by each process per language, under the store settings row's version token
(`STORE_KEPT`, kernel/ops/kept.py), so a save of the row rebuilds them.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import asdict, dataclass

from django.conf import settings
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.html import strip_tags
from django.utils.translation import gettext as _

from shop.models.store import STORE_KEPT
from shop.store.services import Store, store_get

# BCP policy types (reverse-DNS, open vocabulary): `…policy.return` is the well-known UCP/BCP type; the others
# are this project's BCP types for the pages BCP §4.3 requires as links.
RETURN = "br.dev.bcp.shopping.policy.return"
TYPES = {
    "terms": "br.dev.bcp.shopping.policy.terms",
    "privacy": "br.dev.bcp.shopping.policy.privacy",
    "returns": RETURN,
    "shipping": "br.dev.bcp.shopping.policy.shipping",
}
LINK_TYPES = {
    "terms": "terms_of_service",
    "privacy": "privacy_policy",
    "returns": "refund_policy",
    "shipping": "shipping_policy",
}
ROUTES = {
    "terms": "checkout:terms",
    "privacy": "checkout:privacy",
    "returns": "store:returns",
    "shipping": "store:shipping",
}


@dataclass(frozen=True)
class Policy:
    kind: str  # "terms" | "privacy" | "returns" | "shipping"
    type: str  # BCP policy type
    link_type: str  # BCP `links[].type`
    title: str
    url: str  # absolute: the store setting's external URL or our own page
    text: str  # plain text, paragraphs separated by a blank line
    return_window_days: int | None = None  # returns only: the window from delivery (CDC art. 49: ≥ 7)


def default_body(kind: str, store: Store) -> str:
    """The shop's standard text of a policy as HTML (the page shows it when the merchant wrote none)."""
    return render_to_string(
        f"shop/policies/{kind}_default.html",
        {
            "SHOP_NAME": store.trade_name,
            "store": store,
            "return_window_days": store.returns_window_days,
            # As the checkout's CPF field (shop.checkout.web.forms.cpf_needed).
            "cpf_needed": settings.FISCAL_ISSUE_ON != "off",
        },
    )


def plain_text(html: str) -> str:
    """HTML of a policy body → plain text: headings and paragraphs become blank-line separated lines."""
    text = re.sub(r"</(p|h\d|li)>", "\n\n", html)
    text = strip_tags(text)
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _titles() -> dict[str, str]:
    return {
        "terms": _("Termos de uso"),
        "privacy": _("Política de privacidade"),
        "returns": _("Trocas e devoluções"),
        "shipping": _("Política de entrega"),
    }


def _build(store: Store) -> tuple[Policy, ...]:
    titles = _titles()
    merchant = {
        "terms": store.terms_text,
        "privacy": store.privacy_text,
        "returns": store.returns_text,
        "shipping": store.shipping_text,
    }
    external = {
        "terms": store.terms_url,
        "privacy": store.privacy_url,
        "returns": store.returns_url,
        "shipping": store.shipping_url,
    }
    policies = []
    for kind in ("terms", "privacy", "returns", "shipping"):
        text = merchant[kind].strip() or plain_text(default_body(kind, store))
        url = external[kind] or f"{settings.BCP_PUBLIC_URL.rstrip('/')}{reverse(ROUTES[kind])}"
        policies.append(
            Policy(
                kind=kind,
                type=TYPES[kind],
                link_type=LINK_TYPES[kind],
                title=titles[kind],
                url=url,
                text=text,
                return_window_days=store.returns_window_days if kind == "returns" else None,
            )
        )
    return tuple(policies)


def _policy_language(language: str | None) -> str:
    return "en" if (language or translation.get_language() or "").lower().startswith("en") else "pt-br"


def store_policies(language: str | None = None) -> tuple[Policy, ...]:
    """The four policies in `language` (default: the active one), kept until the store settings change."""
    language = _policy_language(language)

    def build() -> tuple[Policy, ...]:
        with translation.override(language):
            return _build(store_get())

    return STORE_KEPT.get(f"policies:{language}", build)


def policies_data(language: str | None = None) -> list[dict[str, object]]:
    """The four policies as plain data (`asdict`), as an order placed now keeps them. Built once per store token
    and language, like `store_policies`; each call gets its own dicts (their values are immutable), since the
    caller stores them on an order."""
    language = _policy_language(language)

    def build() -> tuple[dict[str, object], ...]:
        return tuple(asdict(policy) for policy in store_policies(language))

    return [dict(entry) for entry in STORE_KEPT.get(f"policies_data:{language}", build)]


def policy_digests(language: str | None = None) -> dict[str, str]:
    """Each policy's type → a short digest of what a checkout response shows of it now (text, URL, window). A
    checkout keeps the digests of its last write (`Checkout.policies_shown`), so a complete can tell a policy
    the merchant changed since: the order is placed under the policies in force at that moment.

    Kept beside the policies, under the same token (a save of the store settings rebuilds both): every create,
    update and complete wrote the same four digests, each a JSON dump and a SHA-256 of texts that had not changed
    (issue 34). A new dict per call: the caller stores it on its checkout."""
    language = _policy_language(language)

    def build() -> dict[str, str]:
        return {
            policy.type: hashlib.sha256(json.dumps(asdict(policy), sort_keys=True).encode()).hexdigest()[:16]
            for policy in store_policies(language)
        }

    return dict(STORE_KEPT.get(f"policy_digests:{language}", build))


# --- search ("qual é a política de trocas?") ----------------------------------------------------------------

_KEYWORDS = {
    "returns": (
        "troca",
        "trocar",
        "devolu",
        "devolver",
        "arrepend",
        "reembols",
        "estorno",
        "return",
        "refund",
        "exchange",
        "garantia",
        "warranty",
        "cancel",
    ),
    "shipping": (
        "entrega",
        "entregar",
        "frete",
        "prazo",
        "envio",
        "enviar",
        "correios",
        "retirada",
        "retirar",
        "shipping",
        "delivery",
        "pickup",
    ),
    "privacy": (
        "privacidade",
        "dados",
        "lgpd",
        "pessoais",
        "cookie",
        "privacy",
        "personal",
        "data",
        "dpo",
        "encarregado",
    ),
    "terms": ("termo", "termos", "condic", "uso", "contrato", "terms", "conditions", "agente", "pagamento"),
}


def _fold(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(ch))


def policies_search(query: str, *, language: str | None = None) -> list[tuple[Policy, int]]:
    """The policies a question is about, best first (deterministic: keyword stems, then words of the text).

    An empty or unmatched question gets every policy with score 0 (the agent can still show them all).
    """
    words = re.findall(r"[a-z0-9]+", _fold(query))
    scored = []
    for policy in store_policies(language):
        stems = _KEYWORDS[policy.kind]
        score = sum(3 for word in words for stem in stems if word.startswith(_fold(stem)))
        body = set(re.findall(r"[a-z0-9]+", _fold(policy.text)))
        score += sum(1 for word in words if len(word) > 3 and word in body)
        scored.append((policy, score))
    ranked = sorted(scored, key=lambda item: -item[1])
    matched = [item for item in ranked if item[1] > 0]
    if not matched:
        return ranked
    best = matched[0][1]
    return [item for item in matched if item[1] * 2 >= best]
