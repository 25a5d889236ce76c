"""Idempotency (BCP §12) over `IdempotencyRecord`, shared by REST, MCP and A2A.

Flow: `begin` inserts an `in_progress` row (committed at once so a concurrent duplicate sees it),
the operation runs, `finish` stores status + body + headers (`done`); a protocol error or crash
`release`s the row so the caller may retry. An operation whose engine knows its last transaction stores the
response inside it (`kernel.joined`, issue 34; BCP's card complete over REST and MCP, whose transports send the
operation's result as it is: `run(joinable=True)`): the change and its answer commit together, so no duplicate,
crash or restart meets the change committed with its key still `in_progress` (a duplicate then waits on the
record's row lock and replays), and no commit of its own follows; everywhere else `finish` writes it after the
operation's commit.

Replays with the same fingerprint get the stored response verbatim; another fingerprint is
`idempotency_conflict`; a duplicate while the first still runs is `idempotency_in_progress`; a store failure
fails closed with 503.

Fingerprints: REST = SHA-256 of the raw body bytes; MCP = SHA-256 of JCS({"name", "arguments"});
A2A = the caller's `messageId` as the key with a JCS fingerprint of the message parts.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import rfc8785
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext

from bcp_app.models import IdempotencyRecord
from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.results import OperationResult
from kernel.joined import joining, stored
from kernel.rows import new_row, update_where

RETENTION = timedelta(hours=48)  # ≥ 24 h required, 48 h recommended
LEASE = timedelta(minutes=2)  # an in_progress row older than this belongs to a crashed worker
# BCP-IDEM-02; the order_actions extension's operations move money, so they need a key as complete does.
KEY_REQUIRED = frozenset({"complete_checkout", "cancel_checkout", "cancel_order", "request_return"})
IDEMPOTENT_OPERATIONS = frozenset(
    {
        "create_checkout",
        "update_checkout",
        "complete_checkout",
        "cancel_checkout",
        "create_cart",
        "update_cart",
        "cancel_cart",  # cart/subscription keys optional
        "cancel_order",
        "request_return",
        "create_subscription",
        "cancel_subscription",
    }
)
_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")


def fingerprint_bytes(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def fingerprint_jcs(value: Any) -> str:
    """SHA-256 of the JCS form; JCS has no form for numbers outside I-JSON's exact range (2^53, 1e999, NaN),
    which a JSON-RPC body may still carry in a member the operation ignores or refuses by field: those get a
    sorted compact `json.dumps` instead (as deterministic, and never equal to a JCS output, which such numbers
    cannot appear in), so the operation answers as over REST rather than failing on the fingerprint."""
    try:
        canonical = rfc8785.dumps(value)
    except rfc8785.CanonicalizationError:
        canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return hashlib.sha256(canonical).hexdigest()


def mcp_fingerprint(name: str, arguments: dict[str, Any]) -> str:
    """BCP §12: a new JSON-RPC `id` must not break retries, so only name + arguments count."""
    return fingerprint_jcs({"name": name, "arguments": arguments})


def check_key(key: str | None, *, operation: str, field_name: str = "Idempotency-Key") -> str | None:
    if key is None or key == "":
        if operation in KEY_REQUIRED:
            raise ProtocolError(
                "idempotency_key_required",
                gettext("%(field)s é obrigatório em %(operation)s.") % {"field": field_name, "operation": operation},
            )
        return None
    if not isinstance(key, str) or not _KEY.match(key):
        raise ProtocolError(
            "invalid_request",
            gettext("%(field)s deve ter de 1 a 255 caracteres ASCII visíveis.") % {"field": field_name},
        )
    return key


def _unavailable(exc: Exception) -> ProtocolError:
    return ProtocolError(
        "unavailable", gettext("Armazenamento de idempotência indisponível; tente novamente."), retry_after=5
    )


def _claim(*, principal: str, operation: str, key: str, fingerprint: str, now: Any) -> IdempotencyRecord | None:
    """The usual case in one statement: INSERT … ON CONFLICT DO NOTHING (no savepoints, no second read).

    Outside a transaction it commits at once, so a concurrent duplicate sees the claim; None when the key
    is already taken (then `begin` reads the existing row under a lock)."""
    record = new_row(
        IdempotencyRecord,
        principal=principal,
        operation=operation,
        key=key,
        fingerprint=fingerprint,
        state=IdempotencyRecord.State.IN_PROGRESS,
        response_headers={},
        created_at=now,
        expires_at=now + RETENTION,
    )
    table = IdempotencyRecord._meta.db_table
    empty = "'{}'::jsonb" if connection.vendor == "postgresql" else "'{}'"
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (principal, operation, key, fingerprint, state, response_headers, created_at,"  # noqa: S608
            f" expires_at) VALUES (%s, %s, %s, %s, %s, {empty}, %s, %s)"
            " ON CONFLICT (principal, operation, key) DO NOTHING RETURNING id",
            [principal, operation, key, fingerprint, record.state, now, record.expires_at],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    record.pk = row[0]
    record._state.adding = False
    return record


# What a reused key is called where it came from: an A2A agent sends no idempotency key, only its messageId
# (BCP-A2A-07), so "esta chave de idempotência" named nothing it had sent (QA walk). In the active language (the
# caller's Accept-Language on REST; pt-BR by default).
def _conflict_text(field_name: str) -> str:
    if field_name == "messageId":
        return gettext("Este messageId já foi usado com outra mensagem; envie a nova mensagem com outro messageId.")
    return gettext("Esta chave de idempotência já foi usada com outra requisição.")


def _in_progress_text(field_name: str) -> str:
    if field_name == "messageId":
        return gettext("A mensagem original com este messageId ainda está em andamento.")
    return gettext("A requisição original com esta chave ainda está em andamento.")


def begin(
    *, principal: str, operation: str, key: str, fingerprint: str, field_name: str = "Idempotency-Key"
) -> IdempotencyRecord | OperationResult:
    """Claim `key` (returns the record) or answer from the store (returns the stored result)."""
    now = timezone.now()
    try:
        claimed = _claim(principal=principal, operation=operation, key=key, fingerprint=fingerprint, now=now)
        if claimed is not None:
            return claimed
        with transaction.atomic():
            record = IdempotencyRecord.objects.select_for_update().get(
                principal=principal, operation=operation, key=key
            )
            stale = record.expires_at <= now or (
                record.state == IdempotencyRecord.State.IN_PROGRESS and record.created_at < now - LEASE
            )
            if stale:
                IdempotencyRecord.objects.filter(pk=record.pk).update(
                    fingerprint=fingerprint,
                    state=IdempotencyRecord.State.IN_PROGRESS,
                    response_status=None,
                    response_body=None,
                    response_text=None,
                    response_headers={},
                    created_at=now,
                    expires_at=now + RETENTION,
                )
                record.refresh_from_db()
                return record
            if record.fingerprint != fingerprint:
                raise ProtocolError("idempotency_conflict", _conflict_text(field_name))
            if record.state == IdempotencyRecord.State.IN_PROGRESS:
                raise ProtocolError("idempotency_in_progress", _in_progress_text(field_name), retry_after=1)
            return _stored(record)
    except DatabaseError as exc:
        raise _unavailable(exc) from exc


def _stored(record: IdempotencyRecord) -> OperationResult:
    """The stored response: its exact bytes when kept as text (BCP-IDEM-04 "verbatim")."""
    text = record.response_text
    return OperationResult(
        status_code=record.response_status or 200,
        body=json.loads(text) if text is not None else (record.response_body or {}),
        headers=dict(record.response_headers or {}),
        replayed=True,
        raw=text.encode() if text is not None else None,
    )


def finish(record: IdempotencyRecord, result: OperationResult) -> None:
    record.state, record.response_status = IdempotencyRecord.State.DONE, result.status_code
    record.response_text, record.response_headers = result.encoded.decode(), result.headers
    try:
        # SQL text built once per process (kernel.rows), not compiled by the ORM on every request (issue 34)
        update_where(record, _FINISHED)
    except DatabaseError as exc:
        raise _unavailable(exc) from exc


_FINISHED = ("state", "response_status", "response_text", "response_headers")


def release(record: IdempotencyRecord) -> None:
    # On a store failure the lease simply expires on its own.
    with contextlib.suppress(DatabaseError):
        IdempotencyRecord.objects.filter(pk=record.pk, state=IdempotencyRecord.State.IN_PROGRESS).delete()


def run(
    *,
    principal: str,
    operation: str,
    key: str | None,
    fingerprint: str,
    execute: Callable[[], OperationResult],
    field_name: str = "Idempotency-Key",
    joinable: bool = False,
) -> OperationResult:
    """Execute `execute()` at most once per (principal, operation, key); enforce required keys.

    `joinable`: `execute` returns the operation's own result unchanged (BCP REST's and MCP's card complete), so the
    operation may store it in its last transaction (`kernel.joined`: the engine joins, the operation presents its
    answer, this writes it; the record is trusted done when `execute` hands back the very answer stored). A
    transport that reshapes it inside `execute` (UCP's REST face, A2A's reply) must not: the record would hold
    the operation's body until the reshaped one replaced it after commit."""
    key = check_key(key, operation=operation, field_name=field_name)
    if key is None:
        return execute()
    claimed = begin(principal=principal, operation=operation, key=key, fingerprint=fingerprint, field_name=field_name)
    if isinstance(claimed, OperationResult):
        return claimed
    try:
        if joinable:
            with joining(lambda answer: _finished(claimed, answer)):
                result = execute()
                stored_in_transaction = stored() is result
        else:
            result, stored_in_transaction = execute(), False
    except BaseException:
        release(claimed)
        raise
    if not stored_in_transaction:
        finish(claimed, result)
    return result


def _finished(record: IdempotencyRecord, answer: OperationResult) -> OperationResult:
    """`finish` inside the operation's last transaction (before its commit), as `kernel.joined`'s write."""
    finish(record, answer)
    return answer


def purge_expired(*, now: Any = None) -> int:
    deleted, _ = IdempotencyRecord.objects.filter(expires_at__lt=now or timezone.now()).delete()
    return deleted
