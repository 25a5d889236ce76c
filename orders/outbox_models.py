"""The outbox: side effects that move money or tell someone outside, written in the same transaction as
the change that causes them, processed by a Celery task and re-driven by a beat sweep (ARCHITECTURE.md).

Imported by `orders.models`. One row per side effect, unique by `key`, so a replay never adds a second.
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

# The kind of the row that tells the rest of the shop an order changed (orders.services.outbox; read by
# orders.selectors.order_change_pending too).
ORDER_CHANGED = "order_changed"


class OutboxMessage(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", _("Pendente")
        DONE = "done", _("Concluída")

    kind = models.CharField(_("tipo"), max_length=40)
    key = models.CharField(_("chave"), max_length=120, unique=True)
    payload = models.JSONField(default=dict)
    status = models.CharField(_("situação"), max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.CharField(max_length=500, blank=True, default="")
    # Set while one process runs the side effect (no lock is held meanwhile); a crashed run expires.
    claimed_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "orders"
        verbose_name = _("efeito pendente")
        verbose_name_plural = _("efeitos pendentes")
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["status", "created_at"], name="outbox_pending_idx")]

    def __str__(self) -> str:
        return f"{self.kind} {self.key} ({self.status})"
