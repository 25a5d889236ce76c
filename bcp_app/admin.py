"""Admin for BCP platforms (revoke action), order webhook deliveries and idempotency records (read-only)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from bcp_app.models import A2ATask, Ap2Mandate, IdempotencyRecord, Platform, WebhookAttempt, WebhookDelivery
from bcp_app.service.platforms import platform_revoke
from bcp_app.tasks import deliver_order_webhook
from kernel.admin_actions import RefusedActionMessage


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Platform)
class PlatformAdmin(RefusedActionMessage, admin.ModelAdmin):
    list_display = ["name", "public_id", "profile_url", "active", "created_at", "revoked_at"]
    list_filter = ["active"]
    search_fields = ["name", "public_id", "profile_url"]
    readonly_fields = ["public_id", "key_prefix", "active", "revoked_at", "created_at"]
    fields = ["name", "profile_url", "a2a_push_url", "public_id", "key_prefix", "active", "revoked_at", "created_at"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # New platforms need a key shown once: `manage.py bcp_platform add` does that.
        return False

    @admin.action(description=_("Revogar a chave de API das plataformas selecionadas"), permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[Platform]) -> None:
        for platform in queryset:
            platform_revoke(public_id=platform.public_id)
        n = queryset.count()
        revoked = ngettext("%(n)d plataforma revogada.", "%(n)d plataformas revogadas.", n) % {"n": n}
        self.message_user(request, revoked, messages.SUCCESS)


class WebhookAttemptInline(admin.TabularInline):
    model = WebhookAttempt
    extra = 0
    can_delete = False
    readonly_fields = ["number", "attempted_at", "status_code", "error", "duration_ms"]

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(RefusedActionMessage, ReadOnlyAdmin):
    list_display = [
        "webhook_id",
        "order_id",
        "event",
        "platform_id",
        "status",
        "attempts",
        "last_status_code",
        "next_attempt_at",
        "delivered_at",
        "created_at",
    ]
    list_filter = ["status", "event"]
    search_fields = ["order_id", "platform_id", "webhook_id"]
    inlines = [WebhookAttemptInline]
    actions = ["retry_now"]

    def has_retry_permission(self, request: HttpRequest) -> bool:
        # The list is read-only (a delivery changes only by its attempts): retrying needs the change permission.
        return request.user.has_perm("bcp_app.change_webhookdelivery")

    @admin.action(description=_("Tentar entregar de novo agora (mesmo Webhook-Id)"), permissions=["retry"])
    def retry_now(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        # A delivered one was received; a superseded one would show the platform an older order than it has.
        done = (WebhookDelivery.Status.DELIVERED, WebhookDelivery.Status.SUPERSEDED)
        ids = list(queryset.exclude(status__in=done).values_list("pk", flat=True))
        WebhookDelivery.objects.filter(pk__in=ids).update(
            status=WebhookDelivery.Status.PENDING, next_attempt_at=timezone.now()
        )
        for delivery_id in ids:
            transaction.on_commit(lambda pk=delivery_id: deliver_order_webhook.delay(pk))
        n = len(ids)
        retried = ngettext("%(n)d entrega reagendada.", "%(n)d entregas reagendadas.", n) % {"n": n}
        self.message_user(request, retried, messages.SUCCESS)


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(ReadOnlyAdmin):
    list_display = ["operation", "key", "principal", "state", "response_status", "created_at", "expires_at"]
    list_filter = ["operation", "state"]
    search_fields = ["key", "principal"]


@admin.register(Ap2Mandate)
class Ap2MandateAdmin(ReadOnlyAdmin):
    list_display = ["checkout_id", "platform_id", "issuer_kid", "signed_total", "verified_at"]
    search_fields = ["checkout_id", "platform_id"]
    readonly_fields = [
        "checkout_id",
        "platform_id",
        "issuer_kid",
        "audience",
        "signed_total",
        "verified_at",
        "mandate",
        "claims",
    ]
    fields = readonly_fields


@admin.register(A2ATask)
class A2ATaskAdmin(ReadOnlyAdmin):
    """A2A tasks (a Pix complete waiting for the PSP); they change only through the settlement."""

    list_display = ["task_id", "checkout_id", "platform_id", "state", "version", "created_at", "updated_at"]
    list_filter = ["state"]
    search_fields = ["task_id", "checkout_id", "context_id", "platform_id"]
    readonly_fields = [
        "task_id",
        "context_id",
        "checkout_id",
        "platform_id",
        "state",
        "version",
        "push_url",
        "task_json",
        "created_at",
        "updated_at",
    ]
    fields = readonly_fields
