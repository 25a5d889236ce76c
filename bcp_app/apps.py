from django.apps import AppConfig


class BcpAppConfig(AppConfig):
    name = "bcp_app"
    verbose_name = "BCP"
