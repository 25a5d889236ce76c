"""Redis round trips of an authenticated BCP request (issue 11), on the real Redis production uses with REDIS_URL.

Every agent request presenting an API key reads three cache entries before its operation: the failed-key
count of its IP (BCP_RATE_LIMIT_AUTH_FAILURES), the platform owning the key and the platform's profile, and
counts one call on its rate-limit counter. They were four round trips (two cache GETs, a GET and an EVALSHA
of the `limits` storage); `resolve_context` now makes them one, the cache's `count_and_read`
(kernel/ops/redis_cache.py: INCR the counter, EXPIRE NX it, MGET the entries, sent together). A checkout
operation's own read-mostly entries (store settings, policies, shipping table, catalog version: four more
keys) come in it too.
Counted at redis-py's connection: one entry per round trip, the names of the commands it carried (an
MGET with its number of keys: `counted(n)` names the count with n entries read beside it).
"""

from __future__ import annotations

import multiprocessing
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.core.cache import caches
from django.test import Client

from bcp_app.service import negotiation, ratelimit
from bcp_app.service.platforms import platform_cache_key, platform_create, platform_revoke
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import CARD, call, catalog, full_update
from tests.bcp_app.test_rest_order import place_order
from tests.shop.test_cache_cross_process import _redis_url

pytestmark = [pytest.mark.django_db, pytest.mark.postgres, pytest.mark.usefixtures("bcp_settings")]

SENT: list[str] = []  # one entry per round trip: its commands' names joined by "+", in the order sent


def command_names(packed: bytes) -> list[str]:
    """The command names in RESP-encoded commands (`*N` arrays of `$len` bulk strings), as a pipeline packs
    several into one send."""
    names: list[str] = []
    lines = packed.split(b"\r\n")
    index = 0
    while index < len(lines) and lines[index].startswith(b"*"):
        count = int(lines[index][1:])
        name = lines[index + 2].decode().upper()  # *N, $len, NAME: the first bulk string
        if name == "MGET":  # MGET key…
            name += f":{count - 1}"
        names.append(name)
        index += 1 + 2 * count
    return names


def counted(entries: int) -> str:
    """The round trip of `read_and_count` with `entries` entries read beside the counter."""
    return "INCR+EXPIRE" + (f"+MGET:{entries}" if entries else "")


class CountingConnection(redis.Connection):
    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        chunks = [command] if isinstance(command, bytes | str) else list(command)
        packed = b"".join(chunk if isinstance(chunk, bytes) else chunk.encode() for chunk in chunks)
        SENT.append("+".join(command_names(packed)))
        super().send_packed_command(command, check_health)


@pytest.fixture
def counted_redis(settings: Any) -> Iterator[list[str]]:
    url = _redis_url()
    settings.REDIS_URL = url
    settings.CACHES = {"default": {"BACKEND": "kernel.ops.redis_cache.KeptClientRedisCache", "LOCATION": url,
                                   "KEY_PREFIX": f"test-{uuid.uuid4().hex[:8]}",
                                   "OPTIONS": {"connection_class": CountingConnection}}}  # fmt: skip
    yield SENT
    SENT.clear()
    caches["default"].clear()


