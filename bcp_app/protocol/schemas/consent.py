"""Buyer consent extension (`br.dev.bcp.shopping.buyer_consent`): `buyer.consent` in and out.

In: the purpose-keyed form of the schema (`{"br.dev.bcp.consent.marketing": {"granted": true}}`) or the
short boolean form of UCP's first version (`{"marketing": true, "analytics": false, "sale_of_data": false}`).
Entries whose `source` is `business` are the business's own defaults echoed back, not a buyer decision, and
are ignored; unknown purposes are ignored (open vocabulary). Out: always the purpose-keyed form, every
purpose the shop offers, decided ones with `source: "platform"`, the others `granted: false` with
`source: "business"` (the LGPD default: nothing without consent).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool

from bcp_app.protocol.schemas.common import Link, RequestModel, ResponseModel

PURPOSE_PREFIX = "br.dev.bcp.consent."
# wire purpose id → the shop's purpose name (shop/checkout/selectors.py)
WIRE_PURPOSES = {
    f"{PURPOSE_PREFIX}marketing": "marketing",
    f"{PURPOSE_PREFIX}analytics": "analytics",
    f"{PURPOSE_PREFIX}preferences": "preferences",
    f"{PURPOSE_PREFIX}sale_or_sharing": "sale_of_data",
}
SHORT_PURPOSES = {
    "marketing": "marketing",
    "analytics": "analytics",
    "preferences": "preferences",
    "sale_of_data": "sale_of_data",
    "sale_or_sharing": "sale_of_data",
}
DESCRIPTIONS = {
    "marketing": "Receber ofertas, novidades e promoções da loja por e-mail ou mensagem.",
    "analytics": "Permitir que a loja analise a navegação e as compras para melhorar o serviço.",
    "preferences": "Permitir que a loja lembre preferências (idioma, endereço, forma de entrega).",
    "sale_of_data": "Permitir que a loja compartilhe ou venda dados pessoais a terceiros.",
}


class ConsentDecisionIn(RequestModel):
    granted: StrictBool = Field(description="Se o comprador consentiu com esta finalidade.")
    source: Literal["business", "platform"] | None = Field(
        default=None, description="`platform` = decisão do comprador colhida pela plataforma; `business` é ignorado."
    )


ConsentIn = Annotated[
    dict[Annotated[str, Field(max_length=100)], StrictBool | ConsentDecisionIn],
    Field(
        max_length=20,
        description="Consentimento por finalidade (LGPD), na forma por finalidade do schema "
        "(`br.dev.bcp.consent.marketing: {granted}`) ou booleana "
        "(`marketing`, `analytics`, `preferences`, `sale_of_data`).",
    ),
]


def consent_decisions(consent: dict[str, bool | ConsentDecisionIn] | None) -> tuple[tuple[str, bool], ...] | None:
    """The buyer's decisions in the shop's purpose names; None when no consent object was sent."""
    if consent is None:
        return None
    decided: dict[str, bool] = {}
    for key, value in consent.items():
        purpose = WIRE_PURPOSES.get(key) or SHORT_PURPOSES.get(key)
        if purpose is None:
            continue
        if isinstance(value, ConsentDecisionIn):
            if value.source == "business":
                continue
            decided[purpose] = value.granted
        else:
            decided[purpose] = value
    return tuple(decided.items())


def consent_input(active: bool, ctx: Any, consent: dict[str, bool | ConsentDecisionIn] | None) -> dict[str, Any]:
    """`BuyerInput` members for the consent (BCP-NEG-08: ignored unless negotiated), with who captured it."""
    if not active or consent is None:
        return {}
    captured_by = "storefront" if ctx.transport == "permalink" else f"platform:{ctx.platform_id or 'anonymous'}"
    return {"consent": consent_decisions(consent), "consent_captured_by": captured_by}


class ConsentPurposeOut(ResponseModel):
    granted: bool = Field(description="Estado atual do consentimento para a finalidade.")
    source: Literal["business", "platform"] = Field(
        description="`platform`: decisão do comprador; `business`: padrão da loja (sem consentimento)."
    )
    description: str = Field(description="Com o que o comprador consente, em pt-BR.")
    links: list[Link] | None = Field(default=None, description="Política de privacidade.")


def consent_out(decisions: tuple[tuple[str, bool], ...] | None, privacy_url: str) -> dict[str, ConsentPurposeOut]:
    """`buyer.consent` of a response: every offered purpose, decided or the business default."""
    decided = dict(decisions or ())
    links = [Link(type="privacy_policy", url=privacy_url, title="Política de privacidade")]
    out = {}
    for wire, purpose in WIRE_PURPOSES.items():
        out[wire] = ConsentPurposeOut(
            granted=decided.get(purpose, False),
            source="platform" if purpose in decided else "business",
            description=DESCRIPTIONS[purpose],
            links=links,
        )
    return out
