"""A local fake of Focus NFe's REST API v2 on 127.0.0.1 (random port): the network boundary, not a mock.

Notes are kept in memory by `ref`. A POSTed note is checked like the SEFAZ checks the IBS/CBS groups of the tax
reform (NT 2025.002-RTC rules, with Focus's field names from https://campos.focusnfe.com.br/nfe/NotaFiscalXML.html
and https://focusnfe.com.br/guides/reforma-tributaria/): a normal-regime note (CRT 3) dated from 2026-01-05 without
the item group is rejection 1115 (UB12-10); an item value that is not vBC × rate (1041 vIBSUF, 1069 vCBS), a vIBS that
is not vIBSUF + vIBSMun (1150), totals without item groups (1118) or item groups without totals (1119), and a total
that is not the sum of the items (1076, 1080, 1084, 1085, 1091) are rejected when the note is next read; so are item
freights or discounts that do not add up to the note's (535, 537), a note total that is not its items' vProd + vFrete
+ vOutro − vDesc (610, "Total da NF difere do somatório dos Valores compõe o valor Total da NF") and an item vBC
that is not its operation's value (UB16: vProd + vFrete + vOutro − vDesc here; the codes 1071, and 1072 for item
vOutro that do not add up to the note's, are this fake's choice, the tables were not at hand).
`mode` decides what a new POST leads to: "authorize" (authorized on the first GET), "reject" (erro_autorizacao
with a SEFAZ reason), "slow" (processing until the test calls `finish(ref)`), "down" (503 on every request).

Cancellation, in the shape of Focus NFe's API v2 (https://focusnfe.com.br/doc/#nfe_cancelamento): `DELETE
/v2/nfe/REF` with the body `{"justificativa": "…"}` (15 to 255 characters, else HTTP 400 `requisicao_invalida`)
answers HTTP 200 with `status` "cancelado" (`status_sefaz` 135, `mensagem_sefaz`, `caminho_xml_cancelamento`) or
"erro_cancelamento" with the SEFAZ's refusal, and the note stays "autorizado". The SEFAZ refuses a cancel more than
24 hours after the authorization (rejection 501; Ajuste SINIEF 07/05 cláusula décima segunda, NT 2011/006 for the
cancel as an event; https://flexdocs.net/guia-nfe/cancela-nfe): `authorized_at` holds each note's authorization
time for that, and `cancel_refusals` makes the SEFAZ refuse a given ref (a note that already circulated, …). A
DELETE of a note already cancelled answers the cancellation again (a replay cancels nothing twice).

Carta de correção, in the shape of https://focusnfe.com.br/doc/#nfe_carta-de-correcao-eletronica: `POST
/v2/nfe/REF/carta_correcao` with `{"correcao": "…"}` (15 to 1,000 characters, the SEFAZ's xCorrecao; else HTTP 400
`requisicao_invalida`) answers synchronously HTTP 200 with `status` "autorizado", `status_sefaz` 135,
`numero_carta_correcao` (the note's next nSeqEvento) and `caminho_xml_carta_correcao`/`caminho_pdf_carta_correcao`;
from then on `GET /v2/nfe/REF` names that last letter with the same fields. `correction_refusals` makes the SEFAZ
refuse a ref's letters ("erro_autorizacao", the note unchanged); a note not authorized answers 422.

NF-e de devolução, in the shape of Focus NFe's guide https://focusnfe.com.br/blog/como-criar-uma-nf-e-tipo-devolucao
(and the field table https://campos.focusnfe.com.br/nfe/NotaFiscalXML.html: tpNF, finNFe, NFref/refNFe): the same
`POST /v2/nfe?ref=REF` with `tipo_documento` 0 (entrada), `finalidade_emissao` 4 (devolução) and
`notas_referenciadas`, which Focus takes only as an array of `{"chave_nfe": "<44 digits>"}` (an object is refused
before the SEFAZ: HTTP 422 `requisicao_invalida`). Checked like the SEFAZ when the note is next read: a devolução
without a referenced NF-e is rejection 321, a reference to a note this fake never authorized is rejection 267 (the
fake's choice: the SEFAZ's "NF-e referenciada inexistente" family); an item CFOP of saída (5/6/7xxx) on a note of
entrada is 519 and one of entrada on a note of saída 518; on a note of entrada a CFOP 1xxx with the buyer in another
UF is 524 and a 2xxx with the buyer in the shop's UF 523 (codes as remembered from the MOC's rules, not checked
against the tables).
`devolutions` lists each authorized devolução's ref with the keys it referenced.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fiscal import access_key

TOKEN = "token-homologacao-123"
CNPJ = "11222333000181"
REJECT_REASON = "Rejeição: NCM inexistente"
LATE_CANCEL = ("501", "Rejeição: Prazo de cancelamento superior ao previsto na Legislação")
CANCELLED = ("135", "Evento registrado e vinculado a NF-e")
IBSCBS_FROM = date(2026, 1, 5)
ITEM_TOTALS = (  # (root field, item field, rejection) of IBSCBSTot
    ("ibs_cbs_base_calculo", "ibs_cbs_base_calculo", "1076"),
    ("ibs_uf_valor_total", "ibs_uf_valor", "1080"),
    ("ibs_mun_valor_total", "ibs_mun_valor", "1084"),
    ("ibs_valor_total", "ibs_valor_total", "1085"),
    ("cbs_valor_total", "cbs_valor", "1091"),
)


def _cents(value: Any) -> int:
    return int((Decimal(str(value)) * 100).to_integral_value())


def _times(base: Any, rate: Any) -> int:
    return int((Decimal(str(base)) * Decimal(str(rate)) / 100 * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def ibs_cbs_rejection(body: dict[str, Any]) -> tuple[str, str] | None:
    """(status_sefaz, mensagem) the SEFAZ would answer about the IBS/CBS groups, or None when they are right."""
    items = body.get("items") or []
    grouped = [item for item in items if "ibs_cbs_situacao_tributaria" in item]
    issued = date.fromisoformat(str(body.get("data_emissao", ""))[:10])
    if str(body.get("regime_tributario_emitente")) == "3" and issued >= IBSCBS_FROM and len(grouped) < len(items):
        return "1115", "Rejeição: Grupo de informações do IBS/CBS não informado para contribuinte do regime normal"
    has_totals = "ibs_cbs_base_calculo" in body
    if has_totals and not grouped:
        return "1118", "Rejeição: Grupo de totais do IBS/CBS informado sem item com IBS/CBS"
    if grouped and not has_totals:
        return "1119", "Rejeição: Item com IBS/CBS sem o grupo de totais do IBS/CBS"
    for root, code, what in (
        ("valor_frete", "535", "Frete"),
        ("valor_desconto", "537", "Desconto"),
        ("valor_outras_despesas", "1072", "Outras Despesas Acessórias"),
    ):
        if any(root in item for item in items) and _cents(body.get(root, 0)) != sum(
            _cents(item.get(root, 0)) for item in items
        ):
            return code, f"Rejeição: Total do {what} difere do somatório dos itens"
    bruto = sum(_cents(item.get("valor_bruto", 0)) for item in items)
    summed = bruto + sum(_cents(body.get(root, 0)) for root in ("valor_frete", "valor_outras_despesas"))
    if items and _cents(body.get("valor_total", 0)) != summed - _cents(body.get("valor_desconto", 0)):
        return "610", "Rejeição: Total da NF difere do somatório dos Valores compõe o valor Total da NF"
    for item in grouped:
        if "ibs_cbs_base_calculo" not in item:
            continue  # a CST without gIBSCBS (410)
        base = item["ibs_cbs_base_calculo"]
        operation = (
            _cents(item["valor_bruto"])
            + _cents(item.get("valor_frete", 0))
            + _cents(item.get("valor_outras_despesas", 0))
            - _cents(item.get("valor_desconto", 0))
        )
        if _cents(base) != operation:  # UB16: vProd + vFrete + vSeg + vOutro − vDesc (no ICMS/PIS/COFINS values)
            return "1071", "Rejeição: Base de cálculo do IBS/CBS difere do valor da operação do item"
        if _cents(item["ibs_uf_valor"]) != _times(base, item["ibs_uf_aliquota"]):
            return "1041", "Rejeição: Valor do IBS da UF difere do produto da base pela alíquota"
        if _cents(item["cbs_valor"]) != _times(base, item["cbs_aliquota"]):
            return "1069", "Rejeição: Valor da CBS difere do produto da base pela alíquota"
        if _cents(item["ibs_valor_total"]) != _cents(item["ibs_uf_valor"]) + _cents(item["ibs_mun_valor"]):
            return "1150", "Rejeição: Valor do IBS difere da soma do IBS da UF e do Município"
    for root, field_name, code in ITEM_TOTALS if has_totals else ():
        if _cents(body[root]) != sum(_cents(item.get(field_name, 0)) for item in grouped):
            return code, f"Rejeição: Total {root} difere do somatório dos itens"
    return None


def devolution_rejection(body: dict[str, Any], authorized_keys: set[str]) -> tuple[str, str] | None:
    """(status_sefaz, mensagem) the SEFAZ would answer about a note's type, purpose, references and CFOPs."""
    entrada = str(body.get("tipo_documento")) == "0"
    referenced = [str(ref.get("chave_nfe", "")) for ref in body.get("notas_referenciadas") or []]
    if str(body.get("finalidade_emissao")) == "4":
        if not referenced:
            return "321", "Rejeição: NF-e de devolução de mercadoria não possui documento fiscal referenciado"
        if any(key not in authorized_keys for key in referenced):
            return "267", "Rejeição: NF-e referenciada inexistente"
    for item in body.get("items") or []:
        cfop = str(item.get("cfop", ""))
        if entrada and cfop[:1] not in ("1", "2", "3"):
            return "519", "Rejeição: CFOP de saída para NF-e de entrada"
        if not entrada and cfop[:1] in ("1", "2", "3"):
            return "518", "Rejeição: CFOP de entrada para NF-e de saída"
        interstate = str(body.get("local_destino")) == "2"
        if entrada and cfop[:1] == "1" and interstate:
            return "524", "Rejeição: CFOP de Operação Estadual e UF emitente difere UF destinatário"
        if entrada and cfop[:1] == "2" and not interstate:
            return "523", "Rejeição: CFOP não é de Operação Estadual e UF emitente igual a UF destinatário"
    return None


