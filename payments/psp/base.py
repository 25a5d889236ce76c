"""The PSP boundary (PIX.md §4.1): protocol, value objects, exceptions, and the Bacen JSON shapes.

Every implementation speaks centavos and aware datetimes to the rest of the app; decimal strings
and RFC 3339 text exist only at this boundary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Protocol

from payments.due import DueTerms
from payments.money import cents_to_decimal, decimal_to_cents, percent_bp, percent_text

CHARGE_STATUSES = {
    "ATIVA": "ACTIVE",
    "CONCLUIDA": "COMPLETED",
    "REMOVIDA_PELO_USUARIO_RECEBEDOR": "REMOVED_BY_RECEIVER",
    "REMOVIDA_PELO_PSP": "REMOVED_BY_PSP",
}
REFUND_STATUSES = {"EM_PROCESSAMENTO": "PROCESSING", "DEVOLVIDO": "RETURNED", "NAO_REALIZADO": "FAILED"}


class PSPError(Exception):
    """Base of every PSP failure."""


class PSPUnavailable(PSPError):
    """Timeout, connection failure, 5xx/429 after retries, or an unusable answer: retry later."""


class PSPInvalidResponse(PSPUnavailable):
    """The PSP answered 2xx with something we must not use (bad JSON, invalid BR Code)."""


class PSPNotFound(PSPError):
    """404: the charge, Pix or devolução does not exist at the PSP."""


class PSPRejected(PSPError):
    """4xx with an RFC 7807 problem body; `name` is the API Pix error name (e.g. CobOperacaoInvalida)."""

    def __init__(self, problem: dict[str, Any], status_code: int = 400) -> None:
        self.problem = problem
        self.status_code = status_code
        self.name = str(problem.get("type", "")).rstrip("/").rsplit("/", 1)[-1]
        super().__init__(f"{status_code} {self.name}: {problem.get('detail') or problem.get('title') or ''}".strip())


@dataclass(frozen=True)
class PixPayer:
    name: str
    tax_id: str  # CPF (11 digits) or CNPJ (14 digits)


@dataclass(frozen=True)
class PSPRefund:
    refund_id: str
    rtr_id: str
    amount_cents: int
    status: str  # PROCESSING | RETURNED | FAILED
    reason: str = ""
    requested_at: datetime | None = None
    settled_at: datetime | None = None


@dataclass(frozen=True)
class PSPPayment:
    end_to_end_id: str
    txid: str
    amount_cents: int
    paid_at: datetime
    payer_message: str = ""
    refunds: tuple[PSPRefund, ...] = ()


@dataclass(frozen=True)
class PSPCharge:
    txid: str
    revision: int
    status: str  # ACTIVE | COMPLETED | REMOVED_BY_RECEIVER | REMOVED_BY_PSP
    amount_cents: int
    created_at: datetime
    expires_in: int
    br_code: str
    location: str
    payments: tuple[PSPPayment, ...] = field(default=())
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    kind: str = "cob"  # "cob" (immediate) | "cobv" (with a due date, `due` set)
    due: DueTerms | None = None


class PixPSP(Protocol):
    def create_charge(
        self,
        *,
        txid: str,
        amount_cents: int,
        expires_in: int,
        payer: PixPayer | None,
        message: str | None,
        extra: list[tuple[str, str]],
    ) -> PSPCharge: ...

    def create_due_charge(
        self,
        *,
        txid: str,
        amount_cents: int,
        terms: DueTerms,
        payer: PixPayer,
        message: str | None,
        extra: list[tuple[str, str]],
    ) -> PSPCharge: ...  # PUT /cobv/{txid}

    def get_charge(self, txid: str, kind: str = "cob") -> PSPCharge: ...  # GET /cob|cobv/{txid}

    def cancel_charge(self, txid: str, kind: str = "cob") -> PSPCharge: ...  # PATCH /cob|cobv/{txid}

    def answer_infraction(self, *, infraction_id: str, accept: bool, justification: str) -> None:
        """MED: the receiver's answer to a dispute (POST /v2/gn/infracoes/{id}/defesa, see BacenPixPSP)."""
        ...

    def refund(self, *, e2eid: str, refund_id: str, amount_cents: int, description: str | None) -> PSPRefund: ...

    def get_refund(self, e2eid: str, refund_id: str) -> PSPRefund: ...

    def list_received(self, start: datetime, end: datetime) -> list[PSPPayment]: ...

    def register_webhook(self, key: str, url: str) -> None: ...


# --- Bacen JSON shapes -> value objects (shared by the HTTP adapter, the sandbox and the webhook) ------------------


