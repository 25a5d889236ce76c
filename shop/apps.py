from django.apps import AppConfig


class ShopConfig(AppConfig):
    name = "shop"
    verbose_name = "Loja"

    def ready(self) -> None:
        # The one business signal: payments tells the shop a charge was paid (ARCHITECTURE.md).
        from shop import checks, receivers  # noqa: F401 (deployment checks; the payment receiver)
