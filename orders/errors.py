"""Errors raised by orders services: always name the offending field, never leave a partial change.

An `OrderError` carries three things: `field` (the input at fault, e.g. `lines[0].quantity`), `code` (which
rule refused, stable for programs) and `message` (what a person reads). The message is a pt-BR source
string (gettext) with named values, rendered in the language active when it is read: the admin shows it
in the staff's language, the DRF API in the client's — one text per rule, no second table to keep in step.
"""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _


class OrderError(ValueError):
    """A business rule refused the request."""

    def __init__(self, field: str, message: str | Promise, *, code: str = "invalid", **params: object) -> None:
        super().__init__(field, message)
        self.field = field
        self.code = code
        self.template = message  # gettext_lazy("… %(name)s …"): translated when read, not when raised
        self.params = params

    @property
    def message(self) -> str:
        text = str(self.template)
        return text % self.params if self.params else text

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class OrderNotFound(OrderError):
    def __init__(self, field: str = "order_id") -> None:
        super().__init__(field, _("Pedido não encontrado."), code="not_found")
