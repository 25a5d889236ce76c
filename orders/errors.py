"""Errors raised by orders services: always name the offending field, never leave a partial change."""

from __future__ import annotations


class OrderError(ValueError):
    """A business rule refused the request. `field` names the input at fault (e.g. `lines[0].quantity`)."""

    def __init__(self, field: str, message: str, *, code: str = "invalid") -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.code = code


class OrderNotFound(OrderError):
    def __init__(self, field: str = "order_id") -> None:
        super().__init__(field, "order not found", code="not_found")
