"""Adapter for Focus NFe's REST API v2 (https://focusnfe.com.br/doc/#nfe).

- `POST /v2/nfe?ref=REF` with the note as JSON → 202 `{"status": "processando_autorizacao"}`; the
  authorization is asynchronous: `GET /v2/nfe/REF` (poll) or the "gatilho" webhook tells the outcome.
- `GET /v2/nfe/REF` → `status` autorizado | erro_autorizacao | denegado | cancelado | processando_autorizacao,
  with `chave_nfe`, `numero`, `serie`, `protocolo`, `status_sefaz`, `mensagem_sefaz`,
  `caminho_xml_nota_fiscal`, `caminho_danfe` (paths on the same host).
- `DELETE /v2/nfe/REF` with `{"justificativa": …}` (15–255 characters) cancels.
- `POST /v2/nfe/REF/carta_correcao` with `{"correcao": …}` registers a carta de correção (CC-e), synchronously:
  `status` autorizado (with `numero_carta_correcao`, `caminho_xml_carta_correcao`, `caminho_pdf_carta_correcao`)
  or erro_autorizacao with the SEFAZ's `status_sefaz`/`mensagem_sefaz`; `GET /v2/nfe/REF` names the last letter
  with the same three fields (https://focusnfe.com.br/doc/#nfe_carta-de-correcao-eletronica).
- NF-e de devolução (https://focusnfe.com.br/blog/como-criar-uma-nf-e-tipo-devolucao): the same `POST /v2/nfe?ref=`
  with `tipo_documento` 0 (entrada), `finalidade_emissao` 4 (devolução), `notas_referenciadas` as an array of
  `{"chave_nfe": …}` (the sale's note) and the items' CFOP of the devolução (1202/2202); polled and notified like
  any note.
- IBS/CBS of the tax reform (`fiscal/ibscbs.py`; Focus's guide https://focusnfe.com.br/guides/reforma-tributaria/
  and its field table https://campos.focusnfe.com.br/nfe/NotaFiscalXML.html): per item `ibs_cbs_situacao_tributaria`
  (CST, UB13), `ibs_cbs_classificacao_tributaria` (cClassTrib, UB14), `ibs_cbs_base_calculo` (vBC, UB16),
  `ibs_uf_aliquota`/`ibs_uf_valor` (pIBSUF/vIBSUF), `ibs_mun_aliquota`/`ibs_mun_valor` (pIBSMun/vIBSMun),
  `ibs_valor_total` (vIBS), `cbs_aliquota`/`cbs_valor` (pCBS/vCBS); per note (IBSCBSTot, W34)
  `ibs_cbs_base_calculo`, `ibs_uf_valor_total`, `ibs_mun_valor_total`, `ibs_valor_total`, `cbs_valor_total` and
  the deferral/return/presumed-credit totals at 0 (1-1 in the leiaute).
- Authentication: HTTP Basic with the token as user and an empty password.
- Webhook (gatilho, `POST /v2/hooks` with `authorization`/`authorization_header`): the same body as the
  GET, sent with our secret in the configured header; Focus may deliver it more than once.

Calls go through the kernel's outbound client: a total deadline per call (`DEADLINE`), a body cap
(`MAX_FILE_BYTES`, the largest thing asked for being a DANFE PDF).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import datetime
from typing import Any

from django.conf import settings

from fiscal.providers.base import (
    CorrectionResult,
    ProviderResult,
    ProviderUnavailable,
    WebhookEvent,
    WebhookRejected,
)
from kernel.http import OutboundError, Response, request

BASE_URLS = {"homologacao": "https://homologacao.focusnfe.com.br", "producao": "https://api.focusnfe.com.br"}
DEADLINE = 10.0  # seconds for one call, connect to the last body byte (worker side)
CONNECT_TIMEOUT = 3.0
MAX_FILE_BYTES = 5 * 1024 * 1024
WEBHOOK_HEADER = "X-Fiscal-Webhook-Secret"
STATUSES = {
    "autorizado": "authorized",
    "processando_autorizacao": "processing",
    "erro_autorizacao": "rejected",
    "denegado": "rejected",
    "cancelado": "cancelled",
}
TAX_REGIMES = {"simples": "1", "simples_excesso": "2", "normal": "3", "mei": "4"}


def _reais(centavos: int) -> str:
    return f"{centavos // 100}.{centavos % 100:02d}"


def _ibs_cbs_item(group: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "ibs_cbs_situacao_tributaria": group["cst"],
        "ibs_cbs_classificacao_tributaria": group["class_code"],
    }
    if "base" in group:  # a taxed CST: the gIBSCBS group
        fields.update(
            ibs_cbs_base_calculo=_reais(int(group["base"])),
            ibs_uf_aliquota=group["ibs_uf_rate"],
            ibs_uf_valor=_reais(int(group["ibs_uf_amount"])),
            ibs_mun_aliquota=group["ibs_mun_rate"],
            ibs_mun_valor=_reais(int(group["ibs_mun_amount"])),
            ibs_valor_total=_reais(int(group["ibs_amount"])),
            cbs_aliquota=group["cbs_rate"],
            cbs_valor=_reais(int(group["cbs_amount"])),
        )
    return fields


def _ibs_cbs_totals(totals: dict[str, Any]) -> dict[str, Any]:
    zero = _reais(0)
    return {
        "ibs_cbs_base_calculo": _reais(int(totals["base"])),
        "ibs_uf_valor_total_diferimento": zero,
        "ibs_uf_valor_total_devolucao": zero,
        "ibs_uf_valor_total": _reais(int(totals["ibs_uf_amount"])),
        "ibs_mun_valor_total_diferimento": zero,
        "ibs_mun_valor_total_devolucao": zero,
        "ibs_mun_valor_total": _reais(int(totals["ibs_mun_amount"])),
        "ibs_valor_total": _reais(int(totals["ibs_amount"])),
        "ibs_valor_total_credito_presumido": zero,
        "ibs_valor_total_condicao_suspensiva": zero,
        "cbs_valor_total_diferimento": zero,
        "cbs_valor_total_devolucao": zero,
        "cbs_valor_total": _reais(int(totals["cbs_amount"])),
        "cbs_valor_total_credito_presumido": zero,
        "cbs_valor_total_condicao_suspensiva": zero,
    }


def focus_body(invoice: dict[str, Any]) -> dict[str, Any]:
    """Our neutral invoice (built by the shop) in Focus NFe's field names."""
    issuer, recipient = invoice["issuer"], invoice["recipient"]
    address = recipient.get("address", {})
    tax_id = str(recipient.get("tax_id", ""))
    simples = issuer.get("tax_regime") in ("simples", "simples_excesso", "mei")
    devolution = invoice.get("purpose") == "return"
    body: dict[str, Any] = {
        "natureza_operacao": invoice.get("operation") or "Venda de mercadoria",
        "data_emissao": invoice["issued_at"],
        "tipo_documento": 0 if devolution else 1,  # 0: entrada (the goods come back), 1: saída
        "finalidade_emissao": 4 if devolution else 1,  # 4: devolução de mercadoria, 1: normal
        **(
            {"notas_referenciadas": [{"chave_nfe": key} for key in invoice.get("referenced_keys") or []]}
            if devolution
            else {}
        ),
        "consumidor_final": 1,
        "presenca_comprador": 2,  # operação não presencial, pela internet
        "cnpj_emitente": issuer["cnpj"],
        "inscricao_estadual_emitente": issuer.get("state_registration", ""),
        "regime_tributario_emitente": TAX_REGIMES.get(str(issuer.get("tax_regime")), "1"),
        "nome_destinatario": recipient.get("name", ""),
        "cnpj_destinatario" if len(tax_id) == 14 else "cpf_destinatario": tax_id,
        "email_destinatario": recipient.get("email", ""),
        "indicador_inscricao_estadual_destinatario": 9,
        "logradouro_destinatario": address.get("street", ""),
        "numero_destinatario": address.get("number", "") or "S/N",
        "bairro_destinatario": address.get("neighborhood", ""),
        "municipio_destinatario": address.get("city", ""),
        "uf_destinatario": address.get("state", ""),
        "cep_destinatario": str(address.get("postal_code", "")).replace("-", ""),
        "local_destino": 1 if address.get("state", issuer.get("state")) == issuer.get("state") else 2,
        "modalidade_frete": 0 if invoice.get("shipping_amount") else 9,
        "valor_frete": _reais(int(invoice.get("shipping_amount", 0))),
        "valor_desconto": _reais(int(invoice.get("discount_amount", 0))),
        **({"valor_outras_despesas": _reais(int(invoice["other_amount"]))} if invoice.get("other_amount") else {}),
        "valor_total": _reais(int(invoice.get("total_amount", 0))),
        "items": [],
    }
    for index, item in enumerate(invoice["items"], start=1):
        quantity, unit_price = int(item["quantity"]), int(item["unit_price"])
        body["items"].append(
            {
                "numero_item": index,
                "codigo_produto": item["sku"],
                "descricao": item["description"],
                "codigo_ncm": item["ncm"],
                "cfop": item["cfop"],
                "unidade_comercial": item["unit"],
                "quantidade_comercial": quantity,
                "valor_unitario_comercial": _reais(unit_price),
                "unidade_tributavel": item["unit"],
                "quantidade_tributavel": quantity,
                "valor_unitario_tributavel": _reais(unit_price),
                "valor_bruto": _reais(int(item["total"])),
                # The item's shares of the note's freight, discount and other charges (vFrete, vDesc, vOutro):
                # their sums are the note's.
                **({"valor_frete": _reais(int(item["shipping_amount"]))} if item.get("shipping_amount") else {}),
                **({"valor_desconto": _reais(int(item["discount_amount"]))} if item.get("discount_amount") else {}),
                **({"valor_outras_despesas": _reais(int(item["other_amount"]))} if item.get("other_amount") else {}),
                "icms_origem": int(item["origin"]),
                # The shop resolves the codes per item (product, else store); older queued jobs lack them.
                "icms_situacao_tributaria": item.get("icms_cst") or ("102" if simples else "00"),
                "pis_situacao_tributaria": item.get("pis_cst") or "07",
                "cofins_situacao_tributaria": item.get("cofins_cst") or "07",
                **(_ibs_cbs_item(item["ibs_cbs"]) if item.get("ibs_cbs") else {}),
            }
        )
    if invoice.get("ibs_cbs_totals"):
        body.update(_ibs_cbs_totals(invoice["ibs_cbs_totals"]))
    return body


