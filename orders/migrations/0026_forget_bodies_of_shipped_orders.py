"""Orders with units shipped, delivered or picked up stored their BCP body with each expectation's description still
the promise made at checkout ("Chega em 3 a 5 dias úteis"), though some of it left. An empty `bcp_json` is
rendered from the rows on every read (orders.selectors.order_bcp_payload), with the expectation saying where its
units are, until the order's next change stores it again."""

from typing import Any

from django.db import migrations


def forget_stale_bodies(apps: Any, schema_editor: Any) -> None:
    Order = apps.get_model("orders", "Order")
    shipped = Order.objects.filter(lines__quantity_fulfilled__gt=0).exclude(bcp_json="").values("pk")
    Order.objects.filter(pk__in=shipped).update(bcp_json="")


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0025_forget_bodies_of_cancelled_orders"),
    ]

    operations = [
        migrations.RunPython(forget_stale_bodies, migrations.RunPython.noop),
    ]
