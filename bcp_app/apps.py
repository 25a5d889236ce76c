from django.apps import AppConfig


class BcpAppConfig(AppConfig):
    name = "bcp_app"
    verbose_name = "BCP"

    def ready(self) -> None:
        from bcp_app.webhooks import on_order_changed
        from orders.signals import order_changed

        order_changed.connect(on_order_changed, dispatch_uid="bcp_app.order_webhooks")