def _int_or_none(value: object) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


def _correction(data: dict[str, Any]) -> CorrectionResult:
    return CorrectionResult(
        status="registered", number=_int_or_none(data.get("numero_carta_correcao")),
        sefaz_status=str(data.get("status_sefaz", ""))[:8], sefaz_reason=str(data.get("mensagem_sefaz", ""))[:500],
        xml_path=str(data.get("caminho_xml_carta_correcao", "")),
        pdf_path=str(data.get("caminho_pdf_carta_correcao", "")),
    )  # fmt: skip


class FocusNFeProvider:
    name = "focusnfe"

    def __init__(self, *, base_url: str, token: str, webhook_secret: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.webhook_secret = webhook_secret

    @classmethod
    def from_settings(cls, environment: str = "homologacao") -> FocusNFeProvider:
        return cls(
            base_url=getattr(settings, "FISCAL_FOCUSNFE_BASE_URL", "")
            or BASE_URLS.get(environment, BASE_URLS["homologacao"]),
            token=getattr(settings, "FISCAL_FOCUSNFE_TOKEN", ""),
            webhook_secret=getattr(settings, "FISCAL_WEBHOOK_SECRET", ""),
        )

    def _request(self, method: str, path: str, **kwargs: Any) -> Response:
        try:
            # Focus's URL is configuration, not input: no SSRF guard.
            response = request(
                method, self.base_url + path, auth=(self.token, ""), deadline=DEADLINE, max_bytes=MAX_FILE_BYTES,
                connect_timeout=CONNECT_TIMEOUT, guard=False, **kwargs,
            )  # fmt: skip
        except OutboundError as exc:  # timeout, refused, reset, too large: the outcome is unknown, ask again later
            raise ProviderUnavailable(f"Focus NFe inacessível: {exc.kind}") from exc
        if response.status_code in (401, 403):
            raise ProviderUnavailable(
                f"Focus NFe recusou o token (HTTP {response.status_code}): confira FISCAL_FOCUSNFE_TOKEN"
            )
        if response.status_code == 429 or response.status_code >= 500:
            raise ProviderUnavailable(f"Focus NFe indisponível (HTTP {response.status_code})")
        return response

    def _json(self, response: Response) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError as exc:
            raise ProviderUnavailable(f"resposta ilegível do Focus NFe (HTTP {response.status_code})") from exc
        if not isinstance(data, dict):
            raise ProviderUnavailable("resposta inesperada do Focus NFe")
        return data

    def result_from_webhook(self, *, body: dict[str, Any]) -> ProviderResult:
        status = STATUSES.get(str(body.get("status", "")))
        if status is None:
            raise ProviderUnavailable(f"situação desconhecida do Focus NFe: {body.get('status')!r}")
        issued_at = None
        protocol = body.get("protocolo") or ""
        if isinstance(body.get("protocolo_nota_fiscal"), dict):
            protocol = protocol or body["protocolo_nota_fiscal"].get("numero_protocolo", "")
        if body.get("data_emissao"):
            try:
                issued_at = datetime.fromisoformat(str(body["data_emissao"]))
            except ValueError:
                issued_at = None
        key = str(body.get("chave_nfe", "")).removeprefix("NFe")
        return ProviderResult(
            status=status,  # type: ignore[arg-type]
            access_key=key,
            number=_int_or_none(body.get("numero")),
            series=_int_or_none(body.get("serie")),
            protocol=str(protocol)[:32],
            sefaz_status=str(body.get("status_sefaz", ""))[:8],
            sefaz_reason=str(body.get("mensagem_sefaz", "") or body.get("mensagem", ""))[:500],
            issued_at=issued_at,
            # A cancelled note's answer names the cancellation event's XML (what `_store_files` keeps then).
            xml_path=str(
                body.get("caminho_xml_cancelamento" if status == "cancelled" else "caminho_xml_nota_fiscal", "")
            ),
            danfe_path=str(body.get("caminho_danfe", "")),
        )

    def issue(self, *, ref: str, invoice: dict[str, Any]) -> ProviderResult:
        response = self._request("POST", "/v2/nfe", params={"ref": ref}, json=focus_body(invoice))
        data = self._json(response)
        if response.status_code in (200, 201, 202):
            return self.result_from_webhook(body=data)
        # 4xx with {"codigo", "mensagem"}: the request itself was refused (our data), a definitive answer.
        return ProviderResult(
            status="rejected", sefaz_status=str(data.get("codigo", response.status_code))[:8],
            sefaz_reason=str(data.get("mensagem", "recusada pelo Focus NFe"))[:500],
        )  # fmt: skip

    def _note(self, ref: str) -> dict[str, Any] | None:
        """`GET /v2/nfe/REF`: the note as Focus knows it; None when it never heard of it."""
        response = self._request("GET", f"/v2/nfe/{ref}")
        if response.status_code == 404:
            return None
        data = self._json(response)
        if response.status_code != 200:
            raise ProviderUnavailable(f"consulta recusada pelo Focus NFe (HTTP {response.status_code})")
        return data

    def status(self, *, ref: str) -> ProviderResult | None:
        data = self._note(ref)
        return None if data is None else self.result_from_webhook(body=data)

    def cancel(self, *, ref: str, justification: str) -> ProviderResult:
        response = self._request("DELETE", f"/v2/nfe/{ref}", json={"justificativa": justification})
        data = self._json(response)
        if response.status_code == 200 and data.get("status") == "cancelado":
            return ProviderResult(
                status="cancelled", sefaz_status=str(data.get("status_sefaz", ""))[:8],
                sefaz_reason=str(data.get("mensagem_sefaz", ""))[:500],
                xml_path=str(data.get("caminho_xml_cancelamento", "")),  # the event's XML, kept for the accountant
            )  # fmt: skip
        # Refused (e.g. outside the window): the note stays authorized and the reason is shown to staff.
        return ProviderResult(
            status="authorized", sefaz_status=str(data.get("codigo", data.get("status_sefaz", "")))[:8],
            sefaz_reason=str(data.get("mensagem", data.get("mensagem_sefaz", "")))[:500],
        )  # fmt: skip

    def correct(self, *, ref: str, text: str) -> CorrectionResult:
        response = self._request("POST", f"/v2/nfe/{ref}/carta_correcao", json={"correcao": text})
        data = self._json(response)
        if response.status_code in (200, 201) and data.get("status") == "autorizado":
            return _correction(data)
        # erro_autorizacao (the SEFAZ refused the event) or a 4xx of Focus itself (`codigo`, `mensagem`): the note
        # keeps its letters as they were and staff read the reason.
        return CorrectionResult(
            status="refused", sefaz_status=str(data.get("status_sefaz") or data.get("codigo") or "")[:8],
            sefaz_reason=str(data.get("mensagem_sefaz") or data.get("mensagem") or "recusada pelo Focus NFe")[:500],
        )  # fmt: skip

    def last_correction(self, *, ref: str) -> CorrectionResult | None:
        data = self._note(ref)
        return _correction(data) if data is not None and _int_or_none(data.get("numero_carta_correcao")) else None

    def download(self, *, path: str) -> bytes:
        if not path.startswith("/") or path.startswith("//"):
            raise ProviderUnavailable("caminho de arquivo inesperado do Focus NFe")
        response = self._request("GET", path)
        if response.status_code != 200:
            raise ProviderUnavailable(f"arquivo indisponível no Focus NFe (HTTP {response.status_code})")
        return response.body

    def parse_webhook(self, *, headers: dict[str, str], body: bytes) -> WebhookEvent:
        given = headers.get(WEBHOOK_HEADER.lower(), "")
        if not self.webhook_secret or not hmac.compare_digest(given.encode(), self.webhook_secret.encode()):
            raise WebhookRejected("segredo do webhook ausente ou incorreto")

        try:
            data = json.loads(body)
        except ValueError as exc:
            raise WebhookRejected("corpo não é JSON") from exc
        if not isinstance(data, dict) or not isinstance(data.get("ref"), str) or not data["ref"]:
            raise WebhookRejected("notificação sem ref")
        # Focus sends no event id: the same state of the same note is the same event (re-deliveries dedupe).
        fingerprint = "|".join(
            str(data.get(k, "")) for k in ("ref", "status", "chave_nfe", "protocolo", "status_sefaz", "mensagem_sefaz")
        )
        return WebhookEvent(
            event_id=hashlib.sha256(fingerprint.encode()).hexdigest(), provider_ref=data["ref"][:80], body=data
        )
