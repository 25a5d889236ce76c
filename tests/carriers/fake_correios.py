"""A local fake of the Correios contract APIs on 127.0.0.1 (https://cws.correios.com.br manuals: Token, Preço,
Prazo, Pré-Postagem, Rastro), speaking their request and response shapes:

- `POST /token/v1/autentica/cartaopostagem` (Basic user:código de acesso, `{"numero"}`) → `token`, `expiraEm`;
- `POST /preco/v1/nacional` (batch `parametrosProduto`) → `[{coProduto, nuRequisicao, pcFinal: "25,40"}]` or
  `txErro`; `POST /prazo/v1/nacional` (batch `parametrosPrazo`) → `[{coProduto, prazoEntrega}]`;
- `POST /prepostagem/v1/prepostagens` → `{id, codigoObjeto}`; `DELETE …/{id}` (400 with `msgs` once posted);
  label `POST …/rotulo/assincrono/pdf` → `{idRecibo}`, `GET …/rotulo/download/assincrono/{idRecibo}` →
  `{nome, dados}` (base64 PDF);
- `GET /srorastro/v1/objetos/{codigo}?resultado=T` → `{objetos: [{codObjeto, eventos: [...]}]}` newest first.

Prices: SEDEX (03220) R$ 25,00 + R$ 8,00/kg, PAC (03298) R$ 18,00 + R$ 4,00/kg above the first kg of the larger of
real and cubic weight (L×W×H/6000); more than 30 kg is refused with `txErro`.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.carriers.fake_server import Reply, Request, s10, serve

USER, ACCESS_CODE, CARD = "11222333000181", "codigo-de-acesso", "0067599079"
TOKEN = "correios-token"
PDF = b"%PDF-1.4 rotulo correios"
PRICES = {"03220": (2500, 800, 2), "03298": (1800, 400, 6)}  # base, per kg, days


def _reais(centavos: int) -> str:
    return f"{centavos // 100},{centavos % 100:02d}"


@dataclass
class FakeCorreios:
    mode: str = "ok"
    delay: float = 0.0
    hang_after: dict[str, float] = field(default_factory=dict)
    prepostagens: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by codigoObjeto, newest first
    requests: list[tuple[str, str]] = field(default_factory=list)
    serial: int = 20_000_000
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add_event(self, code: str, codigo: str, tipo: str, when: str, descricao: str) -> None:
        self.events.setdefault(code, []).insert(0, {
            "codigo": codigo, "tipo": tipo, "dtHrCriado": when, "descricao": descricao,
            "unidade": {"tipo": "Agência dos Correios", "endereco": {"cidade": "SAO PAULO", "uf": "SP"}},
        })  # fmt: skip

    def route(self, request: Request) -> Reply:
        if self.mode == "down":
            return 503, {"msgs": ["Serviço indisponível"]}
        path = request.path
        if path == "/token/v1/autentica/cartaopostagem":
            expected = "Basic " + base64.b64encode(f"{USER}:{ACCESS_CODE}".encode()).decode()
            if request.headers.get("Authorization") != expected or request.json().get("numero") != CARD:
                return 401, {"msgs": ["Usuário ou código de acesso inválido"]}
            return 201, {"ambiente": "HOMOLOGACAO", "id": USER, "perfil": "PJ", "cnpj": USER,
                         "emissao": "2026-12-04T20:00:00", "expiraEm": "2099-12-05T20:00:00", "token": TOKEN,
                         "cartaoPostagem": {"numero": CARD, "contrato": "9912208555", "dr": 74}}  # fmt: skip
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return 401, {"msgs": ["Token inválido"]}
        body = request.json()
        if path == "/preco/v1/nacional":
            answer = []
            for p in body["parametrosProduto"]:
                base, per_kg, _days = PRICES[p["coProduto"]]
                cubic = int(p["comprimento"]) * int(p["largura"]) * int(p["altura"]) / 6
                grams = max(int(p["psObjeto"]), cubic)
                row: dict[str, Any] = {"coProduto": p["coProduto"], "nuRequisicao": p["nuRequisicao"]}
                if grams > 30000:
                    row["txErro"] = "Peso excede o limite de 30 kg."
                else:
                    row["pcFinal"] = _reais(base + per_kg * max(0, -int(-(grams - 1000) // 1000)))
                    row["psCobrado"] = str(int(grams))
                answer.append(row)
            return 200, answer
        if path == "/prazo/v1/nacional":
            return 200, [{"coProduto": p["coProduto"], "nuRequisicao": p["nuRequisicao"],
                          "prazoEntrega": PRICES[p["coProduto"]][2], "entregaDomiciliar": "S"}
                         for p in body["parametrosPrazo"]]  # fmt: skip
        if path == "/prepostagem/v1/prepostagens" and request.method == "POST":
            if len(body["destinatario"]["endereco"]["cep"]) != 8:
                return 400, {"msgs": ["CEP do destinatário inválido."]}
            self.serial += 1
            code = s10(self.serial, "AA")
            ident = f"PR{self.serial}"
            self.prepostagens[ident] = {**body, "id": ident, "codigoObjeto": code, "statusAtual": 1}
            return 201, {"id": ident, "codigoObjeto": code, "statusAtual": 1}
        if path.startswith("/prepostagem/v1/prepostagens/") and request.method == "DELETE":
            ident = path.rsplit("/", 1)[1]
            item = self.prepostagens.get(ident)
            if item is None:
                return 404, {"msgs": ["Pré-postagem não encontrada."]}
            if item["codigoObjeto"] in self.events:
                return 400, {"msgs": ["Pré-postagem já postada não pode ser cancelada."]}
            item["statusAtual"] = 2
            return 200, {"mensagem": "Pré-postagem cancelada."}
        if path == "/prepostagem/v1/prepostagens/rotulo/assincrono/pdf":
            return 200, {"idRecibo": "REC-" + "-".join(body["idsPrePostagem"])}
        if path.startswith("/prepostagem/v1/prepostagens/rotulo/download/assincrono/"):
            return 200, {"nome": "rotulo.pdf", "dados": base64.b64encode(PDF).decode()}
        if path.startswith("/srorastro/v1/objetos/"):
            code = path.rsplit("/", 1)[1]
            if code not in self.events:
                return 200, {
                    "versao": "1.0.0",
                    "quantidade": 1,
                    "objetos": [
                        {"codObjeto": code, "mensagem": "SRO-020: Objeto não encontrado na base de dados dos Correios."}
                    ],
                }
            return 200, {"versao": "1.0.0", "quantidade": 1,
                         "objetos": [{"codObjeto": code, "eventos": self.events[code]}]}  # fmt: skip
        return 404, {"msgs": ["Recurso não encontrado"]}


@contextmanager
def fake_correios() -> Iterator[tuple[str, FakeCorreios]]:
    state = FakeCorreios()
    with serve(state.route, state) as url:
        yield url, state
