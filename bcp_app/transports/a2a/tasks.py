"""The a2a-sdk's task interfaces over our Postgres tasks (bcp_app/service/a2a_tasks.py), so any process answers.

- `BcpTaskStore` (the SDK's `VersionedTaskStore`): GetTask / ListTasks read `A2ATask` rows scoped to the
  caller (`ServerCallContext.state["bcp_context"].principal`, resolved by the request handler first). Tasks
  change only through the settlement, so a write through the SDK is refused for ours; the SDK's own
  bookkeeping of message-only replies (ids we never issued) is not kept.
- `BcpPushConfigStore` (the SDK's `PushNotificationConfigStore`): one push config per task, the task row's
  URL and token (Create/Get/List/DeleteTaskPushNotificationConfig). Delivery is not the SDK sender's: pushes
  go through the order-webhook outbox (signed, retried; see a2a_tasks).
- `BcpTaskEventStream` (the SDK's `TaskEventStream`): SubscribeToTask tails a task from another process by
  polling its row's version (the SDK serves the snapshot first, then these events, and stops at a terminal
  state), like the SDK's own `DatabaseTaskEventStream` does on its table.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from typing import Any

from a2a.server.cluster.event_stream import TaskEventStream, VersionedEvent
from a2a.server.cluster.task_store import StoredTask, VersionedTaskStore
from a2a.server.cluster.version import TaskVersion
from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event
from a2a.server.tasks.push_notification_config_store import PushNotificationConfigStore
from a2a.types import ListTasksRequest, ListTasksResponse, Task, TaskPushNotificationConfig, TaskStatusUpdateEvent
from a2a.utils.errors import UnsupportedOperationError
from django.db import close_old_connections
from google.protobuf.json_format import ParseDict

from bcp_app.service import a2a_tasks
from kernel import threads

POLL_SECONDS = 0.5
STATE_TASK = "bcp_task"  # the stored task dict GetTask read, rendered verbatim by the dispatcher
# Set while SendMessage runs: the task id the SDK looks up and records then is one it made up for a direct reply
# (the handler takes a message's own task id off first), never one of ours, so the store answers without a query.
STATE_DIRECT = "bcp_direct_reply"


def _principal(context: ServerCallContext) -> str | None:
    bcp_context = context.state.get("bcp_context")
    return getattr(bcp_context, "principal", None)


def _db(function: Any, *args: Any, **kwargs: Any) -> Any:
    close_old_connections()
    try:
        return function(*args, **kwargs)
    finally:
        close_old_connections()


async def db_call(function: Any, *args: Any, **kwargs: Any) -> Any:
    """`function` (ORM) in a worker thread, its connection closed after as a request's would be."""
    return await threads.in_thread(_db, function, *args, **kwargs)


def task_proto(task: dict[str, Any]) -> Task:
    return ParseDict(task, Task())


class BcpTaskStore(VersionedTaskStore):
    async def save(
        self,
        task: Task,
        *,
        event: Event | None,
        prev: Task | None,
        prev_version: TaskVersion,
        context: ServerCallContext,
    ) -> TaskVersion:
        if context.state.get(STATE_DIRECT):
            return TaskVersion.MISSING
        if await db_call(a2a_tasks.task_row, task.id) is not None:
            raise UnsupportedOperationError(message="Esta tarefa muda somente quando o pagamento é liquidado.")
        return TaskVersion.MISSING  # the SDK's record of a direct Message reply: nothing to keep

    async def get(self, task_id: str, context: ServerCallContext) -> StoredTask | None:
        principal = _principal(context)
        if principal is None or context.state.get(STATE_DIRECT):
            return None
        row = await db_call(a2a_tasks.task_for_caller, task_id, principal)
        if row is None:
            return None
        task = json.loads(row.task_json)
        context.state[STATE_TASK] = task
        return StoredTask(task_proto(task), TaskVersion(row.version))

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        principal = _principal(context)
        if principal is None:
            return ListTasksResponse()
        limit = params.page_size if 0 < params.page_size <= 100 else 50
        rows = await db_call(a2a_tasks.tasks_for_caller, principal, context_id=params.context_id, limit=limit)
        tasks = [task_proto(json.loads(row.task_json)) for row in rows]
        return ListTasksResponse(tasks=tasks, page_size=limit, total_size=len(tasks))

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        raise UnsupportedOperationError(message="Tarefas não são apagadas.")


class BcpPushConfigStore(PushNotificationConfigStore):
    """One push configuration per task: the URL (and token) kept on its row."""

    async def set_info(
        self, task_id: str, notification_config: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig | None:
        principal = _principal(context)
        if principal is None:
            return None
        row = await db_call(
            a2a_tasks.task_set_push, task_id, principal, url=notification_config.url, token=notification_config.token
        )
        return _config(row) if row is not None else None

    async def get_info(self, task_id: str, context: ServerCallContext) -> list[TaskPushNotificationConfig]:
        principal = _principal(context)
        row = await db_call(a2a_tasks.task_for_caller, task_id, principal) if principal else None
        return [_config(row)] if row is not None and row.push_url else []

    async def get_info_for_dispatch(self, task_id: str) -> list[TaskPushNotificationConfig]:
        return []  # pushes leave through the outbox (bcp_app/service/a2a_tasks.py), not the SDK's sender

    async def delete_info(self, task_id: str, context: ServerCallContext, config_id: str | None = None) -> None:
        principal = _principal(context)
        if principal is not None:
            await db_call(a2a_tasks.task_set_push, task_id, principal, url="", token="")


def _config(row: Any) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(id=row.task_id, task_id=row.task_id, url=row.push_url, token=row.push_token)


class BcpTaskEventStream(TaskEventStream):
    async def publish(self, task_id: str, event: VersionedEvent) -> None:
        """Nothing to do: our tasks change in Postgres (the settlement), which `subscribe` polls."""

    async def subscribe(self, task_id: str, *, after: TaskVersion) -> AsyncGenerator[VersionedEvent, None]:  # type: ignore[override]
        last = after
        while True:
            found = await db_call(a2a_tasks.task_row, task_id)
            if found is not None:
                version, state, task_json = found
                current = TaskVersion(version)
                if current.is_after(last):
                    task = task_proto(json.loads(task_json))
                    last = current
                    event = TaskStatusUpdateEvent(task_id=task.id, context_id=task.context_id, status=task.status)
                    yield VersionedEvent(event=event, version=current)
                    if state in a2a_tasks.TERMINAL:
                        return
            await asyncio.sleep(POLL_SECONDS)

    async def destroy(self, task_id: str) -> None:
        """Rows stay (the admin shows them)."""
