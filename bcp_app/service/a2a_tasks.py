"""A2A tasks for Pix (issue 35): a Pix complete over A2A opens a Task in `working`; the PSP's settlement ends it.

Flow. `task_open` (called by the A2A transport when a complete answers `complete_in_progress`) stores the task
(`A2ATask`, version 1) with the checkout in its status message, and the push URL: the one the platform named
for this task (A2A `taskPushNotificationConfig`), else its registered `Platform.a2a_push_url`. When the charge
settles, `payments.charge_settled` reaches `on_charge_settled` INSIDE the settling transaction, after the shop's
receiver completed the checkout: the task moves `working → completed` with the completed checkout (and its
`order`), its version grows, and the push is written as an outbox row (`WebhookDelivery`, unique
`source_key` per task and state) in that same transaction. After commit the order-webhook task delivers it,
signed exactly like an order webhook (BCP §8 headers, RFC 9421), and the order-webhook sweep retries it;
the body is the A2A `StreamResponse` `{"task": …}`. The change is conditional (only a `working` task moves)
and the row's key is unique, so a replayed settlement changes nothing and pushes nothing twice.

Reads (`task_for_caller`, `task_row`) back the SDK's task store and event stream (transports/a2a/tasks.py):
GetTask and SubscribeToTask answer from Postgres in any process.
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from bcp_app.models import A2ATask, ProfileCacheEntry, WebhookDelivery
from bcp_app.protocol.names import A2A_EXTENSION_URI
from bcp_app.service import negotiation
from bcp_app.service.context import RequestContext
from bcp_app.service.operations.base import checkout_result
from bcp_app.service.platforms import platform_get
from kernel.tasks import enqueue_on_commit
from shop.checkout import services

CHECKOUT_KEY = "a2a.bcp.checkout"
TERMINAL = frozenset({A2ATask.State.COMPLETED, A2ATask.State.FAILED, A2ATask.State.CANCELED})
PUSH_EVENT = "a2a_task"
_TEXTS = {
    A2ATask.State.WORKING: {
        "pt-br": "Aguardando o pagamento do Pix. Avisaremos quando ele for confirmado.",
        "en": "Waiting for the Pix payment. You will be notified when it is confirmed.",
    },
    A2ATask.State.COMPLETED: {
        "pt-br": "Pagamento confirmado. Pedido confirmado.",
        "en": "Payment confirmed. Order confirmed.",
    },
    A2ATask.State.CANCELED: {
        "pt-br": "A compra foi cancelada: o Pix não foi pago a tempo ou o checkout foi cancelado.",
        "en": "The purchase was canceled: the Pix was not paid in time or the checkout was canceled.",
    },
}
# The checkout's terminal status → the task's.
_ENDS = {"completed": A2ATask.State.COMPLETED, "canceled": A2ATask.State.CANCELED}
RECONCILE_AFTER = timedelta(minutes=1)  # a settlement ends its task at once; the sweep looks at older ones


def _now() -> str:
    return timezone.now().isoformat(timespec="milliseconds").replace("+00:00", "Z")


def task_dict(*, task_id: str, context_id: str, state: str, checkout: dict[str, Any], language: str) -> dict[str, Any]:
    """The Task (A2A 1.0 ProtoJSON) with the checkout in its status message (BCP seed 004: BCP types travel in a
    data part, here the status message's, the extension declared)."""
    lang = "en" if language == "en" else "pt-br"
    text = _TEXTS[A2ATask.State(state)][lang]
    order = checkout.get("order")
    if isinstance(order, dict) and order.get("permalink_url"):
        text += (" Order page: " if lang == "en" else " Acompanhe o pedido: ") + str(order["permalink_url"])
    message = {
        "contextId": context_id,
        "messageId": str(uuid.uuid4()),
        "parts": [{"text": text}, {"data": {CHECKOUT_KEY: checkout}, "mediaType": "application/json"}],
        "role": "ROLE_AGENT",
        "extensions": [A2A_EXTENSION_URI],
        "taskId": task_id,
    }
    return {"id": task_id, "contextId": context_id, "status": {"state": state, "message": message, "timestamp": _now()}}


def task_open(
    ctx: RequestContext, *, context_id: str, checkout: dict[str, Any], push_url: str = "", push_token: str = ""
) -> dict[str, Any]:
    """The `working` task of a Pix complete that waits for the PSP (its checkout `complete_in_progress`)."""
    task_id = str(uuid.uuid4())
    task = task_dict(
        task_id=task_id, context_id=context_id, state=A2ATask.State.WORKING, checkout=checkout, language=ctx.language
    )
    A2ATask.objects.create(
        task_id=task_id,
        context_id=context_id,
        checkout_id=str(checkout["id"]),
        principal=ctx.principal,
        platform_id=ctx.platform_id or "",
        task_json=json.dumps(task),
        profile_url=ctx.profile_url,
        capabilities=dict(ctx.capabilities),
        language=ctx.language,
        push_url=push_url,
        push_token=push_token,
    )
    return task


def task_for_caller(task_id: str, principal: str) -> A2ATask | None:
    """The task when it is this caller's (another caller's is as unknown as a missing one)."""
    return A2ATask.objects.filter(task_id=task_id, principal=principal).first()


def tasks_for_caller(principal: str, *, context_id: str = "", limit: int = 50) -> list[A2ATask]:
    rows = A2ATask.objects.filter(principal=principal)
    if context_id:
        rows = rows.filter(context_id=context_id)
    return list(rows.order_by("-created_at", "-id")[:limit])


def task_row(task_id: str) -> tuple[int, str, str] | None:
    """(version, state, task_json) of a task, for a resubscriber tailing it."""
    found = A2ATask.objects.filter(task_id=task_id).values_list("version", "state", "task_json").first()
    return (int(found[0]), str(found[1]), str(found[2])) if found else None


def task_set_push(task_id: str, principal: str, *, url: str, token: str = "") -> A2ATask | None:
    """Set (or, with url "", clear) the push URL of the caller's task (A2A CreateTaskPushNotificationConfig)."""
    with transaction.atomic():
        row = A2ATask.objects.select_for_update().filter(task_id=task_id, principal=principal).first()
        if row is None:
            return None
        row.push_url, row.push_token = url, token
        row.save(update_fields=["push_url", "push_token", "updated_at"])
    return row


def _profile(url: str) -> dict[str, Any]:
    # Inside the settling transaction: what is cached (memory/Redis, else the stored cache row), never a fetch.
    cached = negotiation.cached_platform_profile(url)
    if isinstance(cached, dict):
        return cached
    body = ProfileCacheEntry.objects.filter(url_hash=negotiation.url_hash(url)).values_list("body", flat=True).first()
    return body if isinstance(body, dict) else {}


def _push(row: A2ATask, task: dict[str, Any]) -> None:
    """The outbox row of this task state's push notification (at most one per task and state)."""
    url = row.push_url
    if not url and row.platform_id:
        platform = platform_get(row.platform_id)
        url = platform.a2a_push_url if platform is not None and platform.active else ""
    if not url:
        return
    delivery, created = WebhookDelivery.objects.get_or_create(
        source_key=f"a2a:{row.task_id}:{task['status']['state']}",
        defaults={
            "order_id": row.checkout_id,
            "platform_id": row.platform_id,
            "url": url,
            "event": PUSH_EVENT,
            "body": json.dumps({"task": task}),
            "next_attempt_at": timezone.now(),
            # A2A: the token the platform gave with this task's URL comes back in this header
            "extra_headers": {"X-A2A-Notification-Token": row.push_token} if row.push_token and row.push_url else {},
        },
    )
    if created:
        enqueue_on_commit("bcp_app.tasks.deliver_order_webhook", delivery.pk)


def task_settle(*, checkout_id: str) -> int:
    """Move the `working` tasks of a checkout the settlement completed to `completed` (+ their pushes), in the
    caller's transaction (the settlement's); returns how many moved (0 for a replay). A checkout with no task,
    nearly every one, costs the settlement one query."""
    waiting = A2ATask.objects.filter(checkout_id=checkout_id, state=A2ATask.State.WORKING)
    if not waiting.exists():
        return 0
    try:
        result = services.checkout_get(checkout_id=checkout_id)
    except services.CheckoutNotFound:
        return 0
    if result.checkout.status != "completed":  # the shop refused the payment (canceled checkout): the sweep ends it
        return 0
    with transaction.atomic():
        return _end(list(waiting.select_for_update().order_by("pk")), result)


def _end(rows: list[A2ATask], result: Any) -> int:
    """End `working` tasks (locked) with their checkout's terminal status; each gets its push row."""
    state = _ENDS.get(str(result.checkout.status))
    if state is None:
        return 0
    for row in rows:
        ctx = RequestContext(
            transport="a2a",
            profile_url=row.profile_url,
            profile=_profile(row.profile_url),
            capabilities=dict(row.capabilities),
            language=row.language,
        )
        checkout = checkout_result(ctx, result).body
        task = task_dict(
            task_id=row.task_id, context_id=row.context_id, state=state, checkout=checkout, language=row.language
        )
        row.state = state
        row.version += 1
        row.task_json = json.dumps(task)
        row.save(update_fields=["state", "version", "task_json", "updated_at"])
        _push(row, task)
    return len(rows)


def tasks_reconcile(*, limit: int = 100) -> int:
    """Beat sweep: end the `working` tasks whose checkout ended without them (the Pix expired and the checkout
    was canceled, the shop refused a payment, or a settlement that never reached this receiver), so no task and
    no resubscriber waits forever. The checkout is read (and expired if due) before the tasks are locked: the
    settlement locks the checkout first, then the tasks, and this keeps to that order."""
    cutoff = timezone.now() - RECONCILE_AFTER
    checkout_ids = list(
        dict.fromkeys(
            A2ATask.objects.filter(state=A2ATask.State.WORKING, updated_at__lte=cutoff)
            .order_by("updated_at")
            .values_list("checkout_id", flat=True)[:limit]
        )
    )
    ended = 0
    for checkout_id in checkout_ids:
        try:
            result = services.checkout_get(checkout_id=checkout_id)
        except services.CheckoutNotFound:
            continue
        if str(result.checkout.status) not in _ENDS:
            continue
        with transaction.atomic():
            rows = list(
                A2ATask.objects.select_for_update()
                .filter(checkout_id=checkout_id, state=A2ATask.State.WORKING)
                .order_by("pk")
            )
            ended += _end(rows, result)
    return ended


def on_charge_settled(sender: Any, *, reference: str, **_: Any) -> None:
    """Receiver of `payments.charge_settled` (connected after the shop's, which completed the checkout); answers
    nothing, so it never refuses a payment."""
    task_settle(checkout_id=reference)
