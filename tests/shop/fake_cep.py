"""A CEP provider on loopback speaking ViaCEP's JSON API shape (`/ws/<cep>/json/`), for tests.

Answers by CEP: a known address, ViaCEP's "not found" (`{"erro": "true"}`), garbage, a wrong JSON shape, an
HTTP 500, and one that never answers until the test ends (a timeout that does not depend on speed).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PAULISTA = {
    "cep": "01310-100",
    "logradouro": "Avenida Paulista",
    "complemento": "de 612 a 1510 - lado par",
    "unidade": "",
    "bairro": "Bela Vista",
    "localidade": "São Paulo",
    "uf": "SP",
    "estado": "São Paulo",
    "regiao": "Sudeste",
    "ibge": "3550308",
    "gia": "1004",
    "ddd": "11",
    "siafi": "7107",
}
RIO = {**PAULISTA, "cep": "20040-002", "logradouro": "Avenida Rio Branco", "bairro": "Centro",
       "localidade": "Rio de Janeiro", "uf": "RJ", "estado": "Rio de Janeiro"}  # fmt: skip
FOUND_CEP, RIO_CEP, NOT_FOUND_CEP = "01310100", "20040002", "99999999"
SLOW_CEP, GARBAGE_CEP, WRONG_SHAPE_CEP, ERROR_CEP = "30130010", "40010000", "80010000", "88010000"


@dataclass
class FakeCep:
    url: str  # CEP_PROVIDER_URL for settings
    hits: Counter[str] = field(default_factory=Counter)
    release: threading.Event = field(default_factory=threading.Event)


def _handler(fake: FakeCep) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # keep the test output clean
            pass

        def _send(self, status: int, body: bytes, content_type: str = "application/json; charset=utf-8") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            parts = self.path.strip("/").split("/")
            cep = parts[1] if len(parts) == 3 and parts[0] == "ws" and parts[2] == "json" else ""
            fake.hits[cep] += 1
            if cep == FOUND_CEP:
                self._send(200, json.dumps(PAULISTA, ensure_ascii=False).encode())
            elif cep == RIO_CEP:
                self._send(200, json.dumps(RIO, ensure_ascii=False).encode())
            elif cep == NOT_FOUND_CEP:
                self._send(200, b'{"erro": "true"}')
            elif cep == SLOW_CEP:
                fake.release.wait(30)  # never answers while the test runs
                self._send(200, json.dumps(PAULISTA).encode())
            elif cep == GARBAGE_CEP:
                self._send(200, b"<html>Servico indisponivel</html>", "text/html")
            elif cep == WRONG_SHAPE_CEP:
                self._send(200, b'[{"uf": "PR"}]')
            elif cep == ERROR_CEP:
                self._send(500, b'{"message": "erro interno"}')
            else:
                self._send(400, b"Bad Request", "text/plain")

    return Handler


@contextmanager
def fake_cep_provider() -> Iterator[FakeCep]:
    fake = FakeCep(url="")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/ws/{{cep}}/json/"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)
