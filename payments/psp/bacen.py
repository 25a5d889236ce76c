"""`BacenPixPSP`: the Bacen-standard API Pix over httpx (PIX.md §4.2).

OAuth2 client credentials (token cached until `expires_in - 60 s`, refreshed once on 401), mTLS with
the PSP-issued client certificate, retries only for idempotent calls (GET, PUT with our ids) on
timeouts/5xx/429. PATCH is never retried blindly.

Every call goes through the kernel's outbound client, and one total deadline (`timeout`, seconds) bounds
the whole call: token, attempts and the pauses between them. A PSP that drips its answer one byte at a
time is a timeout at the deadline, not a request thread held for as long as it keeps dripping.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from datetime import date, datetime
from typing import Any
from urllib.parse import quote

from kernel.db_connections import release_db_connection
from kernel.http import Deadline, OutboundError, Response, client_tls_context, request
from payments.due import DueTerms
from payments.money import cents_to_decimal
from payments.psp.base import (
    PixPayer,
    PSPCharge,
    PSPError,
    PSPInvalidResponse,
    PSPNotFound,
    PSPPayment,
    PSPRefund,
    PSPRejected,
    PSPUnavailable,
    charge_from_bacen,
    cob_request_body,
    cobv_request_body,
    format_datetime,
    payment_from_bacen,
    refund_from_bacen,
)
from payments.psp.recurring import (
    PayerAccount,
    PSPAuthorizationRequest,
    PSPRecurrence,
    PSPRecurringCharge,
    authorization_request_from_bacen,
    cobr_request_body,
    rec_request_body,
    recurrence_from_bacen,
    recurring_charge_from_bacen,
    solicrec_request_body,
)

logger = logging.getLogger(__name__)

SCOPES = "cob.write cob.read pix.write pix.read webhook.write webhook.read"
_RETRY_STATUSES = {429, 500, 502, 503, 504}
MAX_BYTES = 4 * 1024 * 1024  # a page of GET /pix (100 Pix) is far below; anything larger is not an answer
# Process-wide token cache: one token per (token URL, client id), shared by every adapter instance.
_TOKENS: dict[str, tuple[str, float]] = {}
_TOKENS_LOCK = threading.Lock()


class BacenPixPSP:
    def __init__(
        self,
        *,
        base_url: str,
        token_url: str,
        client_id: str,
        client_secret: str,
        pix_key: str,
        cert_file: str = "",
        key_file: str = "",
        ca_file: str = "",
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.5,
        scopes: str = SCOPES,
    ) -> None:
        if not base_url or not token_url or not client_id:
            raise PSPError("BacenPixPSP needs PIX_PSP_BASE_URL, PIX_PSP_TOKEN_URL and PIX_PSP_CLIENT_ID")
        self.base_url = base_url.rstrip("/")
        self.token_url = token_url
        self.client_id = client_id
        self.client_secret = client_secret
        self.pix_key = pix_key
        self.retries = max(1, retries)
        self.backoff = backoff
        self.scopes = scopes
        self._cache_key = hashlib.sha256(f"{token_url}\0{client_id}\0{client_secret}".encode()).hexdigest()
        self.timeout = timeout
        self._tls = client_tls_context(cert_file, key_file, ca_file)

    def close(self) -> None:
        """Nothing to release: every call has its own connection, bounded by its deadline."""

    def _send(self, method: str, url: str, deadline: Deadline, **kwargs: Any) -> Response:
        # The PSP's URL is configuration, not input: no SSRF guard (it may sit on a private network).
        return request(method, url, deadline=deadline, max_bytes=MAX_BYTES, guard=False, tls=self._tls, **kwargs)

    # --- OAuth2 ---------------------------------------------------------------------------------------------------

    def _token(self, deadline: Deadline, *, refresh: bool = False) -> str:
        # Other calls wait for a token being fetched only as long as their own deadline allows.
        if not _TOKENS_LOCK.acquire(timeout=max(0.0, deadline.remaining())):
            raise PSPUnavailable("token endpoint: timeout (another call is fetching the token)")
        try:
            cached = _TOKENS.get(self._cache_key)
            if cached and not refresh and cached[1] > time.monotonic():
                return cached[0]
            try:
                response = self._send(
                    "POST", self.token_url, deadline, auth=(self.client_id, self.client_secret),
                    data={"grant_type": "client_credentials", "scope": self.scopes},
                )  # fmt: skip
            except OutboundError as exc:
                raise PSPUnavailable(f"token endpoint unreachable: {exc.kind}") from exc
            if response.status_code >= 500:
                raise PSPUnavailable(f"token endpoint answered {response.status_code}")
            if response.status_code != 200:
                raise PSPRejected(self._problem(response), response.status_code)
            body = self._json(response)
            token = body.get("access_token") if isinstance(body, dict) else None
            expires_in = body.get("expires_in", 300) if isinstance(body, dict) else 300
            if not isinstance(token, str) or not token or not isinstance(expires_in, int):
                raise PSPInvalidResponse("token endpoint answered without access_token/expires_in")
            _TOKENS[self._cache_key] = (token, time.monotonic() + max(0, expires_in - 60))
            return token
        finally:
            _TOKENS_LOCK.release()

    # --- HTTP -----------------------------------------------------------------------------------------------------

    @staticmethod
    def _json(response: Response) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise PSPInvalidResponse(f"PSP answered {response.status_code} with a non-JSON body") from exc

    @staticmethod
    def _problem(response: Response) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict):
            return body
        return {"type": "", "title": response.reason_phrase, "status": response.status_code}

    def _request(self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None) -> Any:
        idempotent = method in {"GET", "PUT"}
        attempts = self.retries if idempotent else 1
        refreshed = False
        attempt = 0
        deadline = Deadline(self.timeout)  # the whole call, retries and pauses included
        # A PSP that hangs must not hold a pooled database connection for its deadline: callers
        # make PSP calls with no transaction open, so the connection goes back to the pool here.
        release_db_connection()
        while True:
            attempt += 1
            try:
                headers = {"Authorization": f"Bearer {self._token(deadline)}"}
                response = self._send(method, self.base_url + path, deadline, json=json, params=params, headers=headers)
            except OutboundError as exc:
                error: PSPError = PSPUnavailable(f"{method} {path}: {exc.kind}")
                cause: Exception | None = exc
            else:
                if response.status_code == 401 and not refreshed:
                    # Token revoked or expired early: refresh once, then let a second 401 surface.
                    refreshed = True
                    self._token(deadline, refresh=True)
                    attempt -= 1
                    continue
                if response.status_code < 300:
                    return self._json(response) if response.body else {}
                if response.status_code == 404:
                    raise PSPNotFound(f"{method} {path}: not found")
                if response.status_code not in _RETRY_STATUSES:
                    raise PSPRejected(self._problem(response), response.status_code)
                error, cause = PSPUnavailable(f"{method} {path}: PSP answered {response.status_code}"), None
            pause = self.backoff * (2 ** (attempt - 1))
            if attempt >= attempts or deadline.remaining() <= pause:
                raise error from cause
            time.sleep(pause)

    # --- PixPSP ---------------------------------------------------------------------------------------------------

    @staticmethod
    def _charge(body: Any) -> PSPCharge:
        try:
            return charge_from_bacen(body)
        except ValueError as exc:
            raise PSPInvalidResponse(f"unusable cob body: {exc}") from exc

    def create_charge(
        self,
        *,
        txid: str,
        amount_cents: int,
        expires_in: int,
        payer: PixPayer | None,
        message: str | None,
        extra: list[tuple[str, str]],
    ) -> PSPCharge:
        body = cob_request_body(pix_key=self.pix_key, amount_cents=amount_cents, expires_in=expires_in, payer=payer)
        if message:
            body["solicitacaoPagador"] = message[:140]
        if extra:
            body["infoAdicionais"] = [{"nome": name[:50], "valor": value[:200]} for name, value in extra]
        return self._charge(self._request("PUT", f"/cob/{quote(txid)}", json=body))

    def create_due_charge(
        self,
        *,
        txid: str,
        amount_cents: int,
        terms: DueTerms,
        payer: PixPayer,
        message: str | None,
        extra: list[tuple[str, str]],
    ) -> PSPCharge:
        body = cobv_request_body(pix_key=self.pix_key, amount_cents=amount_cents, terms=terms, payer=payer)
        if message:
            body["solicitacaoPagador"] = message[:140]
        if extra:
            body["infoAdicionais"] = [{"nome": name[:50], "valor": value[:200]} for name, value in extra]
        return self._charge(self._request("PUT", f"/cobv/{quote(txid)}", json=body))

    @staticmethod
    def _path(kind: str, txid: str) -> str:
        if kind not in ("cob", "cobv"):
            raise PSPError(f"unknown charge kind {kind!r}")
        return f"/{kind}/{quote(txid)}"

    def get_charge(self, txid: str, kind: str = "cob") -> PSPCharge:
        return self._charge(self._request("GET", self._path(kind, txid)))

    def cancel_charge(self, txid: str, kind: str = "cob") -> PSPCharge:
        body = self._request("PATCH", self._path(kind, txid), json={"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"})
        return self._charge(body)

    def refund(self, *, e2eid: str, refund_id: str, amount_cents: int, description: str | None) -> PSPRefund:
        body: dict[str, Any] = {"valor": cents_to_decimal(amount_cents), "natureza": "ORIGINAL"}
        if description:
            body["descricao"] = description[:140]
        answer = self._request("PUT", f"/pix/{quote(e2eid)}/devolucao/{quote(refund_id)}", json=body)
        return self._refund(answer)

    def answer_infraction(self, *, infraction_id: str, accept: bool, justification: str) -> None:
        """MED answer. The Bacen's API Pix has no MED resource (MED runs in the DICT between institutions), so
        the receiver answers through its PSP's extension of the same API, authenticated the same way; the shape is
        Efí's, the PSP with a published one: `POST /v2/gn/infracoes/{idInfracao}/defesa` with
        `{"analise": "aceito" | "rejeitado", "justificativa": …}` (Efí's SDK `medDefense`, dev.efipay.com.br).
        A POST: never retried blindly; the outbox row is retried by its sweep, and a 4xx is final."""
        body = {"analise": "aceito" if accept else "rejeitado", "justificativa": justification[:2000]}
        self._request("POST", f"/v2/gn/infracoes/{quote(infraction_id)}/defesa", json=body)

    def get_refund(self, e2eid: str, refund_id: str) -> PSPRefund:
        return self._refund(self._request("GET", f"/pix/{quote(e2eid)}/devolucao/{quote(refund_id)}"))

    @staticmethod
    def _refund(body: Any) -> PSPRefund:
        try:
            return refund_from_bacen(body)
        except (ValueError, KeyError) as exc:
            raise PSPInvalidResponse(f"unusable devolucao body: {exc}") from exc

    def list_received(self, start: datetime, end: datetime) -> list[PSPPayment]:
        payments: list[PSPPayment] = []
        page = 0
        while True:
            params = {"inicio": format_datetime(start), "fim": format_datetime(end), "paginacao.paginaAtual": page}
            body = self._request("GET", "/pix", params=params)
            try:
                payments.extend(payment_from_bacen(item) for item in body.get("pix") or [])
                pages = int(body.get("parametros", {}).get("paginacao", {}).get("quantidadeDePaginas", 1))
            except (ValueError, AttributeError, TypeError) as exc:
                raise PSPInvalidResponse(f"unusable /pix body: {exc}") from exc
            page += 1
            if page >= pages:
                return payments

    def register_webhook(self, key: str, url: str) -> None:
        self._request("PUT", f"/webhook/{quote(key)}", json={"webhookUrl": url})

    # --- Pix Automático (payments/psp/recurring.py names the Bacen resources followed) ----------------------------

    @staticmethod
    def _parsed[T](parse: Callable[[Any], T], body: Any, what: str) -> T:
        try:
            return parse(body)
        except (ValueError, KeyError, TypeError) as exc:
            raise PSPInvalidResponse(f"unusable {what} body: {exc}") from exc

    def create_recurrence(
        self,
        *,
        contract: str,
        debtor: PixPayer,
        description: str,
        periodicity: str,
        start: date,
        end: date | None = None,
        amount_cents: int | None,
        retry_policy: str = "NAO_PERMITE",
        minimum_cents: int | None = None,
    ) -> PSPRecurrence:
        """`POST /rec`: the PSP assigns `idRec`. Not retried blindly (a POST); a lost answer is found by
        `contrato` in `GET /rec` later."""
        body = rec_request_body(
            contract=contract, debtor=debtor, description=description, periodicity=periodicity, start=start,
            end=end, amount_cents=amount_cents, retry_policy=retry_policy, minimum_cents=minimum_cents,
        )  # fmt: skip
        return self._parsed(recurrence_from_bacen, self._request("POST", "/rec", json=body), "rec")

    def get_recurrence(self, id_rec: str) -> PSPRecurrence:
        return self._parsed(recurrence_from_bacen, self._request("GET", f"/rec/{quote(id_rec)}"), "rec")

    def cancel_recurrence(self, id_rec: str) -> PSPRecurrence:
        """`PATCH /rec/{idRec}` with `status: CANCELADA` (`RecRevisada`): the receiver ends the authorization."""
        answer = self._request("PATCH", f"/rec/{quote(id_rec)}", json={"status": "CANCELADA"})
        return self._parsed(recurrence_from_bacen, answer, "rec")

    def request_authorization(
        self, *, id_rec: str, payer: PayerAccount, expires_at: datetime
    ) -> PSPAuthorizationRequest:
        """`POST /solicrec`: ask the payer's PSP to show the authorization in the bank app (Jornada 1)."""
        body = solicrec_request_body(id_rec=id_rec, payer=payer, expires_at=expires_at)
        answer = self._request("POST", "/solicrec", json=body)
        return self._parsed(authorization_request_from_bacen, answer, "solicrec")

    def get_authorization_request(self, id_solic_rec: str) -> PSPAuthorizationRequest:
        answer = self._request("GET", f"/solicrec/{quote(id_solic_rec)}")
        return self._parsed(authorization_request_from_bacen, answer, "solicrec")

    def create_recurring_charge(
        self, *, txid: str, id_rec: str, amount_cents: int, due_date: date, info: str = ""
    ) -> PSPRecurringCharge:
        """`PUT /cobr/{txid}` with our txid: idempotent, so retried on timeouts like `PUT /cob`."""
        body = cobr_request_body(id_rec=id_rec, amount_cents=amount_cents, due_date=due_date, info=info)
        answer = self._request("PUT", f"/cobr/{quote(txid)}", json=body)
        return self._parsed(recurring_charge_from_bacen, answer, "cobr")

    def get_recurring_charge(self, txid: str) -> PSPRecurringCharge:
        return self._parsed(recurring_charge_from_bacen, self._request("GET", f"/cobr/{quote(txid)}"), "cobr")

    def cancel_recurring_charge(self, txid: str) -> PSPRecurringCharge:
        answer = self._request("PATCH", f"/cobr/{quote(txid)}", json={"status": "CANCELADA"})
        return self._parsed(recurring_charge_from_bacen, answer, "cobr")

    def retry_recurring_charge(self, txid: str, settlement_date: date) -> PSPRecurringCharge:
        """`POST /cobr/{txid}/retentativa/{data}`: one more attempt on `settlement_date` (PERMITE_3R_7D only)."""
        answer = self._request("POST", f"/cobr/{quote(txid)}/retentativa/{settlement_date.isoformat()}")
        return self._parsed(recurring_charge_from_bacen, answer, "cobr")
