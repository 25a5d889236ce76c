"""Idempotency (BCP §12, BCP-IDEM-*) over REST and at the service level."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from celery.signals import task_prerun
from django.db import connection
from django.test import Client
from django.utils import timezone, translation

from bcp_app.models import IdempotencyRecord
from bcp_app.protocol.errors import ProtocolError
from bcp_app.protocol.results import OperationResult
from bcp_app.service import idempotency
from bcp_app.service.platforms import platform_create
from bcp_app.tasks import purge_idempotency_records
from orders.models import Order
from shop.models import Checkout
from tests.bcp_app.bcp_fixtures import FakePlatform, agent
from tests.bcp_app.rest_helpers import CARD, call, catalog, full_update

pytestmark = [pytest.mark.usefixtures("bcp_settings")]
BODY = '{"line_items":[{"item":{"id":"SKU-CAFE-500G"},"quantity":2}]}'


@pytest.fixture
def headers(fake_platform: FakePlatform) -> dict[str, str]:
    catalog()
    return agent(fake_platform.publish(), **{"Idempotency-Key": "4f1c2a8e-0b7d-4d2e-9a51-6c3e8f0b1d22"})


@pytest.mark.django_db
def test_same_key_and_body_replays_the_stored_response_bcp_idem_01_04(client: Client, headers: dict[str, str]) -> None:
    first = call(client, "post", "/checkout-sessions", headers, BODY)
    second = call(client, "post", "/checkout-sessions", headers, BODY)
    assert (first.status_code, second.status_code) == (201, 201)
    assert second.json() == first.json()
    assert Checkout.objects.count() == 1
    record = IdempotencyRecord.objects.get()
    assert (record.operation, record.state, record.response_status) == ("create_checkout", "done", 201)
    assert record.fingerprint == idempotency.fingerprint_bytes(BODY.encode())


@pytest.mark.django_db
def test_same_key_other_body_is_a_conflict_bcp_idem_05(client: Client, headers: dict[str, str]) -> None:
    call(client, "post", "/checkout-sessions", headers, BODY)
    response = call(client, "post", "/checkout-sessions", headers, BODY.replace("2", "3"))
    assert response.status_code == 409
    assert response.json() == {
        "code": "idempotency_conflict",
        "content": "Esta chave de idempotência já foi usada com outra requisição.",
    }
    assert Checkout.objects.count() == 1


@pytest.mark.django_db
def test_the_conflict_and_in_progress_texts_follow_the_callers_language_bcp_idem_05_06(
    client: Client, headers: dict[str, str]
) -> None:
    """The texts are in the catalog (gettext): an agent asking for English reads English, pt-BR stays the default."""
    english = {**headers, "Accept-Language": "en"}
    call(client, "post", "/checkout-sessions", english, BODY)
    response = call(client, "post", "/checkout-sessions", english, BODY.replace("2", "3"))
    assert response.status_code == 409
    assert response.json() == {
        "code": "idempotency_conflict",
        "content": "This idempotency key was already used with a different request.",
    }
    idempotency.begin(principal="p", operation="complete_checkout", key="k", fingerprint="f")
    idempotency.begin(principal="a2a", operation="message", key="m", fingerprint="f", field_name="messageId")
    said = {}
    for language in ("en", "pt-br"):
        with translation.override(language):
            for key, field_name, fingerprint in (("k", "Idempotency-Key", "f"), ("m", "messageId", "other")):
                operation = "message" if key == "m" else "complete_checkout"
                principal = "a2a" if key == "m" else "p"
                with pytest.raises(ProtocolError) as refused:
                    idempotency.begin(
                        principal=principal, operation=operation, key=key, fingerprint=fingerprint,
                        field_name=field_name,
                    )  # fmt: skip
                said[language, field_name] = (refused.value.code, refused.value.content)
            with pytest.raises(ProtocolError) as missing:
                idempotency.check_key(None, operation="complete_checkout")
            said[language, "required"] = (missing.value.code, missing.value.content)
    assert said == {
        ("en", "Idempotency-Key"): (
            "idempotency_in_progress",
            "The original request with this key is still in progress.",
        ),
        ("en", "messageId"): (
            "idempotency_conflict",
            "This messageId was already used with another message; send the new message with another messageId.",
        ),
        ("en", "required"): ("idempotency_key_required", "Idempotency-Key is required for complete_checkout."),
        ("pt-br", "Idempotency-Key"): (
            "idempotency_in_progress",
            "A requisição original com esta chave ainda está em andamento.",
        ),
        ("pt-br", "messageId"): (
            "idempotency_conflict",
            "Este messageId já foi usado com outra mensagem; envie a nova mensagem com outro messageId.",
        ),
        ("pt-br", "required"): ("idempotency_key_required", "Idempotency-Key é obrigatório em complete_checkout."),
    }


@pytest.mark.django_db
def test_duplicate_while_the_original_runs_is_in_progress_bcp_idem_06(
    client: Client, headers: dict[str, str], fake_platform: FakePlatform
) -> None:
    from bcp_app.service.context import RequestContext

    ctx = RequestContext(transport="rest", profile_url=fake_platform.url("/perfil.json"), profile={}, capabilities={})
    idempotency.begin(
        principal=ctx.principal,
        operation="create_checkout",
        key=headers["Idempotency-Key"],
        fingerprint=idempotency.fingerprint_bytes(BODY.encode()),
    )
    response = call(client, "post", "/checkout-sessions", headers, BODY)
    assert response.status_code == 409
    assert response.json()["code"] == "idempotency_in_progress"
    assert response["Retry-After"] == "1"
    assert Checkout.objects.count() == 0


@pytest.mark.django_db
def test_keys_are_scoped_by_principal_and_kept_48_hours_bcp_idem_03(
    client: Client, headers: dict[str, str], fake_platform: FakePlatform
) -> None:
    platform = platform_create(name="Agente", profile_url=fake_platform.url("/perfil.json"))
    call(client, "post", "/checkout-sessions", headers, BODY)
    call(client, "post", "/checkout-sessions", {**headers, "Authorization": f"Bearer {platform.api_key}"}, BODY)
    assert Checkout.objects.count() == 2
    records = list(IdempotencyRecord.objects.order_by("id"))
    assert records[1].principal == f"platform:{platform.platform.public_id}"
    assert records[0].principal.startswith("profile:")
    assert all(abs((r.expires_at - r.created_at) - timedelta(hours=48)) < timedelta(seconds=1) for r in records)


@pytest.mark.django_db
def test_protocol_errors_release_the_key(client: Client, headers: dict[str, str]) -> None:
    """A body refused before the operation runs stores nothing under its key (on the caller's own checkout: an
    unknown one answers `not_found` whatever the body, BCP-CHK-13)."""
    created = call(client, "post", "/checkout-sessions", {**headers, "Idempotency-Key": "criar-1"}, BODY).json()
    kept = list(IdempotencyRecord.objects.values_list("key", flat=True))
    bad = call(client, "put", f"/checkout-sessions/{created['id']}", headers, '{"line_items": "x"}')
    assert bad.status_code == 400
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == kept == ["criar-1"]


@pytest.mark.django_db
def test_malformed_key_is_rejected_naming_the_header(client: Client, headers: dict[str, str]) -> None:
    response = call(client, "post", "/checkout-sessions", {**headers, "Idempotency-Key": "com espaço"}, BODY)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_request"
    assert "Idempotency-Key" in response.json()["content"]


@pytest.mark.django_db
def test_purge_task_deletes_only_expired_records() -> None:
    now = timezone.now()
    for key, expires in (("old", now - timedelta(seconds=1)), ("new", now + timedelta(hours=1))):
        IdempotencyRecord.objects.create(
            principal="p", operation="create_checkout", key=key, fingerprint="f", expires_at=expires
        )
    assert purge_idempotency_records() == 1
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["new"]


@pytest.mark.django_db
def test_expired_key_can_be_reused() -> None:
    IdempotencyRecord.objects.create(
        principal="p",
        operation="create_checkout",
        key="k",
        fingerprint="a",
        state="done",
        response_status=201,
        response_body={"old": True},
        expires_at=timezone.now() - timedelta(seconds=1),
    )
    result = idempotency.run(
        principal="p",
        operation="create_checkout",
        key="k",
        fingerprint="b",
        execute=lambda: OperationResult(201, {"new": True}),
    )
    assert result.body == {"new": True} and not result.replayed


def test_mcp_fingerprint_ignores_the_json_rpc_id_and_member_order() -> None:
    a = idempotency.mcp_fingerprint("complete_checkout", {"id": "chk_1", "checkout": {"a": 1, "b": [1, 2]}})
    b = idempotency.mcp_fingerprint("complete_checkout", {"checkout": {"b": [1, 2], "a": 1}, "id": "chk_1"})
    c = idempotency.mcp_fingerprint("complete_checkout", {"id": "chk_2", "checkout": {"a": 1, "b": [1, 2]}})
    assert a == b != c


def test_key_required_operations_bcp_idem_02() -> None:
    with pytest.raises(ProtocolError) as err:
        idempotency.run(
            principal="p",
            operation="cancel_checkout",
            key=None,
            fingerprint="f",
            execute=lambda: OperationResult(200, {}),
            field_name='meta["idempotency-key"]',
        )
    assert (err.value.code, err.value.http_status, err.value.jsonrpc_code) == ("idempotency_key_required", 400, -32602)
    assert err.value.content == 'meta["idempotency-key"] é obrigatório em cancel_checkout.'


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_duplicates_execute_once_bcp_idem_06() -> None:
    started, release = threading.Event(), threading.Event()
    executions: list[int] = []
    outcomes: list[Any] = []

    def slow() -> OperationResult:
        executions.append(1)
        started.set()
        release.wait(5)
        return OperationResult(200, {"ran": True})

    def first() -> None:
        try:
            outcomes.append(
                idempotency.run(principal="p", operation="complete_checkout", key="k", fingerprint="f", execute=slow)
            )
        finally:
            connection.close()

    thread = threading.Thread(target=first)
    thread.start()
    assert started.wait(5)
    with pytest.raises(ProtocolError) as err:
        idempotency.run(principal="p", operation="complete_checkout", key="k", fingerprint="f", execute=slow)
    release.set()
    thread.join(5)
    replay = idempotency.run(principal="p", operation="complete_checkout", key="k", fingerprint="f", execute=slow)
    assert err.value.code == "idempotency_in_progress"
    assert len(executions) == 1
    assert outcomes[0].body == replay.body == {"ran": True}
    assert replay.replayed is True


@pytest.mark.django_db
def test_key_store_down_fails_closed_with_503_bcp_idem_07(client: Client, headers: dict[str, str]) -> None:
    from django.db import OperationalError

    def store_down(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if "bcp_app_idempotencyrecord" in sql:
            raise OperationalError("connection refused")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(store_down):
        response = call(client, "post", "/checkout-sessions", headers, BODY)
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["code"] == "unavailable"
    assert Checkout.objects.count() == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_card_complete_commits_its_stored_answer_with_the_order_bcp_idem_04(
    client: Client, fake_platform: FakePlatform
) -> None:
    """Issue 34: the stored response is written in the transaction that places the order, so the moment the order
    is committed (its outbox task runs right after that commit) a duplicate already gets the stored answer and a
    crash there loses nothing. Before, the key stayed `in_progress` until a statement after the commit, and a
    process dying between the two left a placed order whose retry met `complete_in_progress`/`completed` instead
    of its answer (BCP-IDEM-04)."""
    catalog()
    platform = platform_create(name="Agente", profile_url=fake_platform.publish(handlers=fake_platform.with_card()))
    headers = agent(fake_platform.url("/perfil.json"), Authorization=f"Bearer {platform.api_key}")
    created = call(client, "post", "/checkout-sessions", headers, BODY).json()
    ready = call(client, "put", f"/checkout-sessions/{created['id']}", headers, full_update(created, pix=False)).json()
    body = {**full_update(ready, pix=False), "payment": {"instruments": [CARD]}}
    ready = call(client, "put", f"/checkout-sessions/{created['id']}", headers, body).json()
    assert ready["status"] == "ready_for_complete", ready.get("messages")
    key = "k-card-complete-joined"
    seen_at_commit: list[tuple[str, str | None]] = []

    def at_commit(**_: Any) -> None:  # the placed order's outbox task, run eagerly on the order's commit
        if not seen_at_commit:
            seen_at_commit.extend(IdempotencyRecord.objects.filter(key=key).values_list("state", "response_text"))

    task_prerun.connect(at_commit, weak=False)
    try:
        done = call(
            client,
            "post",
            f"/checkout-sessions/{created['id']}/complete",
            {**headers, "Idempotency-Key": key},
            {"payment": {"instruments": [CARD]}},
        )
    finally:
        task_prerun.disconnect(at_commit)
    assert done.json()["status"] == "completed"
    assert seen_at_commit == [(IdempotencyRecord.State.DONE, done.content.decode())]
    replay = call(
        client,
        "post",
        f"/checkout-sessions/{created['id']}/complete",
        {**headers, "Idempotency-Key": key},
        {"payment": {"instruments": [CARD]}},
    )
    assert replay.content == done.content
    assert Order.objects.filter(checkout_id=created["id"]).count() == 1
