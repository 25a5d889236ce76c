"""A local fake PSP speaking the Bacen API Pix shape over HTTP (127.0.0.1, random port), for adapter tests.

It is the network boundary, not a mock of our code: the adapter talks real HTTP to it.

MED 2.0 (issue 37): the fake also plays the PSP's side of a dispute. `med_notice(...)` builds the webhook the PSP
forwards (the DICT infraction report / refund request fields in the snake_case JSON PSPs use — QI Tech's "Receive
Infraction Report" and "Receive Refund Request" webhooks) and remembers the infraction; `POST
/v2/gn/infracoes/{id}/defesa` takes the receiver's answer in Efí's shape (`{"analise": "aceito" | "rejeitado",
"justificativa": …}`, SDK `medDefense`): 404 for an unknown infraction, 422 for a second answer or a bad body.

Pix Automático (`/rec`, `/solicrec`, `/cobr/{txid}`) follows Bacen's API Pix OpenAPI 2.9.0 (github.com/bacen/pix-api
`openapi.yaml`: `RecSolicitada` → `RecGerada` with an `idRec` the PSP assigns, `RecRevisada` for cancelling,
`SolicRecSolicitada` → `SolicRecCompleta`, `CobRSolicitada` → `CobRGerada`, `recWebhookNotification1`).
"""

from __future__ import annotations

import base64
import io
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from payments.brcode import build_dynamic
from tests.payments.loopback import LoopbackServer

CLIENT_ID = "client-abc"
CLIENT_SECRET = "s3cr3t"


@dataclass
class FakeBacenState:
    cobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    cobvs: dict[str, dict[str, Any]] = field(default_factory=dict)
    refunds: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    received: list[dict[str, Any]] = field(default_factory=list)
    webhooks: dict[str, str] = field(default_factory=dict)
    infractions: dict[str, dict[str, Any]] = field(default_factory=dict)  # infraction key → last notice's data
    defenses: dict[str, dict[str, Any]] = field(default_factory=dict)  # infraction key → the answer received
    recs: dict[str, dict[str, Any]] = field(default_factory=dict)
    solicrecs: dict[str, dict[str, Any]] = field(default_factory=dict)
    cobrs: dict[str, dict[str, Any]] = field(default_factory=dict)
    valid_tokens: set[str] = field(default_factory=set)
    tokens_issued: int = 0
    requests: list[tuple[str, str, Any]] = field(default_factory=list)
    # Forced answers for the next API calls: (status, body or None). Consumed in order.
    forced: list[tuple[int, Any]] = field(default_factory=list)
    sleep_seconds: float = 0.0
    br_code_override: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Charge creation (PUT /cob) faults: `cob_entered` is set when one arrives; with `cob_gate` it then waits
    # until the test opens the gate (a PSP call in flight for as long as the test needs, with no sleep);
    # `cob_die` drops the connection without an answer (a PSP dying mid-call).
    cob_entered: threading.Event = field(default_factory=threading.Event)
    # Charge creations that passed the token check: a client holding a token another fake issued (a
    # fake that earlier held this port) is answered 401 first and that PUT is not a charge creation.
    cob_calls: int = 0
    cob_gate: threading.Event | None = None
    cob_die: bool = False
    # `cob_drip` (seconds): the answer to PUT /cob, status line to body, is sent one byte per interval (a PSP
    # that drips); `drip_sent` counts the bytes that left, `drip_cut` is set once the client hung up on it.
    cob_drip: float = 0.0
    drip_sent: int = 0
    drip_total: int = 0
    drip_cut: threading.Event = field(default_factory=threading.Event)
    drip_stop: threading.Event = field(default_factory=threading.Event)


def _problem(status: int, name: str, detail: str) -> dict[str, Any]:
    return {"type": f"https://pix.bcb.gov.br/api/v2/error/{name}", "title": name, "status": status, "detail": detail}


