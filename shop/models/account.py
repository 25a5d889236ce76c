""" "Minha conta" without a password: the single-use sign-in links sent by e-mail (shop/account/)."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from kernel.ids import new_public_id


def new_link_id() -> str:
    return new_public_id("acl", 16)  # 128 bits: the link is also signed, but never guessable


class AccountLoginLink(models.Model):
    """One sign-in link (also the outbox row of its e-mail: `sent_at` once it went out). The link carries the
    signed `public_id`; the row makes it single use (`used_at`) and short-lived (`expires_at`)."""

    public_id = models.CharField(max_length=40, unique=True, default=new_link_id, editable=False)
    email = models.CharField(_("e-mail"), max_length=254, db_index=True)
    created_at = models.DateTimeField(_("criado em"), auto_now_add=True)
    expires_at = models.DateTimeField(_("expira em"))
    sent_at = models.DateTimeField(_("enviado em"), null=True, blank=True)
    used_at = models.DateTimeField(_("usado em"), null=True, blank=True)

    class Meta:
        verbose_name = _("link de acesso à conta")
        verbose_name_plural = _("links de acesso à conta")

    def __str__(self) -> str:
        return self.public_id
