from django.apps import AppConfig


class ShopConfig(AppConfig):
    name = "shop"
    verbose_name = "Loja"

    def ready(self) -> None:
        # The one business signal: payments tells the shop a charge was paid (ARCHITECTURE.md).
        from shop import receivers  # noqa: F401
