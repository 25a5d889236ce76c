"""The human order number comes from a PostgreSQL sequence: concurrency safe, no row lock held.

SQLite (embedded `make run` fallback) serialises writers, so services use MAX(number)+1 there.
"""

from django.db import migrations

SEQUENCE = "orders_order_number_seq"


def create_sequence(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"CREATE SEQUENCE IF NOT EXISTS {SEQUENCE} START WITH 1001")


def drop_sequence(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP SEQUENCE IF EXISTS {SEQUENCE}")


class Migration(migrations.Migration):
    dependencies = [("orders", "0001_initial")]

    operations = [migrations.RunPython(create_sequence, drop_sequence)]
