"""Errors the payments services raise for bad input (nothing is changed when they are raised)."""


class PaymentInputError(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
