from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class FiscalConfig(AppConfig):
    name = "fiscal"
    verbose_name = _("Notas fiscais")
    default_auto_field = "django.db.models.BigAutoField"
