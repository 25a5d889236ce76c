"""A read intent's message (`get_order`) answered with one statement to Postgres beside the read (issue 34).

`actions.handle_message` claims the messageId (an `in_progress` idempotency record, committed), reads the
conversation row, runs the intent and stores the reply (`done`): three statements and two commits around the
read. A read changes nothing, so its order can be turned around without weakening BCP-A2A-07:

1. the order is read and the reply built first (nothing is written; a reply to a new conversation names a
   fresh contextId);
2. one statement, committed on its own, then records the messageId as `done` with that reply, only when the
   conversation is the caller's (a CTE reads its row) or, for a message naming no conversation, inserts the
   new conversation in the same statement, only when the record went in (`INSERT … ON CONFLICT DO NOTHING`);
3. when the messageId was already recorded with the same message and is still live, the stored reply is the
   answer (this read is dropped unseen: the caller gets the original response, and nothing was written).

Everything else goes to `handle_message` unchanged, which then decides as it always did: a message the read
refuses (no order id), a conversation that is unknown or another caller's, a messageId recorded with another
message (`idempotency_conflict`), still running on the general path (`idempotency_in_progress`), expired, or a
store failure. So a repeated messageId is answered the same whichever path saw it first, and no record is ever
left `in_progress` by this path: a crash before the statement leaves nothing, after it the reply is stored.

The statement's own transaction commits without waiting for its WAL flush (`synchronous_commit` off, set by
`set_config(…, true)` inside the statement, so for that transaction only; Postgres' WAL writer flushes it within
3 × `wal_writer_delay`, 0.6 s by default). The flush wait was most of an A2A read's time on this shared machine:
in process, 6.0 → 2.1 ms a read (REST 1.3 ms), its backend's CPU 0.53 → 0.30 ms (issue 34; the WAL writer's
flushes, grouped for every session, are not in that count). The one crash state it adds: a Postgres
crash in that window loses the record (and a new conversation's row) whole, never half. A repeat of that messageId
is then read again, writing nothing (there is nothing else a read could do twice), and the lost conversation is
adopted by the caller's next message naming it (`actions.handle_message`). BCP-A2A-07 and §12 ask for the original
response, with fingerprint and reply kept ≥ 24 h, and a store that is down failing closed: all kept, but for that
window after a database crash. Redis is no substitute: as deployed it keeps periodic snapshots only and the shop
treats it as a flushable cache whose outage is a miss, so it would lose far more records and could not fail
closed. Writes (checkouts, orders, their idempotency records) keep synchronous commits.

Two copies of the same new messageId sent at once both read; the record of the first to commit is the
original, and the other is answered with it once that commit is visible (Postgres makes the second INSERT wait
for the first), where the general path answers `idempotency_in_progress` for the same window. Both are
answers §12 allows for a duplicate of a read: the original response, no write repeated.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.db import InterfaceError, OperationalError, connection
from django.utils import timezone

from bcp_app.models import A2AContext, IdempotencyRecord
from bcp_app.protocol.errors import ProtocolError
from bcp_app.service import idempotency
from bcp_app.transports.a2a import actions
from bcp_app.transports.a2a.messages import GET_ORDER

_DONE = IdempotencyRecord.State.DONE
REPLY_JSON = "a2a_reply_json"  # ctx.extra: (the reply recorded, its compact JSON by orjson)


def read_message(ctx: Any, message: dict[str, Any], *, language_given: bool = False) -> dict[str, Any]:
    """The reply to a `get_order` message naming no task: recorded in one statement, else `handle_message`."""
    reply = _read_once(ctx, message)
    return reply if reply is not None else actions.handle_message(ctx, message, language_given=language_given)


def _read_once(ctx: Any, message: dict[str, Any]) -> dict[str, Any] | None:
    """The reply (new, or replayed from its record), or None for `handle_message` to answer."""
    message_id, context_id = message.get("messageId"), message.get("contextId")
    if connection.vendor != "postgresql" or not isinstance(message_id, str) or not _key_ok(message_id):
        return None
    if context_id is not None and (not isinstance(context_id, str) or not actions.CONTEXT_ID.match(context_id)):
        return None
    structured, _extra, _text = actions.message_parts(message)
    if structured.get("action") != GET_ORDER:
        return None
    ctx.idempotency_key = message_id
    ctx.extra["a2a_context_id"] = conversation = context_id or str(uuid.uuid4())
    try:
        reply = actions.reply_message(conversation, actions.get_order_reply(ctx, structured, None))
    except ProtocolError:
        return None  # refused: `handle_message` refuses it too, after the messageId's own checks
    try:
        return _record(ctx, message_id, actions.fingerprint(message), conversation, context_id is None, reply)
    except (OperationalError, InterfaceError):
        return None  # the store is down or busy: `handle_message` answers as it lets it (503 when down)


def _key_ok(message_id: str) -> bool:
    try:
        return idempotency.check_key(message_id, operation=actions.OPERATION, field_name="messageId") is not None
    except ProtocolError:
        return False


def _record(
    ctx: Any, key: str, fingerprint: str, conversation: str, new: bool, reply: dict[str, Any]
) -> dict[str, Any] | None:
    now = timezone.now()
    stored, raw = actions.stored_reply_and_json(reply)
    text = stored.encoded.decode()
    values = {
        "principal": ctx.principal,
        "operation": actions.OPERATION,
        "key": key,
        "fingerprint": fingerprint,
        "text": text,
        "now": now,
        "expires": now + idempotency.RETENTION,
        "context": conversation,
        "platform": ctx.platform_id or "",
        "data": json.dumps({"principal": ctx.principal}),
    }
    with connection.cursor() as cursor:
        cursor.execute(_NEW_CONTEXT if new else _KNOWN_CONTEXT, values)
        inserted, owner, state, stored_fingerprint, stored_text, expires_at = cursor.fetchone()
    if inserted:
        if raw is not None:  # the reply's own JSON, for the response (`server.BcpDispatcher`)
            ctx.extra[REPLY_JSON] = (reply, raw)
        return reply
    if not new and owner != ctx.principal:
        return None  # unknown or another caller's conversation: adopted or refused by `handle_message`
    if state == _DONE and stored_fingerprint == fingerprint and stored_text is not None and expires_at > now:
        return json.loads(json.loads(stored_text)["message_json"])  # the original response (BCP-A2A-07)
    return None


def _statement(*, new: bool) -> str:
    """Record the messageId `done` with its reply, with the conversation: the caller's known one, or a new one
    inserted only beside the record; then the record already there, if any (and the known one's owner)."""
    records, contexts = IdempotencyRecord._meta.db_table, A2AContext._meta.db_table
    insert = (
        f"INSERT INTO {records} (principal, operation, key, fingerprint, state, response_status, response_text,"
        f" response_headers, created_at, expires_at) SELECT %(principal)s, %(operation)s, %(key)s, %(fingerprint)s,"
        f" '{_DONE}', 200, %(text)s, '{{}}'::jsonb, %(now)s, %(expires)s"
    )
    conflict = " ON CONFLICT (principal, operation, key) DO NOTHING RETURNING id"
    # One row, the setting (see the module's docstring) applied as the final SELECT reads it
    relaxed = "relaxed AS (SELECT set_config('synchronous_commit', 'off', true))"
    existing = (
        f" SELECT EXISTS (SELECT 1 FROM recorded), {{owner}}, r.state, r.fingerprint, r.response_text, r.expires_at"  # noqa: S608
        f" FROM relaxed LEFT JOIN {records} AS r"
        f" ON r.principal = %(principal)s AND r.operation = %(operation)s AND r.key = %(key)s"
    )
    if new:
        return (
            f"WITH {relaxed}, recorded AS ({insert}{conflict}),"  # noqa: S608
            f" opened AS (INSERT INTO {contexts} (context_id, checkout_id, platform_id, task_id, task_state, data,"
            f" created_at, updated_at) SELECT %(context)s, '', %(platform)s, '', '', %(data)s::jsonb, %(now)s, %(now)s"
            f" FROM recorded)" + existing.format(owner="NULL")
        )
    return (
        f"WITH {relaxed}, owner AS (SELECT data ->> 'principal' AS principal"  # noqa: S608
        f" FROM {contexts} WHERE context_id = %(context)s),"
        f" recorded AS ({insert} WHERE (SELECT principal FROM owner) = %(principal)s::varchar{conflict})"
        + existing.format(owner="(SELECT principal FROM owner)")
    )


_NEW_CONTEXT, _KNOWN_CONTEXT = _statement(new=True), _statement(new=False)
