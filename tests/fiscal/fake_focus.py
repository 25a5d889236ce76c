"""A local fake of Focus NFe's REST API v2 on 127.0.0.1 (random port): the network boundary, not a mock.

Notes are kept in memory by `ref`. `mode` decides what a new POST leads to: "authorize" (authorized on
the first GET), "reject" (erro_autorizacao with a SEFAZ reason), "slow" (processing until the test calls
`finish(ref)`), "down" (503 on every request).
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fiscal import access_key

TOKEN = "token-homologacao-123"
CNPJ = "11222333000181"
REJECT_REASON = "Rejeição: NCM inexistente"


@dataclass
class FakeFocusState:
    mode: str = "authorize"
    notes: dict[str, dict[str, Any]] = field(default_factory=dict)
    bodies: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    number: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def authorized_body(self, ref: str) -> dict[str, Any]:
        self.number += 1
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
        return {
            "cnpj_emitente": CNPJ, "ref": ref, "status": "erro_autorizacao", "status_sefaz": "778",
            "mensagem_sefaz": REJECT_REASON,
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
            if url.path.startswith("/arquivos/"):
                if url.path.endswith(".pdf"):
                    return self._send(200, b"%PDF-1.4 fake danfe", "application/pdf")
                return self._send(200, b"<nfeProc versao='4.00'/>", "application/xml")
            if method == "POST" and url.path == "/v2/nfe":
                ref = parse_qs(url.query).get("ref", [""])[0]
                if ref in state.notes:
                    return self._send(422, {"codigo": "already_processed", "mensagem": "Nota fiscal já autorizada"})
                state.bodies[ref] = body
                state.notes[ref] = {"cnpj_emitente": CNPJ, "ref": ref, "status": "processando_autorizacao"}
                return self._send(202, state.notes[ref])
            ref = url.path.removeprefix("/v2/nfe/")
            note = state.notes.get(ref)
            if note is None:
                return self._send(404, {"codigo": "nao_encontrado", "mensagem": "Nota fiscal não encontrada"})
            if method == "GET":
                if note["status"] == "processando_autorizacao" and state.mode in ("authorize", "reject"):
                    state.notes[ref] = (
                        state.authorized_body(ref) if state.mode == "authorize" else state.rejected_body(ref)
                    )
                return self._send(200, state.notes[ref])
            if method == "DELETE":
                if note["status"] != "autorizado":
                    return self._send(422, {"codigo": "nfe_nao_autorizada", "mensagem": "Nota não autorizada"})
                note.update(
                    status="cancelado", status_sefaz="135", mensagem_sefaz="Evento registrado e vinculado a NF-e"
                )
                return self._send(
                    200, {"status": "cancelado", "status_sefaz": "135", "mensagem_sefaz": note["mensagem_sefaz"]}
                )
        return self._send(405, {"codigo": "metodo_invalido"})

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