@dataclass
class FakeFocusState:
    mode: str = "authorize"
    notes: dict[str, dict[str, Any]] = field(default_factory=dict)
    bodies: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    sefaz_rejections: dict[str, tuple[str, str]] = field(default_factory=dict)  # ref → IBS/CBS rejection
    authorized_at: dict[str, datetime] = field(default_factory=dict)  # ref → when the SEFAZ authorized it
    cancel_refusals: dict[str, tuple[str, str]] = field(default_factory=dict)  # ref → (status_sefaz, mensagem)
    cancel_bodies: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # ref → every DELETE body
    corrections: dict[str, list[str]] = field(default_factory=dict)  # ref → the texts of its registered letters
    correction_refusals: dict[str, tuple[str, str]] = field(default_factory=dict)  # ref → (status_sefaz, mensagem)
    devolutions: dict[str, list[str]] = field(default_factory=dict)  # ref of an authorized devolução → keys it refers
    number: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def authorized_body(self, ref: str) -> dict[str, Any]:
        self.number += 1
        self.authorized_at[ref] = datetime.now(UTC)
        key = access_key.build(
            access_key.KeyParts(
                uf="SP", year_month="2612", cnpj=CNPJ, series=1, number=self.number, numeric_code=12345678
            )
        )
        return {
            "cnpj_emitente": CNPJ, "ref": ref, "status": "autorizado", "status_sefaz": "100",
            "mensagem_sefaz": "Autorizado o uso da NF-e", "chave_nfe": f"NFe{key}", "numero": str(self.number),
            "serie": "1", "protocolo": f"135260000{self.number:06d}",
            "caminho_xml_nota_fiscal": f"/arquivos/{CNPJ}/202612/XMLs/{key}-nfe.xml",
            "caminho_danfe": f"/arquivos/{CNPJ}/202612/DANFEs/{key}.pdf",
        }  # fmt: skip

    def finish(self, ref: str, *, reject: bool = False) -> dict[str, Any]:
        """The SEFAZ answered a slow note: what GET (and the gatilho) will say from now on."""
        with self.lock:
            if reject:
                self.notes[ref] = self.rejected_body(ref)
            else:
                self.notes[ref] = self.authorized_body(ref)
            return dict(self.notes[ref])

    def rejected_body(self, ref: str) -> dict[str, Any]:
        code, reason = self.sefaz_rejections.get(ref, ("778", REJECT_REASON))
        return {
            "cnpj_emitente": CNPJ, "ref": ref, "status": "erro_autorizacao", "status_sefaz": code,
            "mensagem_sefaz": reason,
        }  # fmt: skip