def test_an_authenticated_get_order_makes_one_redis_round_trip(
    counted_redis: list[str], fake_platform: FakePlatform, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.BCP_RATE_LIMIT_AUTH_FAILURES = "3/10minutes"
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    catalog()
    platform = platform_create(name="Agente", profile_url=fake_platform.publish())
    headers = agent(platform.platform.profile_url, Authorization=f"Bearer {platform.api_key}")
    client = Client(REMOTE_ADDR="198.51.100.7")
    order = place_order(client, headers, django_capture_on_commit_callbacks)
    assert call(client, "get", f"/orders/{order.public_id}", headers).status_code == 200  # caches the entries
    counted_redis.clear()
    for _ in range(3):
        assert call(client, "get", f"/orders/{order.public_id}", headers).json()["id"] == order.public_id
    # failures (the IP's and the key prefix's), platform, profile and the store settings (the agent trust tiers,
    # issue 35) read, and the read counter counted, at once
    assert counted_redis == [counted(5)] * 3
    # the counter is the window's: it expires with it (60 s + 1) and reads back as an integer
    window = ratelimit.call_window(
        op_class="read",
        caller=ratelimit.caller_from_headers({"authorization": headers["Authorization"]}, None)[0],
        authenticated=True,
    )
    assert window is not None
    made = caches["default"].make_and_validate_key(window.key)
    assert 0 < redis.Redis.from_url(_redis_url()).ttl(made) <= 61
    assert caches["default"].get(window.key) >= 1  # (a minute boundary may fall between the calls)

    # the failed-key budget still holds across that one read: 3 wrong keys, then even the right one is refused
    attacker = Client(REMOTE_ADDR="203.0.113.9")
    wrong = {**headers, "Authorization": "Bearer bcp_0123456789ab_" + "x" * 30}
    assert [call(attacker, "get", f"/orders/{order.public_id}", wrong).status_code for _ in range(4)] == [
        401,
        401,
        401,
        429,
    ]
    limited = call(attacker, "get", f"/orders/{order.public_id}", headers)
    assert limited.status_code == 429
    assert 1 <= int(limited.headers["retry-after"]) <= 600
    assert call(client, "get", f"/orders/{order.public_id}", headers).status_code == 200  # another address
    assert ratelimit.auth_failures_keys("203.0.113.9") != ratelimit.auth_failures_keys("198.51.100.7")


def test_the_platform_and_profile_tokens_in_the_round_trip_are_plain_integers(
    counted_redis: list[str], fake_platform: FakePlatform
) -> None:
    """Issue 34: the version tokens identity reads on every call (the API key's platform, the profile's negotiated
    copy) are random integers, which Django's serializer stores as digits and reads back with `int()`: string
    tokens were pickles, read after a failed `int()` on every request. A revocation still drops the token, and the
    next call is refused (BCP §7)."""
    platform = platform_create(name="Agente", profile_url=fake_platform.publish())
    headers = agent(platform.platform.profile_url, Authorization=f"Bearer {platform.api_key}")
    client = Client(REMOTE_ADDR="198.51.100.7")
    for _ in range(2):  # written by the first call, read by the second
        missing = call(client, "get", "/orders/ord_nenhum", headers)
        assert [message["code"] for message in missing.json()["messages"]] == ["not_found"]
    cache = caches["default"]
    stored = redis.Redis.from_url(_redis_url())
    tokens = [platform_cache_key(platform.api_key), negotiation.profile_version_key(platform.platform.profile_url)]
    for key in tokens:
        raw = stored.get(cache.make_key(key))
        assert raw is not None and raw.isdigit(), (key, raw)
    assert counted_redis.count(counted(5)) == 2  # every token of both calls in their one round trip each

    platform_revoke(public_id=platform.platform.public_id)
    assert stored.get(cache.make_key(tokens[0])) is None
    assert call(client, "get", "/orders/ord_nenhum", headers).json()["code"] == "unauthenticated"


def test_a_checkout_flow_reads_the_cache_once_per_request_beside_its_catalog_lines(
    counted_redis: list[str], fake_platform: FakePlatform, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    catalog()
    platform = platform_create(name="Agente", profile_url=fake_platform.publish(handlers=fake_platform.with_card()))
    headers = agent(platform.platform.profile_url, Authorization=f"Bearer {platform.api_key}")
    client = Client(REMOTE_ADDR="198.51.100.7")

    def flow() -> dict[str, list[str]]:
        sent: dict[str, list[str]] = {}
        line = {
            "line_items": [{"item": {"id": "SKU-CAFE-500G"}, "quantity": 1}],
            "buyer": {"email": "ana@example.com.br"},
        }
        counted_redis.clear()
        created = call(
            client, "post", "/checkout-sessions", {**headers, "Idempotency-Key": str(uuid.uuid4())}, line
        ).json()
        sent["create"] = list(counted_redis)
        addressed = call(
            client, "put", f"/checkout-sessions/{created['id']}", headers, full_update(created, pix=False)
        ).json()
        body = {**full_update(addressed, pix=False), "payment": {"instruments": [CARD]}}
        counted_redis.clear()
        ready = call(client, "put", f"/checkout-sessions/{created['id']}", headers, body).json()
        sent["update"] = list(counted_redis)
        assert ready["status"] == "ready_for_complete", ready.get("messages")
        counted_redis.clear()
        with django_capture_on_commit_callbacks(execute=False):  # the placed order's task is the worker's
            done = call(
                client,
                "post",
                f"/checkout-sessions/{created['id']}/complete",
                {**headers, "Idempotency-Key": str(uuid.uuid4())},
                {"payment": {"instruments": [CARD]}},
            ).json()
        sent["complete"] = list(counted_redis)
        assert done["status"] == "completed", done.get("messages")
        return sent

    flow()  # every entry cached
    assert flow() == {
        # identity (key failures per IP and per key prefix), the operation's entries (the version tokens of the
        # store settings with their policies and of the shipping table, the catalog version: kernel/ops/kept.py)
        # and the write counter; the create budget; the line's catalog entry comes from this process's own copy
        # (shop/checkout/stock.py `_kept`, issue 34), kept under the same catalog version
        "create": [counted(7), counted(0)],
        "update": [counted(7)],
        "complete": [counted(7)],
    }


def test_the_counter_keeps_its_window_and_one_left_without_expiry_gets_it_from_the_next_call(
    counted_redis: list[str],
) -> None:
    """The count is a window's: created to expire with it, not pushed back by later calls; and a counter left
    without an expiry (its creator gone between the INCR and the EXPIRE, or a Redis that lost it) gets the window
    from the next call instead of counting for ever (issue 34: EXPIRE NX sent with every count)."""
    cache = caches["default"]
    cache.set("entry", {"a": 1}, 60)
    stored = redis.Redis.from_url(_redis_url())
    made = cache.make_and_validate_key("calls")
    assert cache.read_and_count(["entry", "absent"], "calls", 60) == ({"entry": {"a": 1}}, 1)
    assert 0 < stored.ttl(made) <= 60
    stored.expire(made, 5)  # later calls leave the window where it is
    assert cache.read_and_count(["entry"], "calls", 60) == ({"entry": {"a": 1}}, 2)
    assert 0 < stored.ttl(made) <= 5
    stored.persist(made)
    assert cache.read_and_count([], "calls", 60) == ({}, 3)
    assert 0 < stored.ttl(made) <= 60
    assert cache.get("calls") == 3  # a plain integer, as Django's serializer reads one


class NoExpireNxConnection(CountingConnection):
    """A Redis older than 7.0 at the wire: EXPIRE's NX option refused (sent here as an option no Redis knows)."""

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        chunks = [command] if isinstance(command, bytes | str) else list(command)
        packed = b"".join(chunk if isinstance(chunk, bytes) else chunk.encode() for chunk in chunks)
        super().send_packed_command([packed.replace(b"$2\r\nNX\r\n", b"$2\r\nZZ\r\n")], check_health)


def test_a_redis_without_expire_nx_still_counts_reads_and_sets_the_window(
    counted_redis: list[str], settings: Any
) -> None:
    settings.CACHES = {"default": {**settings.CACHES["default"], "OPTIONS": {"connection_class": NoExpireNxConnection}}}
    cache = caches["default"]
    cache.set("entry", "token", 60)
    assert cache.read_and_count(["entry"], "calls", 60) == ({"entry": "token"}, 1)
    made = cache.make_and_validate_key("calls")
    assert 0 < redis.Redis.from_url(_redis_url()).ttl(made) <= 60  # set by the call that created the counter
    assert cache.read_and_count(["entry"], "calls", 60) == ({"entry": "token"}, 2)
    assert cache.get("entry") == "token"  # the connection read every reply: the next command gets its own


def test_the_count_and_read_connection_is_one_per_thread_and_reconnects(counted_redis: list[str]) -> None:
    """The command every agent request sends goes over its thread's own connection (kernel/ops/redis_cache.py
    `_ThreadConnection`): threads never share one, so no call reads another's reply, and a connection Redis
    dropped (a restart, an idle timeout) is opened again by the pool's retry instead of failing the call."""
    cache = caches["default"]
    cache.set("entry", "token", 60)
    answers: list[tuple[dict[str, Any], int | None]] = []

    def calls() -> None:
        answers.extend(cache.read_and_count(["entry"], "calls", 60) for _ in range(100))

    threads = [threading.Thread(target=calls) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [found for found, _ in answers] == [{"entry": "token"}] * 400
    assert sorted(count for _, count in answers) == list(range(1, 401))  # each call counted once
    assert counted_redis.count(counted(1)) == 400
    connection = cache._cache._thread_connections.get()  # this thread's, as Redis knows it
    connection.send_command("CLIENT", "ID")
    redis.Redis.from_url(_redis_url()).client_kill_filter(_id=connection.read_response())
    assert cache.read_and_count(["entry"], "calls", 60) == ({"entry": "token"}, 401)


def test_a_forked_process_opens_its_own_count_and_read_connection(counted_redis: list[str]) -> None:
    """A worker forked after its parent sent the command (uvicorn's, Celery's prefork) must not read replies
    off the parent's socket: it opens its own connection."""
    cache = caches["default"]
    cache.set("entry", "token", 60)
    assert cache.read_and_count(["entry"], "calls", 60) == ({"entry": "token"}, 1)
    child = multiprocessing.get_context("fork").Process(target=_count_in_child, args=(50,))
    child.start()
    _count_in_child(50)  # the parent at the same time, on its own connection
    child.join(timeout=60)
    assert child.exitcode == 0
    assert cache.get("calls") == 101


def _count_in_child(calls: int) -> None:
    cache = caches["default"]
    for _ in range(calls):
        found, count = cache.read_and_count(["entry"], "calls", 60)
        assert found == {"entry": "token"} and count is not None
