"""Orders with a cancellation stored their BCP body with the expectations as placed (cancelled units still
promised). An empty `bcp_json` is rendered from the rows on every read (orders.selectors.order_bcp_payload), with
what is left to fulfil, until the order's next change stores it again."""

from typing import Any

from django.db import migrations


def forget_stale_bodies(apps: Any, schema_editor: Any) -> None:
    Order = apps.get_model("orders", "Order")
    Order.objects.filter(adjustments__type="cancellation").exclude(bcp_json="").update(bcp_json="")


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0024_capitalized_choice_labels"),
    ]

    operations = [
        migrations.RunPython(forget_stale_bodies, migrations.RunPython.noop),
    ]
