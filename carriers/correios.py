"""Adapter for the Correios contract APIs (https://cws.correios.com.br, "API Correios", manuals per service).

- Token (https://cws.correios.com.br/dashboard/pesquisa, "Token"): `POST /token/v1/autentica/cartaopostagem`
  with HTTP Basic (Meu Correios user, API access code) and `{"numero": <cartão de postagem>}` →
  `{"token", "expiraEm": "2026-12-05T10:00:00", "cartaoPostagem": {"numero", "contrato", "dr"}}`.
  Then `Authorization: Bearer <token>` on every call.
- Price, in batch (manual "Preço"): `POST /preco/v1/nacional` `{"idLote", "parametrosProduto": [{coProduto,
  nuRequisicao, nuContrato, nuDR, cepOrigem, cepDestino, psObjeto (g), tpObjeto (2 = pacote), comprimento,
  largura, altura}]}` → `[{coProduto, nuRequisicao, pcFinal: "25,40", txErro?}]`.
- Delivery time, in batch (manual "Prazo"): `POST /prazo/v1/nacional` `{"idLote", "parametrosPrazo":
  [{coProduto, nuRequisicao, cepOrigem, cepDestino}]}` → `[{coProduto, nuRequisicao, prazoEntrega, txErro?}]`.
- Pre-posting (manual "Pré-Postagem"): `POST /prepostagem/v1/prepostagens` (remetente, destinatario with
  endereco{cep, logradouro, numero, complemento, bairro, cidade, uf}, codigoServico, pesoInformado (g),
  codigoFormatoObjetoInformado, comprimentoInformado, larguraInformada, alturaInformada, cienteObjetoNaoProibido,
  observacao, itensDeclaracaoConteudo[]) → `{"id", "codigoObjeto"}`; `DELETE /prepostagem/v1/prepostagens/{id}`
  cancels it before posting. A pre-posting is billed to the contract only when the object is posted.
- Label: `POST /prepostagem/v1/prepostagens/rotulo/assincrono/pdf` `{"idsPrePostagem", "tipoRotulo": "P",
  "formatoRotulo": "ET"}` → `{"idRecibo"}`; `GET /prepostagem/v1/prepostagens/rotulo/download/assincrono/{idRecibo}`
  → `{"nome", "dados": <PDF in base64>}`.
- Tracking (manual "Rastro"): `GET /srorastro/v1/objetos/{codigo}?resultado=T` → `{"objetos": [{"codObjeto",
  "eventos": [{"codigo": "BDE", "tipo": "01", "dtHrCriado", "descricao"}]}]}`, newest first.
- Errors: 4xx with `{"msgs": ["…"]}` (Portuguese); homologação `https://apihom.correios.com.br`, production
  `https://api.correios.com.br`.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.cache import cache

from carriers._http import body_json, call, decimal_to_centavos
from carriers.base import (
    Address,
    CarrierUnavailable,
    LabelRequest,
    LabelState,
    Parcel,
    SaveState,
    ServiceQuote,
    TrackingEvent,
    TrackingKind,
)
from kernel.http import Deadline, Response

BASE_URLS = {"homologacao": "https://apihom.correios.com.br", "producao": "https://api.correios.com.br"}
BRASILIA = ZoneInfo("America/Sao_Paulo")
TOKEN_CACHE_KEY = "carriers:correios:token:v1:%s"  # noqa: S105 (a cache key, not a secret)
SERVICE_NAMES = {"03220": "SEDEX", "03298": "PAC", "04162": "SEDEX", "04669": "PAC", "03140": "SEDEX 12",
                 "03158": "SEDEX 10", "04227": "Mini Envios"}  # fmt: skip
# SRO event codes (manual "Rastro", tabela de eventos): which ones the buyer hears about.
_IN_TRANSIT = {"RO", "DO", "PAR", "TRI"}
_DELIVERY = {"BDE", "BDI", "BDR"}
_DELIVERED_TYPES = {"01"}
_RETURNED_TYPES = {"23"}  # "Objeto devolvido ao remetente"
# "Objeto aguardando retirada no endereço indicado": not delivered, waiting at an agency for the buyer (told by e-mail).
_AWAITING_PICKUP = {"LDI"}


def _rejected(response: Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    msgs = body.get("msgs") if isinstance(body, dict) else None
    if isinstance(msgs, list) and msgs:
        return "Correios recusou: " + "; ".join(str(m) for m in msgs)
    return ""


def event_kind(code: str, type_: str) -> TrackingKind:
    if code == "PO":
        return "posted"
    if code in _IN_TRANSIT:
        return "in_transit"
    if code == "OEC":
        return "out_for_delivery"
    if code in _DELIVERY:
        if type_ in _DELIVERED_TYPES:
            return "delivered"
        if type_ in _RETURNED_TYPES:
            return "returned"
        return "failed_attempt"
    if code in _AWAITING_PICKUP:
        return "failed_attempt"
    return "other"


def _person(address: Address) -> dict[str, Any]:
    phone = "".join(c for c in address.phone if c.isdigit())
    return {
        "nome": address.name, "email": address.email, "cpfCnpj": address.document,
        "dddCelular": phone[:2], "celular": phone[2:],
        "endereco": {"cep": address.postal_code, "logradouro": address.street, "numero": address.number or "S/N",
                     "complemento": address.complement, "bairro": address.district, "cidade": address.city,
                     "uf": address.state},
    }  # fmt: skip


@dataclass
class Correios:
    base_url: str
    user: str
    access_code: str
    posting_card: str
    contract: str = ""
    dr: int = 0
    services: tuple[str, ...] = ("03220", "03298")
    name: str = "correios"

    @classmethod
    def from_settings(cls) -> Correios:
        return cls(
            base_url=(settings.CORREIOS_BASE_URL or BASE_URLS[settings.CORREIOS_ENV]).rstrip("/"),
            user=settings.CORREIOS_USER,
            access_code=settings.CORREIOS_ACCESS_CODE,
            posting_card=settings.CORREIOS_POSTING_CARD,
            contract=settings.CORREIOS_CONTRACT,
            dr=settings.CORREIOS_DR,
            services=tuple(settings.CORREIOS_SERVICES),
        )

    def _token(self, deadline: Deadline) -> str:
        key = TOKEN_CACHE_KEY % self.posting_card
        cached = cache.get(key)
        if isinstance(cached, str) and cached:
            return cached
        response = call(
            "POST", f"{self.base_url}/token/v1/autentica/cartaopostagem", deadline=deadline,
            headers={"Accept": "application/json"}, auth=(self.user, self.access_code),
            json={"numero": self.posting_card}, rejected=_rejected,
        )  # fmt: skip
        body = body_json(response)
        token = body.get("token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise CarrierUnavailable("Correios: token answer without token")
        seconds = 3600
        try:
            expires = datetime.fromisoformat(str(body.get("expiraEm"))).replace(tzinfo=BRASILIA)
            seconds = int((expires - datetime.now(UTC)).total_seconds()) - 300
        except ValueError:
            pass
        cache.set(key, token, max(60, seconds))
        return token

    def _call(self, method: str, path: str, *, deadline: Deadline, json: Any = None) -> Any:
        headers = {"Accept": "application/json", "Authorization": f"Bearer {self._token(deadline)}"}
        response = call(method, f"{self.base_url}{path}", deadline=deadline, headers=headers, json=json,
                        rejected=_rejected)  # fmt: skip
        return body_json(response) if response.body else None

    # --- quotes --------------------------------------------------------------------------------------------

    def quote(
        self, *, parcels: tuple[Parcel, ...], from_cep: str, to_cep: str, deadline: Deadline
    ) -> list[ServiceQuote]:
        """One batch for the prices (every service × parcel), one for the delivery times."""
        price_params = [
            {"coProduto": service, "nuRequisicao": f"{service}-{index}", "nuContrato": self.contract,
             "nuDR": self.dr, "cepOrigem": from_cep, "cepDestino": to_cep, "psObjeto": str(p.weight_g),
             "tpObjeto": "2", "comprimento": str(p.length_cm), "largura": str(p.width_cm),
             "altura": str(p.height_cm)}
            for service in self.services
            for index, p in enumerate(parcels)
        ]  # fmt: skip
        prices = self._call("POST", "/preco/v1/nacional", deadline=deadline,
                            json={"idLote": "1", "parametrosProduto": price_params})  # fmt: skip
        times = self._call(
            "POST", "/prazo/v1/nacional", deadline=deadline,
            json={"idLote": "1", "parametrosPrazo": [
                {"coProduto": s, "nuRequisicao": s, "cepOrigem": from_cep, "cepDestino": to_cep}
                for s in self.services
            ]},
        )  # fmt: skip
        if not isinstance(prices, list) or not isinstance(times, list):
            raise CarrierUnavailable("Correios: preço/prazo did not answer lists")
        totals: dict[str, int] = {}
        refused: set[str] = set()
        for row in prices:
            service = str(row.get("coProduto") or "")
            if row.get("txErro") or row.get("pcFinal") in (None, ""):
                refused.add(service)
                continue
            totals[service] = totals.get(service, 0) + decimal_to_centavos(row["pcFinal"])
        days = {str(r.get("coProduto")): int(r["prazoEntrega"]) for r in times if r.get("prazoEntrega") is not None}
        return [
            ServiceQuote(
                code=f"correios:{service}",
                carrier="Correios",
                name=SERVICE_NAMES.get(service, service),
                price=totals[service],
                days_min=days[service],
                days_max=days[service],
            )
            for service in self.services
            if service in totals and service not in refused and service in days
        ]

    # --- labels --------------------------------------------------------------------------------------------

    def buy(self, *, request: LabelRequest, state: LabelState, deadline: Deadline, save: SaveState) -> LabelState:
        """One pre-posting per parcel, each saved as soon as the Correios return it (ids and codes in `extra`).

        Nothing is charged here: the contract is billed when the object is posted. A crash between the answer
        and our save leaves at most one unused pre-posting, which lapses without being billed."""
        service = request.service_code.removeprefix("correios:")
        ids = [i for i in state.extra.get("ids", "").split(",") if i]
        codes = [c for c in state.extra.get("codes", "").split(",") if c]
        for index, parcel in enumerate(request.parcels):
            if index < len(ids):
                continue
            body = self._call(
                "POST", "/prepostagem/v1/prepostagens", deadline=deadline,
                json={
                    "remetente": _person(request.sender), "destinatario": _person(request.recipient),
                    "codigoServico": service, "pesoInformado": str(parcel.weight_g),
                    "codigoFormatoObjetoInformado": "2", "comprimentoInformado": str(parcel.length_cm),
                    "larguraInformada": str(parcel.width_cm), "alturaInformada": str(parcel.height_cm),
                    "cienteObjetoNaoProibido": 1,
                    "observacao": f"{request.reference} ({index + 1}/{len(request.parcels)})",
                    "chaveNFe": request.invoice_key,
                    "itensDeclaracaoConteudo": [
                        {"conteudo": i.name[:60], "quantidade": str(i.quantity), "valor": f"{i.unit_price / 100:.2f}"}
                        for i in request.items
                    ] if index == 0 else [],
                },
            )  # fmt: skip
            if not isinstance(body, dict) or not body.get("id") or not body.get("codigoObjeto"):
                raise CarrierUnavailable("Correios: pre-posting answer without id/codigoObjeto")
            ids.append(str(body["id"]))
            codes.append(str(body["codigoObjeto"]))
            state.extra["ids"], state.extra["codes"] = ",".join(ids), ",".join(codes)
            state.remote_id, state.tracking_code = ids[0], codes[0]
            save(state)
        state.status = "generated"
        save(state)
        return state

    def cancel(self, *, state: LabelState, deadline: Deadline) -> None:
        for remote_id in [i for i in state.extra.get("ids", state.remote_id).split(",") if i]:
            self._call("DELETE", f"/prepostagem/v1/prepostagens/{remote_id}", deadline=deadline)

    def label_pdf(self, *, state: LabelState, deadline: Deadline) -> bytes:
        ids = [i for i in state.extra.get("ids", state.remote_id).split(",") if i]
        body = self._call(
            "POST", "/prepostagem/v1/prepostagens/rotulo/assincrono/pdf", deadline=deadline,
            json={"idsPrePostagem": ids, "tipoRotulo": "P", "formatoRotulo": "ET", "idCorreios": self.user,
                  "numeroCartaoPostagem": self.posting_card},
        )  # fmt: skip
        receipt = body.get("idRecibo") if isinstance(body, dict) else None
        if not receipt:
            raise CarrierUnavailable("Correios: label answer without idRecibo")
        body = self._call("GET", f"/prepostagem/v1/prepostagens/rotulo/download/assincrono/{receipt}",
                          deadline=deadline)  # fmt: skip
        try:
            pdf = base64.b64decode(str(body.get("dados") if isinstance(body, dict) else ""), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise CarrierUnavailable("Correios: label is not base64") from exc
        if not pdf.startswith(b"%PDF"):
            raise CarrierUnavailable("Correios: the label is not a PDF")
        return pdf

    def tracking(self, *, state: LabelState, deadline: Deadline) -> list[TrackingEvent]:
        """Events of the first object (the one the order shows), oldest first."""
        code = state.tracking_code
        if not code:
            return []
        body = self._call("GET", f"/srorastro/v1/objetos/{code}?resultado=T", deadline=deadline)
        objects = body.get("objetos") if isinstance(body, dict) else None
        if not isinstance(objects, list) or not objects:
            return []
        events: list[TrackingEvent] = []
        for row in objects[0].get("eventos") or []:
            kind = event_kind(str(row.get("codigo") or ""), str(row.get("tipo") or ""))
            stamp = str(row.get("dtHrCriado") or "")
            try:
                when = datetime.fromisoformat(stamp).replace(tzinfo=BRASILIA).astimezone(UTC)
            except ValueError:
                continue
            events.append(
                TrackingEvent(
                    event_id=f"{code}:{row.get('codigo')}:{row.get('tipo')}:{stamp}",
                    kind=kind,
                    occurred_at=when,
                    description=str(row.get("descricao") or "")[:255],
                    tracking_code=code,
                    remote_id=state.remote_id,
                )
            )
        events.sort(key=lambda e: e.occurred_at)
        return events


CANCEL_WINDOW = timedelta(days=30)  # pre-postings not posted lapse after this; cancel until posted
