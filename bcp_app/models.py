"""BCP state kept in Postgres: platforms, profile cache, idempotency records, A2A contexts, webhooks.

Nothing protocol-related lives in process memory between requests (ARCHITECTURE.md, Runtime).
"""

from __future__ import annotations

import uuid

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from kernel.ids import new_public_id


def new_platform_id() -> str:
    return new_public_id("plat")


class Platform(models.Model):
    """An agent platform known to the shop. API keys are stored as SHA-256 only (they are high entropy)."""

    public_id = models.CharField(max_length=40, unique=True, default=new_platform_id, editable=False)
    name = models.CharField(_("nome"), max_length=120)
    # The key is "bcp_<prefix>_<secret>"; the prefix finds the row, the hash proves the secret.
    key_prefix = models.CharField(_("prefixo da chave"), max_length=16, unique=True, editable=False)
    key_hash = models.CharField(max_length=64, editable=False)
    profile_url = models.URLField(_("URL do perfil BCP"), max_length=2048, blank=True)
    # Where A2A task push notifications go when a task names no URL of its own (issue 35; signed like order
    # webhooks, retried through their outbox).
    a2a_push_url = models.URLField(_("URL de notificações A2A"), max_length=2048, blank=True)
    active = models.BooleanField(_("ativa"), default=True)
    revoked_at = models.DateTimeField(_("revogada em"), null=True, blank=True)
    created_at = models.DateTimeField(_("criada em"), auto_now_add=True)

    class Meta:
        verbose_name = _("plataforma BCP")
        verbose_name_plural = _("plataformas BCP")
        ordering = ["name"]
        indexes = [models.Index(fields=["profile_url"], name="bcp_platform_profile_idx")]

    def __str__(self) -> str:
        return f"{self.name} ({self.public_id})"


class ProfileCacheEntry(models.Model):
    """Fetched platform profiles (BCP §3 step 2): TTL ≥ 60 s, failures remembered with backoff."""

    url_hash = models.CharField(max_length=64, unique=True)
    url = models.TextField()
    body = models.JSONField(null=True, blank=True)
    fetched_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    # Failure bookkeeping: while failed_until is in the future the last error is answered from cache.
    failure_count = models.PositiveIntegerField(default=0)
    failed_until = models.DateTimeField(null=True, blank=True)
    last_error_code = models.CharField(max_length=40, blank=True)
    last_error = models.CharField(max_length=300, blank=True)

    class Meta:
        verbose_name = _("perfil de plataforma em cache")
        verbose_name_plural = _("perfis de plataforma em cache")
        indexes = [models.Index(fields=["fetched_at"], name="bcp_profile_fetched_idx")]

    def __str__(self) -> str:
        return self.url