class Handler(BaseHTTPRequestHandler):
    state: FakeFocusState

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, body: Any, content_type: str = "application/json") -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _authorized(self) -> bool:
        expected = "Basic " + base64.b64encode(f"{TOKEN}:".encode()).decode()
        return self.headers.get("Authorization") == expected

    def _handle(self, method: str) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        state = self.state
        with state.lock:
            state.requests.append((method, url.path))
            if state.mode == "down":
                return self._send(503, {"codigo": "erro_interno", "mensagem": "Serviço indisponível"})
            if not self._authorized():
                return self._send(401, {"codigo": "nao_autorizado", "mensagem": "Token inválido"})
            if url.path.startswith("/notas_fiscais/") and "/cartas_correcao/" in url.path:
                return self._send(200, b"%PDF-1.4 fake carta de correcao", "application/pdf")
            if url.path.startswith("/arquivos/"):
                if url.path.endswith(".xml") and "-cce-" in url.path:  # the letter's event (tpEvento 110110)
                    return self._send(200, b"<procEventoNFe versao='1.00'><tpEvento>110110</tpEvento></procEventoNFe>",
                                      "application/xml")  # fmt: skip
                if url.path.endswith(".pdf"):
                    return self._send(200, b"%PDF-1.4 fake danfe", "application/pdf")
                if url.path.endswith("-can.xml"):  # the cancellation event (procEventoNFe, tpEvento 110111)
                    return self._send(200, b"<procEventoNFe versao='1.00'><tpEvento>110111</tpEvento></procEventoNFe>",
                                      "application/xml")  # fmt: skip
                return self._send(200, b"<nfeProc versao='4.00'/>", "application/xml")
            if method == "POST" and url.path == "/v2/nfe":
                ref = parse_qs(url.query).get("ref", [""])[0]
                if ref in state.notes:
                    return self._send(422, {"codigo": "already_processed", "mensagem": "Nota fiscal já autorizada"})
                if "notas_referenciadas" in body and not isinstance(body["notas_referenciadas"], list):
                    return self._send(
                        422, {"codigo": "requisicao_invalida", "mensagem": "notas_referenciadas deve ser um array"}
                    )
                state.bodies[ref] = body
                keys = {str(note.get("chave_nfe", "")).removeprefix("NFe") for note in state.notes.values()
                        if note.get("status") == "autorizado"}  # fmt: skip
                rejection = devolution_rejection(body, keys) or ibs_cbs_rejection(body)
                if rejection is not None:
                    state.sefaz_rejections[ref] = rejection
                state.notes[ref] = {"cnpj_emitente": CNPJ, "ref": ref, "status": "processando_autorizacao"}
                return self._send(202, state.notes[ref])
            ref = url.path.removeprefix("/v2/nfe/")
            if method == "POST" and ref.endswith("/carta_correcao"):
                ref = ref.removesuffix("/carta_correcao")
                return self._correct(ref, state.notes.get(ref), body if isinstance(body, dict) else {})
            note = state.notes.get(ref)
            if note is None:
                return self._send(404, {"codigo": "nao_encontrado", "mensagem": "Nota fiscal não encontrada"})
            if method == "GET":
                if note["status"] == "processando_autorizacao" and state.mode in ("authorize", "reject"):
                    authorize = state.mode == "authorize" and ref not in state.sefaz_rejections
                    state.notes[ref] = state.authorized_body(ref) if authorize else state.rejected_body(ref)
                    sent = state.bodies.get(ref) or {}
                    if authorize and str(sent.get("finalidade_emissao")) == "4":
                        state.devolutions[ref] = [n["chave_nfe"] for n in sent.get("notas_referenciadas") or []]
                return self._send(200, state.notes[ref])
            if method == "DELETE":
                return self._cancel(ref, note, body if isinstance(body, dict) else {})
        return self._send(405, {"codigo": "metodo_invalido"})

    def _cancel(self, ref: str, note: dict[str, Any], body: dict[str, Any]) -> None:
        state = self.state
        justification = body.get("justificativa")
        state.cancel_bodies.setdefault(ref, []).append(body)
        if not isinstance(justification, str) or not 15 <= len(justification) <= 255:
            return self._send(
                400, {"codigo": "requisicao_invalida", "mensagem": "Justificativa deve ter de 15 a 255 caracteres"}
            )
        if note["status"] == "cancelado":
            return self._send(200, self._cancelled(ref))
        if note["status"] != "autorizado":
            return self._send(422, {"codigo": "nfe_nao_autorizada", "mensagem": "Nota não autorizada"})
        refusal = state.cancel_refusals.get(ref)
        if refusal is None and datetime.now(UTC) - state.authorized_at[ref] > timedelta(hours=24):
            refusal = LATE_CANCEL
        if refusal is not None:  # the note stays authorized
            return self._send(
                200, {"status": "erro_cancelamento", "status_sefaz": refusal[0], "mensagem_sefaz": refusal[1]}
            )
        # GET of a cancelled note names the event's XML too (the crash-recovery poll reads it there)
        note.update(self._cancelled(ref))
        return self._send(200, self._cancelled(ref))

    def _correct(self, ref: str, note: dict[str, Any] | None, body: dict[str, Any]) -> None:
        state = self.state
        text = body.get("correcao")
        if note is None:
            return self._send(404, {"codigo": "nao_encontrado", "mensagem": "Nota fiscal não encontrada"})
        if not isinstance(text, str) or not 15 <= len(text) <= 1000:
            return self._send(
                400, {"codigo": "requisicao_invalida", "mensagem": "Correção deve ter de 15 a 1000 caracteres"}
            )
        if note["status"] != "autorizado":
            return self._send(422, {"codigo": "nfe_nao_autorizada", "mensagem": "Nota não autorizada"})
        refusal = state.correction_refusals.get(ref)
        if refusal is not None:
            return self._send(
                200, {"status": "erro_autorizacao", "status_sefaz": refusal[0], "mensagem_sefaz": refusal[1]}
            )
        letters = state.corrections.setdefault(ref, [])
        letters.append(text)
        key = str(note.get("chave_nfe", "")).removeprefix("NFe")
        letter = {
            "numero_carta_correcao": len(letters),
            "caminho_xml_carta_correcao": f"/arquivos/{CNPJ}/202612/XMLs/{key}-cce-{len(letters):02d}.xml",
            "caminho_pdf_carta_correcao": f"/notas_fiscais/NFe{key}/cartas_correcao/{len(letters)}.pdf",
        }
        note.update(letter)  # GET names the last letter from now on
        return self._send(
            200, {"status": "autorizado", "status_sefaz": "135", "mensagem_sefaz": CANCELLED[1], **letter}
        )

    def _cancelled(self, ref: str) -> dict[str, Any]:
        key = str(self.state.notes[ref].get("chave_nfe", "")).removeprefix("NFe")
        return {
            "status": "cancelado", "status_sefaz": CANCELLED[0], "mensagem_sefaz": CANCELLED[1],
            "caminho_xml_cancelamento": f"/arquivos/{CNPJ}/202612/XMLs/{key}-can.xml",
        }  # fmt: skip

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_DELETE(self) -> None:
        self._handle("DELETE")


@contextmanager
def fake_focus() -> Iterator[tuple[str, FakeFocusState]]:
    state = FakeFocusState()
    handler = type("BoundHandler", (Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
