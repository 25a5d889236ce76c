# A return's refund step says what the money did: refund_pending until the refund completes, refund_failed.

from django.db import migrations, models


def returns_say_what_the_refund_did(apps, schema_editor):
    """Returns marked `refunded` when their refund was only requested: pending or failed refunds say so now."""
    ReturnRequest = apps.get_model("orders", "ReturnRequest")
    Adjustment = apps.get_model("orders", "Adjustment")
    for status in ("pending", "failed"):
        ids = Adjustment.objects.filter(type="refund", status=status).values("public_id")
        ReturnRequest.objects.filter(status="refunded", refund_adjustment_id__in=ids).update(
            status="refund_pending" if status == "pending" else "refund_failed"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0030_expectation_handling_days"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="returnrequest",
            name="returnrequest_status_valid",
        ),
        migrations.AlterField(
            model_name="returnrequest",
            name="status",
            field=models.CharField(
                choices=[
                    ("requested", "Solicitada"),
                    ("approved", "Aprovada"),
                    ("rejected", "Recusada"),
                    ("received", "Recebida"),
                    ("refund_pending", "Reembolso pendente"),
                    ("refunded", "Reembolsada"),
                    ("refund_failed", "Reembolso falhou"),
                ],
                default="requested",
                max_length=16,
                verbose_name="situação",
            ),
        ),
        migrations.AddConstraint(
            model_name="returnrequest",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "status__in",
                        [
                            "requested",
                            "approved",
                            "rejected",
                            "received",
                            "refund_pending",
                            "refunded",
                            "refund_failed",
                        ],
                    )
                ),
                name="returnrequest_status_valid",
            ),
        ),
        migrations.RunPython(returns_say_what_the_refund_did, migrations.RunPython.noop),
    ]
