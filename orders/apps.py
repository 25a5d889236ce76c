from django.apps import AppConfig
from django.db import connections
from django.db.backends.signals import connection_created

from kernel.text import sqlite_unaccent


class OrdersConfig(AppConfig):
    name = "orders"
    verbose_name = "Pedidos"

    def ready(self) -> None:
        # The staff's name search uses `__unaccent` on any database (`selectors._name_matches`).
        connection_created.connect(sqlite_unaccent)
        for connection in connections.all(initialized_only=True):  # opened before the apps were ready
            if connection.connection is not None:
                sqlite_unaccent(None, connection)
