"""Issue 33: order numbers only for placed orders, with no gaps.

The number was drawn before placement (a Postgres sequence, or a reservation row on SQLite) so the Pix charge
could name it, and every checkout that reserved one and was abandoned left a hole (#1002, #1010–#1012). Now a
counter row is incremented in the placement's own transaction. Existing orders keep their numbers: the counter
starts at the highest one given. The sequence and the SQLite reservation table go.
"""

from django.db import migrations, models
from django.db.models import Max

SEQUENCE = "orders_order_number_seq"


def seed_counter(apps, schema_editor):
    Order = apps.get_model("orders", "Order")
    Counter = apps.get_model("orders", "OrderNumberCounter")
    highest = Order.objects.aggregate(m=Max("number"))["m"] or 1000
    Counter.objects.update_or_create(key="orders", defaults={"last": highest})
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP SEQUENCE IF EXISTS {SEQUENCE}")


def restore_sequence(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        Counter = apps.get_model("orders", "OrderNumberCounter")
        row = Counter.objects.filter(key="orders").first()
        start = (row.last if row else 1000) + 1
        schema_editor.execute(f"CREATE SEQUENCE IF NOT EXISTS {SEQUENCE} START WITH {int(start)}")


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0017_merge_0016_email_kind_order_link_0016_med_disputes"),
    ]

    operations = [
        migrations.CreateModel(
            name="OrderNumberCounter",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("key", models.CharField(max_length=32, unique=True)),
                ("last", models.BigIntegerField()),
            ],
        ),
        migrations.RunPython(seed_counter, restore_sequence),
        migrations.DeleteModel(name="OrderNumberReservation"),
    ]