def parse_datetime(value: Any, *, field_name: str) -> datetime:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{field_name}: expected an RFC 3339 timestamp")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"{field_name}: {value!r} is not an RFC 3339 timestamp") from exc
    if parsed.tzinfo is None:
        raise ValueError(f"{field_name}: timestamp must carry a UTC offset")
    return parsed.astimezone(UTC)


def format_datetime(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _text(item: dict[str, Any], key: str, *, required: bool = True, max_length: int = 140) -> str:
    value = item.get(key, "")
    if value is None:
        value = ""
    if not isinstance(value, str) or (required and not value) or len(value) > max_length:
        raise ValueError(f"{key}: expected a string of 1..{max_length} characters")
    return value


def refund_from_bacen(item: dict[str, Any]) -> PSPRefund:
    if not isinstance(item, dict):
        raise ValueError("devolucoes[]: expected an object")
    horario = item.get("horario") or {}
    if not isinstance(horario, dict):
        raise ValueError("devolucoes[].horario: expected an object")
    status = REFUND_STATUSES.get(str(item.get("status", "")))
    if status is None:
        raise ValueError(f"devolucoes[].status: unknown {item.get('status')!r}")
    return PSPRefund(
        refund_id=_text(item, "id", max_length=35),
        rtr_id=_text(item, "rtrId", required=False, max_length=32),
        amount_cents=decimal_to_cents(item.get("valor")),
        status=status,
        reason=_text(item, "motivo", required=False) or _text(item, "descricao", required=False),
        requested_at=parse_datetime(horario["solicitacao"], field_name="horario.solicitacao")
        if horario.get("solicitacao")
        else None,
        settled_at=parse_datetime(horario["liquidacao"], field_name="horario.liquidacao")
        if horario.get("liquidacao")
        else None,
    )


def payment_from_bacen(item: dict[str, Any]) -> PSPPayment:
    if not isinstance(item, dict):
        raise ValueError("pix[]: expected an object")
    e2eid = _text(item, "endToEndId", max_length=32)
    if len(e2eid) != 32 or not e2eid.isalnum() or not e2eid.isascii():
        raise ValueError("endToEndId: expected 32 alphanumeric characters")
    refunds_raw = item.get("devolucoes") or []
    # The official API Pix example shows `devolucoes` as an object instead of an array: accept both.
    if isinstance(refunds_raw, dict):
        refunds_raw = [refunds_raw]
    if not isinstance(refunds_raw, list):
        raise ValueError("devolucoes: expected an array")
    amount = decimal_to_cents(item.get("valor"))
    if amount <= 0:
        raise ValueError("valor: must be positive")
    return PSPPayment(
        end_to_end_id=e2eid,
        txid=_text(item, "txid", required=False, max_length=35),
        amount_cents=amount,
        paid_at=parse_datetime(item.get("horario"), field_name="horario"),
        payer_message=_text(item, "infoPagador", required=False),
        refunds=tuple(refund_from_bacen(refund) for refund in refunds_raw),
    )


def parse_notification(body: Any) -> list[PSPPayment]:
    """Webhook body `{"pix": [...]}`; some PSPs (Inter) post a bare array. Raises ValueError when malformed."""
    items = body.get("pix") if isinstance(body, dict) else body
    if not isinstance(items, list) or not items:
        raise ValueError("pix: expected a non-empty array")
    return [payment_from_bacen(item) for item in items]


def cob_request_body(*, pix_key: str, amount_cents: int, expires_in: int, payer: PixPayer | None) -> dict[str, Any]:
    """The common part of a `PUT /cob/{txid}` body (expiry, immediate amount, key, debtor); callers add the texts."""
    body: dict[str, Any] = {
        "calendario": {"expiracao": expires_in},
        "valor": {"original": cents_to_decimal(amount_cents), "modalidadeAlteracao": 0},
        "chave": pix_key,
    }
    if payer is not None:
        body["devedor"] = {"cpf" if len(payer.tax_id) == 11 else "cnpj": payer.tax_id, "nome": payer.name}
    return body


def cobv_request_body(*, pix_key: str, amount_cents: int, terms: DueTerms, payer: PixPayer) -> dict[str, Any]:
    """The common part of a `PUT /cobv/{txid}` body (Bacen `CobVPayload`); `devedor` is required for a cobv."""
    valor: dict[str, Any] = {"original": cents_to_decimal(amount_cents)}
    if terms.fine_bp:
        valor["multa"] = {"modalidade": 2, "valorPerc": percent_text(terms.fine_bp)}
    if terms.interest_bp:
        valor["juros"] = {"modalidade": 3, "valorPerc": percent_text(terms.interest_bp)}
    if terms.discount_bp and terms.discount_until is not None:
        valor["desconto"] = {
            "modalidade": 2,
            "descontoDataFixa": [
                {"data": terms.discount_until.isoformat(), "valorPerc": percent_text(terms.discount_bp)}
            ],
        }
    return {
        "calendario": {
            "dataDeVencimento": terms.due_date.isoformat(),
            "validadeAposVencimento": terms.validity_days,
        },
        "devedor": {"cpf" if len(payer.tax_id) == 11 else "cnpj": payer.tax_id, "nome": payer.name},
        "valor": valor,
        "chave": pix_key,
    }


def _modality(valor: dict[str, Any], name: str, expected: int) -> int:
    part = valor.get(name)
    if not part:
        return 0
    if not isinstance(part, dict) or part.get("modalidade") != expected:
        raise ValueError(f"valor.{name}: only modalidade {expected} is supported")
    return percent_bp(part.get("valorPerc"))


def due_terms_from_bacen(calendario: dict[str, Any], valor: dict[str, Any]) -> DueTerms:
    """`calendario` + `valor` of a `cobv` body → DueTerms (the modalidades we issue; others are refused)."""
    try:
        due_date = date.fromisoformat(str(calendario["dataDeVencimento"]))
    except (KeyError, ValueError) as exc:
        raise ValueError("calendario.dataDeVencimento: expected YYYY-MM-DD") from exc
    validity = calendario.get("validadeAposVencimento", 30)
    if isinstance(validity, bool) or not isinstance(validity, int) or validity < 0:
        raise ValueError("calendario.validadeAposVencimento: expected a non-negative integer")
    desconto = valor.get("desconto") or {}
    discount_bp, until = 0, None
    if desconto:
        fixed = desconto.get("descontoDataFixa") if isinstance(desconto, dict) else None
        if desconto.get("modalidade") != 2 or not isinstance(fixed, list) or len(fixed) != 1:
            raise ValueError("valor.desconto: only modalidade 2 with one descontoDataFixa date is supported")
        if not isinstance(fixed[0], dict):
            raise ValueError("valor.desconto.descontoDataFixa[0]: expected an object")
        discount_bp = percent_bp(fixed[0].get("valorPerc"))
        try:
            until = date.fromisoformat(str(fixed[0].get("data")))
        except ValueError as exc:
            raise ValueError("valor.desconto.descontoDataFixa[0].data: expected YYYY-MM-DD") from exc
    return DueTerms(
        due_date=due_date,
        validity_days=validity,
        fine_bp=_modality(valor, "multa", 2),
        interest_bp=_modality(valor, "juros", 3),
        discount_bp=discount_bp,
        discount_until=until,
    )


def charge_from_bacen(body: Any) -> PSPCharge:
    if not isinstance(body, dict):
        raise ValueError("cob: expected an object")
    calendario = body.get("calendario") or {}
    valor = body.get("valor") or {}
    if not isinstance(calendario, dict) or not isinstance(valor, dict):
        raise ValueError("cob: calendario and valor must be objects")
    status = CHARGE_STATUSES.get(str(body.get("status", "")))
    if status is None:
        raise ValueError(f"status: unknown {body.get('status')!r}")
    created_at = parse_datetime(calendario.get("criacao"), field_name="calendario.criacao")
    due = due_terms_from_bacen(calendario, valor) if "dataDeVencimento" in calendario else None
    if due is not None:
        # A cobv has no `expiracao`: it can be paid until the end of its last day of validity.
        expires_in = max(1, int((due.expires_at - created_at).total_seconds()))
    else:
        expires_in = calendario.get("expiracao", 86400)
    if isinstance(expires_in, bool) or not isinstance(expires_in, int) or expires_in <= 0:
        raise ValueError("calendario.expiracao: expected a positive integer")
    revision = body.get("revisao", 0)
    pix = body.get("pix") or []
    if not isinstance(pix, list):
        raise ValueError("pix: expected an array")
    return PSPCharge(
        txid=_text(body, "txid", max_length=35),
        revision=revision if isinstance(revision, int) else 0,
        status=status,
        amount_cents=decimal_to_cents(valor.get("original")),
        created_at=created_at,
        expires_in=expires_in,
        br_code=_text(body, "pixCopiaECola", required=False, max_length=512),
        location=_text(body, "location", required=False, max_length=200),
        payments=tuple(payment_from_bacen(item) for item in pix),
        raw=body,
        kind="cobv" if due is not None else "cob",
        due=due,
    )
