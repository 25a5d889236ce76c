from django.apps import AppConfig


class BcpAppConfig(AppConfig):
    name = "bcp_app"
    verbose_name = "BCP"

    def ready(self) -> None:
        from django.db import transaction
        from django.db.models.signals import post_delete, post_save

        from bcp_app import checks  # noqa: F401  (registers the deployment checks)
        from bcp_app.models import Platform
        from bcp_app.service.a2a_tasks import on_charge_settled
        from bcp_app.service.platforms import platform_cache_drop
        from bcp_app.service.webhooks import on_order_changed
        from orders.signals import order_changed
        from payments.signals import charge_settled

        order_changed.connect(on_order_changed, dispatch_uid="bcp_app.order_webhooks")
        # A2A tasks of Pix completes end when the charge settles (issue 35); after the shop's receiver (INSTALLED_APPS
        # order), which completed the checkout in the same transaction.
        charge_settled.connect(on_charge_settled, dispatch_uid="bcp_app.a2a_tasks")

        def drop_cached_platform(sender: type, instance: Platform, **_: object) -> None:
            # Now and after commit (a concurrent request may re-cache the old row before the commit).
            platform_cache_drop(instance)
            transaction.on_commit(lambda: platform_cache_drop(instance))

        for name, signal in (("save", post_save), ("delete", post_delete)):
            signal.connect(
                drop_cached_platform, sender=Platform, dispatch_uid=f"bcp_app.platform_cache.{name}", weak=False
            )