class Handler(BaseHTTPRequestHandler):
    state: FakeBacenState

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, body: Any) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Type", "").startswith("application/json") and raw:
            return json.loads(raw)
        return parse_qs(raw.decode()) if raw else None

    def _handle(self, method: str) -> None:
        state = self.state
        url = urlsplit(self.path)
        body = self._body()
        with state.lock:
            state.requests.append((method, url.path + (f"?{url.query}" if url.query else ""), body))
        if url.path == "/oauth/token":
            expected = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
            if self.headers.get("Authorization") != expected:
                self._send(401, {"error": "invalid_client"})
                return
            with state.lock:
                state.tokens_issued += 1
                token = f"token-{state.tokens_issued}"
                state.valid_tokens.add(token)
            self._send(
                200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": body["scope"][0]}
            )
            return
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Bearer ") or auth[7:] not in state.valid_tokens:
            self._send(401, _problem(401, "AcessoNegado", "invalid token"))
            return
        if state.sleep_seconds:
            time.sleep(state.sleep_seconds)
        with state.lock:
            forced = state.forced.pop(0) if state.forced else None
        if forced is not None:
            self._send(forced[0], forced[1] if forced[1] is not None else b"<html>oops</html>")
            return
        parts = [part for part in url.path.split("/") if part]
        if parts[:1] == ["cob"] and len(parts) == 2 and method == "PUT":
            with state.lock:
                state.cob_calls += 1
            state.cob_entered.set()
            if state.cob_gate is not None:
                state.cob_gate.wait(timeout=120)
            if state.cob_die:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                self.wfile = io.BytesIO()  # nothing more reaches the client
                return
        if parts[:1] == ["cob"] and len(parts) == 2 and method == "PUT" and state.cob_drip:
            self._drip(lambda: self._cob(method, parts[1], body))
        elif parts[:1] == ["cob"] and len(parts) == 2:
            self._cob(method, parts[1], body)
        elif parts[:1] == ["cobv"] and len(parts) == 2:
            self._cobv(method, parts[1], body)
        elif parts[:1] == ["pix"] and len(parts) == 4 and parts[2] == "devolucao":
            self._refund(method, parts[1], parts[3], body)
        elif parts == ["pix"] and method == "GET":
            self._list(parse_qs(url.query))
        elif parts[:3] == ["v2", "gn", "infracoes"] and len(parts) == 5 and parts[4] == "defesa" and method == "POST":
            self._defense(parts[3], body)
        elif parts[:1] == ["rec"]:
            self._rec(method, parts[1] if len(parts) == 2 else None, body)
        elif parts[:1] == ["solicrec"]:
            self._solicrec(method, parts[1] if len(parts) == 2 else None, body)
        elif parts[:1] == ["cobr"] and len(parts) == 2:
            self._cobr(method, parts[1], body)
        elif parts[:1] == ["cobr"] and len(parts) == 4 and parts[2] == "retentativa" and method == "POST":
            self._cobr_retry(parts[1], parts[3])
        elif parts[:1] == ["webhook"] and method == "PUT":
            state.webhooks[parts[1]] = body["webhookUrl"]
            self._send(200, {})
        else:
            self._send(404, _problem(404, "NaoEncontrado", self.path))

    def _drip(self, answer: Any) -> None:
        """Send what `answer()` writes one byte per `cob_drip` seconds; stop when the client hangs up."""
        state, wire = self.state, self.wfile
        self.wfile = io.BytesIO()
        answer()
        raw, self.wfile = self.wfile.getvalue(), wire
        self.close_connection = True
        with state.lock:
            state.drip_total = len(raw)
        for index in range(len(raw)):
            if state.drip_stop.wait(state.cob_drip):
                return
            try:
                self.connection.sendall(raw[index : index + 1])
            except OSError:
                state.drip_cut.set()  # the client gave up mid-answer (a send after its close fails)
                return
            with state.lock:
                state.drip_sent += 1

    def _cob(self, method: str, txid: str, body: Any) -> None:
        state = self.state
        cob = state.cobs.get(txid)
        if method == "PUT":
            if cob is not None and cob["status"] != "ATIVA":
                self._send(400, _problem(400, "CobOperacaoInvalida", "cob is not ATIVA"))
                return
            location = f"pix.example.com/qr/v2/{txid}"
            cob = {
                "calendario": {"criacao": "2026-07-28T15:00:00.000Z", "expiracao": body["calendario"]["expiracao"]},
                "txid": txid,
                "revisao": 0 if cob is None else cob["revisao"] + 1,
                "location": location,
                "status": "ATIVA",
                "valor": body["valor"],
                "chave": body["chave"],
                "pixCopiaECola": state.br_code_override
                or build_dynamic(location=location, merchant_name="LOJA EXEMPLO LTDA", merchant_city="SAO PAULO"),
            }
            state.cobs[txid] = cob
            self._send(201, cob)
        else:
            self._read_or_remove(method, cob, body, "Cob", txid)

    def _read_or_remove(self, method: str, cob: dict[str, Any] | None, body: Any, name: str, txid: str) -> None:
        """GET or PATCH of a `cob` / `cobv` (`name` "Cob" / "CobV" in the problem types)."""
        if cob is None:
            self._send(404, _problem(404, f"{name}NaoEncontrad{'a' if name == 'CobV' else 'o'}", txid))
        elif method == "GET":
            self._send(200, cob)
        elif method == "PATCH":
            if cob["status"] == "CONCLUIDA":
                self._send(400, _problem(400, f"{name}OperacaoInvalida", "charge is CONCLUIDA"))
                return
            cob["status"] = body["status"]
            cob["revisao"] += 1
            self._send(200, cob)

    def _cobv(self, method: str, txid: str, body: Any) -> None:
        """Pix com vencimento (Bacen `CobV`): `devedor` with CPF or CNPJ required, due-date calendar."""
        state = self.state
        cob = state.cobvs.get(txid)
        if method == "PUT":
            devedor = body.get("devedor") or {}
            if not devedor.get("nome") or not (devedor.get("cpf") or devedor.get("cnpj")):
                self._send(400, _problem(400, "CobVPayloadInvalido", "devedor: cpf ou cnpj e nome obrigatórios"))
                return
            if "dataDeVencimento" not in body.get("calendario", {}):
                self._send(400, _problem(400, "CobVPayloadInvalido", "calendario.dataDeVencimento obrigatório"))
                return
            if cob is not None and cob["status"] != "ATIVA":
                self._send(400, _problem(400, "CobVOperacaoInvalida", "cobv is not ATIVA"))
                return
            location = f"pix.example.com/qr/v2/cobv/{txid}"
            cob = {
                "calendario": {"criacao": "2026-07-28T15:00:00.000Z", **body["calendario"]},
                "txid": txid,
                "revisao": 0 if cob is None else cob["revisao"] + 1,
                "location": location,
                "status": "ATIVA",
                "devedor": devedor,
                "valor": body["valor"],
                "chave": body["chave"],
                "pixCopiaECola": build_dynamic(
                    location=location, merchant_name="LOJA EXEMPLO LTDA", merchant_city="SAO PAULO"
                ),
            }
            state.cobvs[txid] = cob
            self._send(201, cob)
        else:
            self._read_or_remove(method, cob, body, "CobV", txid)

    def _refund(self, method: str, e2eid: str, refund_id: str, body: Any) -> None:
        key = (e2eid, refund_id)
        if method == "PUT":
            refund = self.state.refunds.setdefault(
                key,
                {
                    "id": refund_id,
                    "rtrId": "D99999999202607281600abcdefghijk",
                    "valor": body["valor"],
                    "horario": {"solicitacao": "2026-07-28T16:00:00.000Z"},
                    "status": "EM_PROCESSAMENTO",
                },
            )
            self._send(201, refund)
        elif key in self.state.refunds:
            self._send(200, self.state.refunds[key])
        else:
            self._send(404, _problem(404, "DevolucaoNaoEncontrada", refund_id))

    def _defense(self, key: str, body: Any) -> None:
        if key not in self.state.infractions:
            self._send(404, _problem(404, "InfracaoNaoEncontrada", key))
        elif key in self.state.defenses:
            self._send(422, _problem(422, "DefesaJaEnviada", "a defesa desta infração já foi enviada"))
        elif (
            not isinstance(body, dict)
            or body.get("analise") not in ("aceito", "rejeitado")
            or not isinstance(body.get("justificativa"), str)
            or not body["justificativa"].strip()
        ):
            self._send(422, _problem(422, "DefesaInvalida", "analise e justificativa são obrigatórias"))
        else:
            self.state.defenses[key] = body
            self._send(200, {"idInfracao": key, "analise": body["analise"], "status": "EM_ANALISE"})

    def _rec(self, method: str, id_rec: str | None, body: Any) -> None:
        state = self.state
        if method == "POST" and id_rec is None:
            vinculo = body.get("vinculo") or {}
            calendario = body.get("calendario") or {}
            if not vinculo.get("contrato") or not (vinculo.get("devedor") or {}).get("nome"):
                self._send(400, _problem(400, "RecPayloadInvalido", "vinculo.contrato e vinculo.devedor obrigatórios"))
                return
            if calendario.get("periodicidade") not in ("SEMANAL", "MENSAL", "TRIMESTRAL", "SEMESTRAL", "ANUAL"):
                self._send(400, _problem(400, "RecPayloadInvalido", "calendario.periodicidade inválida"))
                return
            with state.lock:
                sequence = len(state.recs) + 1
            retry = "R" if body.get("politicaRetentativa") == "PERMITE_3R_7D" else "N"
            new_id = f"R{retry}9999999920260728{sequence:011d}"
            rec = {
                "idRec": new_id,
                **{key: body[key] for key in ("vinculo", "calendario", "valor", "politicaRetentativa") if key in body},
                "recebedor": {"cnpj": "12345678000195", "nome": "LOJA EXEMPLO LTDA"},
                "status": "CRIADA",
                "loc": {
                    "criacao": "2026-07-28T15:00:00.000Z",
                    "id": sequence,
                    "location": f"pix.example.com/qr/v2/rec/{new_id.lower()}",
                    "idRec": new_id,
                },
                "atualizacao": [{"status": "CRIADA", "data": "2026-07-28T15:00:00.000Z"}],
            }
            state.recs[new_id] = rec
            self._send(201, rec)
            return
        rec = state.recs.get(id_rec or "")
        if rec is None:
            self._send(404, _problem(404, "RecNaoEncontrado", str(id_rec)))
        elif method == "GET":
            self._send(200, rec)
        elif method == "PATCH" and body.get("status") == "CANCELADA":
            if rec["status"] in ("CANCELADA", "REJEITADA", "EXPIRADA"):
                self._send(400, _problem(400, "RecOperacaoInvalida", f"rec is {rec['status']}"))
                return
            self.server_cancel(rec, requester="USUARIO_RECEBEDOR", code="SLCR")
            self._send(200, rec)
        else:
            self._send(400, _problem(400, "RecOperacaoInvalida", "only status CANCELADA can be sent"))

    @staticmethod
    def server_cancel(rec: dict[str, Any], *, requester: str, code: str) -> None:
        rec["status"] = "CANCELADA"
        rec["encerramento"] = {"cancelamento": {"solicitante": requester, "codigo": code, "descricao": "cancelada"}}
        rec["atualizacao"].append({"status": "CANCELADA", "data": "2026-07-29T10:00:00.000Z"})

    def _solicrec(self, method: str, id_solic: str | None, body: Any) -> None:
        state = self.state
        if method == "POST" and id_solic is None:
            rec = state.recs.get(body.get("idRec", ""))
            if rec is None:
                self._send(404, _problem(404, "RecNaoEncontrado", str(body.get("idRec"))))
                return
            if rec["status"] != "CRIADA" or not body.get("destinatario", {}).get("ispbParticipante"):
                self._send(400, _problem(400, "SolicRecOperacaoInvalida", "rec not CRIADA or no destinatario"))
                return
            new_id = f"SC9999999920260728{len(state.solicrecs) + 1:011d}"
            solic = {
                "idSolicRec": new_id,
                "idRec": rec["idRec"],
                "calendario": body["calendario"],
                "status": "CRIADA",
                "destinatario": body["destinatario"],
                "atualizacao": [{"status": "CRIADA", "data": "2026-07-28T15:00:01.000Z"}],
                "recPayload": {key: rec[key] for key in ("idRec", "vinculo", "calendario", "valor") if key in rec},
            }
            state.solicrecs[new_id] = solic
            self._send(201, solic)
        elif method == "GET" and id_solic in state.solicrecs:
            self._send(200, state.solicrecs[id_solic])
        else:
            self._send(404, _problem(404, "SolicRecNaoEncontrada", str(id_solic)))

    def _cobr(self, method: str, txid: str, body: Any) -> None:
        state = self.state
        cobr = state.cobrs.get(txid)
        if method == "PUT":
            rec = state.recs.get(body.get("idRec", ""))
            if rec is None or rec["status"] != "APROVADA":
                self._send(400, _problem(400, "CobROperacaoInvalida", "recorrência inexistente ou não aprovada"))
                return
            if cobr is not None:
                self._send(200 if cobr["valor"] == body["valor"] else 400, cobr)  # a replay of the same PUT
                return
            # Bacen: a fixed recurrence is charged exactly valorRec; a variable one at least valorMinimoRecebedor.
            fixed, minimum = rec.get("valor", {}).get("valorRec"), rec.get("valor", {}).get("valorMinimoRecebedor")
            original = Decimal(body["valor"]["original"])
            if (fixed is not None and original != Decimal(fixed)) or (minimum and original < Decimal(minimum)):
                self._send(400, _problem(400, "CobRValorInvalido", "valor incompatível com a recorrência"))
                return
            cobr = {
                "idRec": rec["idRec"],
                "txid": txid,
                "calendario": {"criacao": "2026-07-28", **body["calendario"]},
                "valor": body["valor"],
                "status": "CRIADA",
                "politicaRetentativa": rec.get("politicaRetentativa", "NAO_PERMITE"),
                "ajusteDiaUtil": body.get("ajusteDiaUtil", False),
                "atualizacao": [{"status": "CRIADA", "data": "2026-07-28T15:00:02.000Z"}],
                **({"infoAdicional": body["infoAdicional"]} if "infoAdicional" in body else {}),
            }
            state.cobrs[txid] = cobr
            self._send(201, cobr)
        elif cobr is None:
            self._send(404, _problem(404, "CobRNaoEncontrada", txid))
        elif method == "GET":
            self._send(200, cobr)
        elif method == "PATCH" and body.get("status") == "CANCELADA" and cobr["status"] in ("CRIADA", "ATIVA"):
            cobr["status"] = "CANCELADA"
            cobr["atualizacao"].append({"status": "CANCELADA", "data": "2026-07-29T10:00:00.000Z"})
            self._send(200, cobr)
        else:
            self._send(400, _problem(400, "CobROperacaoInvalida", f"cobr is {cobr['status']}"))

    def _cobr_retry(self, txid: str, day: str) -> None:
        """`POST /cobr/{txid}/retentativa/{data}` (API Pix 2.9.0, answer `cobRResponse3`): refused as the API does
        under NAO_PERMITE, with an attempt still open, or beyond 3 retries."""
        cobr = self.state.cobrs.get(txid)
        if cobr is None:
            self._send(404, _problem(404, "CobRNaoEncontrado", txid))
            return
        attempts = cobr.setdefault("tentativas", [])
        if cobr.get("politicaRetentativa") != "PERMITE_3R_7D":
            self._send(400, _problem(400, "CobROperacaoInvalida", "A política configurada na recorrência não permite"))
        elif cobr["status"] != "ATIVA" or (attempts and attempts[-1]["status"] in ("SOLICITADA", "AGENDADA")):
            self._send(400, _problem(400, "CobROperacaoInvalida", "Existe uma tentativa não finalizada."))
        elif len(attempts) > 3:
            self._send(400, _problem(400, "CobROperacaoInvalida", "retentativas esgotadas"))
        else:
            e2e = f"E9999999920260801{len(self.state.cobrs):04d}{len(attempts):011d}"
            attempts.append({"dataLiquidacao": day, "tipo": "RIFL", "status": "SOLICITADA", "endToEndId": e2e})
            self._send(201, cobr)

    def _list(self, query: dict[str, list[str]]) -> None:
        page = int(query.get("paginacao.paginaAtual", ["0"])[0])
        per_page = 2
        items = self.state.received[page * per_page : (page + 1) * per_page]
        pages = max(1, -(-len(self.state.received) // per_page))
        self._send(
            200,
            {
                "parametros": {
                    "inicio": query["inicio"][0],
                    "fim": query["fim"][0],
                    "paginacao": {
                        "paginaAtual": page,
                        "itensPorPagina": per_page,
                        "quantidadeDePaginas": pages,
                        "quantidadeTotalDeItens": len(self.state.received),
                    },
                },
                "pix": items,
            },
        )

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")


# What the TLS proxy forwards on a webhook delivery once it verified the PSP's client certificate.
PROXY_VERIFIED = {"X-SSL-Client-Verify": "SUCCESS"}


def use_fake_bacen(settings: Any, server: FakeBacenServer) -> None:
    """Point the Bacen adapter at `server`: sandbox off, the fake's OAuth client, no backoff between retries,
    webhooks authenticated by the proxy's `PROXY_VERIFIED` header."""
    settings.BCP_PIX_SANDBOX = False
    settings.PIX_WEBHOOK_MTLS_HEADER = "X-SSL-Client-Verify"
    settings.PIX_PSP_BASE_URL = server.base_url
    settings.PIX_PSP_TOKEN_URL = server.base_url + "/oauth/token"
    settings.PIX_PSP_CLIENT_ID = CLIENT_ID
    settings.PIX_PSP_CLIENT_SECRET = CLIENT_SECRET
    settings.PIX_PSP_BACKOFF_SECONDS = 0.0


@pytest.fixture
def bacen(settings: Any) -> Iterator[FakeBacenServer]:
    """The production Pix PSP client (Bacen's API) against this fake on loopback, stopped afterwards; for every
    package (tests/conftest.py imports it)."""
    server = FakeBacenServer().start()
    use_fake_bacen(settings, server)
    settings.PIX_PSP_TIMEOUT_SECONDS = 5
    yield server
    server.stop()


class FakeBacenServer(LoopbackServer):
    state: FakeBacenState

    def __init__(self) -> None:
        super().__init__(Handler, FakeBacenState())

    def pay_cobv(self, txid: str, *, e2eid: str, valor: str, horario: str) -> dict[str, Any]:
        """The payer's bank paid `valor` (the value of that day, fine and interest included) at `horario`."""
        cob = self.state.cobvs[txid]
        pix = {"endToEndId": e2eid, "txid": txid, "valor": valor, "horario": horario}
        cob["status"] = "CONCLUIDA"
        cob.setdefault("pix", []).append(pix)
        self.state.received.append(pix)
        return pix

    def pay(self, txid: str, *, e2eid: str, valor: str | None = None) -> dict[str, Any]:
        cob = self.state.cobs[txid]
        pix = {
            "endToEndId": e2eid,
            "txid": txid,
            "valor": valor or cob["valor"]["original"],
            # One minute after the charge was created: on time, whatever the wall clock says.
            "horario": (datetime.fromisoformat(cob["calendario"]["criacao"]) + timedelta(minutes=1))
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
        }
        cob["status"] = "CONCLUIDA"
        cob.setdefault("pix", []).append(pix)
        self.state.received.append(pix)
        return pix

    def approve_rec(self, id_rec: str) -> dict[str, Any]:
        """The payer authorized in the bank app: the recurrence becomes APROVADA; returns the `/rec` webhook body."""
        rec = self.state.recs[id_rec]
        rec["status"] = "APROVADA"
        rec["atualizacao"].append({"status": "APROVADA", "data": "2026-07-28T16:00:00.000Z"})
        return {"recs": [{key: rec[key] for key in ("idRec", "status", "atualizacao")}]}

    def settle_cobr(self, txid: str, *, paid: bool) -> dict[str, Any]:
        """The due date at the payer's bank: the open attempt is paid (CONCLUIDA) or refused (REJEITADA; the charge
        ends EXPIRADA under NAO_PERMITE or after the third retry). Returns the `/cobr` webhook body
        (`cobRWebhookNotification1`'s shape: `{"cobsr": [{idRec, txid, status, atualizacao, tentativas}]}`)."""
        cobr = self.state.cobrs[txid]
        attempts = cobr.setdefault("tentativas", [])
        if not attempts:
            due = cobr["calendario"]["dataDeVencimento"]
            e2e = f"E9999999920260801{len(self.state.cobrs):04d}{0:011d}"
            attempts.append({"dataLiquidacao": due, "tipo": "AGND", "status": "AGENDADA", "endToEndId": e2e})
        attempts[-1]["status"] = "PAGA" if paid else "REJEITADA"
        if paid:
            cobr["status"] = "CONCLUIDA"
        elif cobr.get("politicaRetentativa") != "PERMITE_3R_7D" or len(attempts) > 3:
            cobr["status"] = "EXPIRADA"
        else:
            cobr["status"] = "ATIVA"
        cobr["atualizacao"].append({"status": cobr["status"], "data": f"2026-08-0{len(attempts)}T10:00:00.000Z"})
        keys = ("idRec", "txid", "status", "atualizacao", "tentativas")
        return {"cobsr": [json.loads(json.dumps({key: cobr[key] for key in keys}))]}

    def payer_cancels_rec(self, id_rec: str) -> dict[str, Any]:
        """The payer cancelled in the bank app; returns the `/rec` webhook body the PSP sends."""
        rec = self.state.recs[id_rec]
        Handler.server_cancel(rec, requester="USUARIO_PAGADOR", code="ACCL")
        return {"recs": [{key: rec[key] for key in ("idRec", "status", "atualizacao", "encerramento")}]}


def med_notice(
    server: FakeBacenServer,
    *,
    kind: str,
    infraction_key: str,
    e2eid: str,
    status: str,
    event_key: str,
    situation: str = "scam",
    details: str = "Pagador relata golpe: não reconhece a compra",
    analysis_result: str | None = None,
    requested: str | None = None,
    refunded: str | None = None,
) -> dict[str, Any]:
    """The body of the PSP's MED webhook (one event); the fake remembers the infraction for the answer."""
    data: dict[str, Any] = {"infraction_report_key": infraction_key, "end_to_end_id": e2eid,
                            "analysis_result": analysis_result, "analysis_details": None}  # fmt: skip
    if kind == "infraction_report":
        data.update(
            infraction_report_status=status, infraction_report_situation=situation,
            infraction_report_type="refund_request", infraction_report_details=details,
        )  # fmt: skip
    else:
        data.update(
            refund_request_key=f"rr-{infraction_key}", refund_request_type="fraud", refund_request_status=status,
            requested_amount=requested, refunded_amount=refunded,
        )  # fmt: skip
    with server.state.lock:
        server.state.infractions[infraction_key] = data
    return {"key": event_key, "event_datetime": "2026-12-01T15:00:00Z", "webhook_type": kind, "data": data}