class IdempotencyRecord(models.Model):
    """One idempotent request (BCP §12), scoped by principal and operation."""

    class State(models.TextChoices):
        IN_PROGRESS = "in_progress", _("Em andamento")
        DONE = "done", _("Concluída")

    principal = models.CharField(max_length=128)
    operation = models.CharField(max_length=64)
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    state = models.CharField(max_length=16, choices=State.choices, default=State.IN_PROGRESS)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.JSONField(null=True, blank=True)  # rows written before response_text existed
    # The response body exactly as sent (text, not jsonb: jsonb reorders keys), replayed byte for byte.
    response_text = models.TextField(null=True, blank=True)  # noqa: DJ001 (None = not stored as text)
    response_headers = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        verbose_name = _("registro de idempotência")
        verbose_name_plural = _("registros de idempotência")
        constraints = [
            models.UniqueConstraint(fields=["principal", "operation", "key"], name="bcp_idempotency_unique_key"),
            models.CheckConstraint(
                condition=Q(state="in_progress") | Q(response_status__isnull=False),
                name="bcp_idempotency_done_has_status",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.operation} {self.key}"


class A2AContext(models.Model):
    """An A2A conversation (contextId, created by the business) bound to a checkout (BCP §13.3)."""

    context_id = models.CharField(max_length=64, unique=True)
    checkout_id = models.CharField(max_length=64, blank=True, db_index=True)
    platform_id = models.CharField(max_length=40, blank=True)
    # The A2A engineer's task bookkeeping (open task id and its state), kept here to avoid a second table.
    task_id = models.CharField(max_length=64, blank=True)
    task_state = models.CharField(max_length=40, blank=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("contexto A2A")
        verbose_name_plural = _("contextos A2A")

    def __str__(self) -> str:
        return self.context_id


class WebhookDelivery(models.Model):
    """One order webhook (BCP §8); `webhook_id` and the body bytes stay the same across retries."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pendente")
        DELIVERED = "delivered", _("Entregue")
        FAILED = "failed", _("Desistido")
        # A later webhook of the same order to the same URL carries the whole newer order (BCP-WH-02): retrying
        # this one could land after it and show the platform an older order.
        SUPERSEDED = "superseded", _("Substituído por um mais novo")

    webhook_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    order_id = models.CharField(_("pedido"), max_length=64, db_index=True)
    platform_id = models.CharField(_("plataforma"), max_length=40)
    url = models.TextField(_("URL"))
    event = models.CharField(_("evento"), max_length=40)
    # The orders outbox row this delivery comes from: a re-run of that row finds this delivery.
    source_key = models.CharField(max_length=120, null=True, blank=True, unique=True)
    body = models.TextField(_("corpo"))
    # Headers sent beside the signed ones (the A2A push notification token, issue 35); not signed.
    extra_headers = models.JSONField(default=dict, blank=True)
    attempts = models.PositiveIntegerField(_("tentativas"), default=0)
    status = models.CharField(_("situação"), max_length=16, choices=Status.choices, default=Status.PENDING)
    last_status_code = models.PositiveSmallIntegerField(_("último HTTP"), null=True, blank=True)
    last_error = models.CharField(_("último erro"), max_length=300, blank=True)
    next_attempt_at = models.DateTimeField(_("próxima tentativa"), null=True, blank=True)
    delivered_at = models.DateTimeField(_("entregue em"), null=True, blank=True)
    created_at = models.DateTimeField(_("criado em"), auto_now_add=True)

    class Meta:
        verbose_name = _("webhook de pedido")
        verbose_name_plural = _("webhooks de pedido")
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="bcp_webhook_due_idx")]

    def __str__(self) -> str:
        return f"{self.event} {self.order_id} → {self.platform_id}"


class WebhookAttempt(models.Model):
    """Append-only log of every delivery attempt."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveIntegerField()
    attempted_at = models.DateTimeField(auto_now_add=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name = _("tentativa de webhook")
        verbose_name_plural = _("tentativas de webhook")
        ordering = ["delivery", "number"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number"], name="bcp_webhook_attempt_unique_number"),
        ]

    def __str__(self) -> str:
        return f"#{self.number} {self.status_code or self.error}"


class Ap2Mandate(models.Model):
    """A verified AP2 checkout mandate (PIX.md §7.3 step 7): kept verbatim as evidence with the order it paid.

    Append-only: one row per mandate verified at complete (a retried complete with the same mandate is the
    same row). The order is found by `checkout_id` (orders are placed from the checkout, after settlement).
    """

    checkout_id = models.CharField(_("checkout"), max_length=60, db_index=True)
    platform_id = models.CharField(_("plataforma"), max_length=80, blank=True)
    mandate = models.TextField(_("mandato (SD-JWT+KB)"))
    mandate_sha256 = models.CharField(max_length=64)
    issuer_kid = models.CharField(_("chave do emissor (kid)"), max_length=200, blank=True)
    audience = models.CharField(_("audiência"), max_length=500, blank=True)
    signed_total = models.BigIntegerField(_("total assinado (centavos)"), null=True, blank=True)
    claims = models.JSONField(_("declarações divulgadas"), default=dict, blank=True)
    verified_at = models.DateTimeField(_("verificado em"), auto_now_add=True)

    class Meta:
        verbose_name = _("mandato AP2")
        verbose_name_plural = _("mandatos AP2")
        ordering = ["-verified_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["checkout_id", "mandate_sha256"], name="ap2_mandate_once_per_checkout"),
        ]

    def __str__(self) -> str:
        return f"{self.checkout_id} ({self.verified_at:%Y-%m-%d %H:%M})"


class A2ATask(models.Model):
    """An A2A Task (issue 35): a Pix complete that waits for the PSP, `working` until the charge settles.

    `task_json` is the Task as the platform reads it (A2A 1.0 ProtoJSON, rendered verbatim); `version` grows
    with every change (the SDK's `VersionedTaskStore` contract, and what resubscribers tail). Scoped to the
    caller that created it (`principal`, as idempotency is). The checkout is presented again at settlement with
    what was negotiated then (`profile_url`, `capabilities`, `language`).
    """

    class State(models.TextChoices):
        WORKING = "TASK_STATE_WORKING", _("Em andamento")
        COMPLETED = "TASK_STATE_COMPLETED", _("Concluída")
        FAILED = "TASK_STATE_FAILED", _("Falhou")
        CANCELED = "TASK_STATE_CANCELED", _("Cancelada")

    task_id = models.CharField(max_length=64, unique=True)
    context_id = models.CharField(max_length=64)
    checkout_id = models.CharField(_("checkout"), max_length=64, db_index=True)
    principal = models.CharField(max_length=128)
    platform_id = models.CharField(_("plataforma"), max_length=80, blank=True)
    state = models.CharField(_("estado"), max_length=32, choices=State.choices, default=State.WORKING)
    version = models.PositiveIntegerField(default=1)
    task_json = models.TextField()
    profile_url = models.TextField()
    capabilities = models.JSONField(default=dict)
    language = models.CharField(max_length=8, default="pt-br")
    push_url = models.TextField(_("URL de notificação"), blank=True)
    push_token = models.CharField(max_length=256, blank=True)
    created_at = models.DateTimeField(_("criada em"), auto_now_add=True)
    updated_at = models.DateTimeField(_("atualizada em"), auto_now=True)

    class Meta:
        verbose_name = _("tarefa A2A")
        verbose_name_plural = _("tarefas A2A")
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.task_id} ({self.state})"
