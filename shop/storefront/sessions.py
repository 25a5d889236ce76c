"""The session engine (`SESSION_ENGINE`): Django's database sessions, read with a hand-written statement.

Every buyer's own page (cart, checkout, account) reads its session first, and compiling the ORM's
`Session.objects.get(...)` cost more CPU than Postgres spent answering it (issue 34: 8 % of the cart page). The
rows, writes, expiry and `clearsessions` stay Django's own: only the read is ours, the same row and the same
condition (an unexpired row of that key).

Why not the cache-backed engines: a session holds the buyer's cart id, the checkouts it may open and the signed-in
e-mail, and Redis here may lose entries (a flush, a restart without persistence) and answers a failed write as a
miss (kernel/ops/redis_cache.py). With `cached_db`, a write whose cache update failed leaves the older session in
Redis, read back as soon as Redis answers again (a cart that looks empty, a sign-out undone); with `cache`, a flush
empties every cart. Postgres stays the one place a session lives.
"""

from __future__ import annotations

import functools
from typing import Any

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.db import connections, router
from django.utils import timezone


@functools.cache
def _read_sql(vendor: str) -> str:
    model = DatabaseSessionStore.get_model_class()
    ops = connections[router.db_for_read(model)].ops
    table = ops.quote_name(model._meta.db_table)
    return f"SELECT session_data FROM {table} WHERE session_key = %s AND expire_date > %s"  # noqa: S608


class SessionStore(DatabaseSessionStore):
    def load(self) -> dict[str, Any]:
        """The session's data, or {} (and no key: a new one is made on save) when no unexpired row has it."""
        key = self.session_key
        connection = connections[router.db_for_read(self.model)]
        if key and "\x00" not in key:  # a NUL can match no row, and PostgreSQL would refuse the parameter
            now = connection.ops.adapt_datetimefield_value(timezone.now())
            with connection.cursor() as cursor:
                cursor.execute(_read_sql(connection.vendor), [key, now])
                row = cursor.fetchone()
            if row is not None:
                return self.decode(row[0])
        self._session_key = None
        return {}
