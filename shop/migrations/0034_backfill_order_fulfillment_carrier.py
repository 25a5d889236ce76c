"""Orders placed before `Order.fulfillment_carrier` existed get the carrier of the option their checkout chose, so
"Registrar envio" keeps starting from "Correios" (and checking its code) for them."""

from django.db import migrations


def backfill(apps, schema_editor):  # type: ignore[no-untyped-def]
    Order = apps.get_model("orders", "Order")
    Checkout = apps.get_model("shop", "Checkout")
    pending = Order.objects.filter(fulfillment_method="shipping", fulfillment_carrier="")
    for order in pending.only("pk", "checkout_id").iterator(chunk_size=500):
        checkout = (
            Checkout.objects.filter(public_id=order.checkout_id)
            .only("selected_option_id", "fulfillment_snapshot")
            .first()
        )
        if checkout is None:
            continue
        carrier = ""
        for method in (checkout.fulfillment_snapshot or {}).get("methods", []):
            for group in method.get("groups", []):
                for option in group.get("options", []):
                    if option.get("id") == checkout.selected_option_id:
                        carrier = str(option.get("carrier") or "")
        if carrier:
            Order.objects.filter(pk=order.pk).update(fulfillment_carrier=carrier[:80])


class Migration(migrations.Migration):
    dependencies = [
        ("shop", "0033_capitalised_choice_labels"),
        ("orders", "0022_order_fulfillment_carrier"),
    ]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
