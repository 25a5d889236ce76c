"""Create the staff groups a small shop starts with, so nobody needs superuser to work the orders.

Idempotent: a group that exists keeps every permission it has and gains the ones listed here that it lacks (the
merchant may have widened it); run it again after an upgrade. A user is put in a group in admin → Usuários.
"""

from django.contrib.auth.models import Group, Permission
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

# group → "app_label.codename" it holds. Money and fiscal steps sit only where named:
# refund, cancel, returns → orders.refund_order; NF-e issue/re-issue, its carta de correção and NF-e de devolução
# → fiscal.issue_fiscaldocument;
# the MED answer → payments.change_pixinfraction; a boleto refund's transfer → payments.change_boletorefund;
# shipping, labels and deliveries → orders.ship_order; cancelling a subscription → shop.change_subscription;
# the revenue (admin home's sales and chart, the list's money summary, the finance export) → orders.view_revenue.
_VIEW_ORDERS = ["orders.view_order", "orders.view_returnrequest", "fiscal.view_fiscaldocument"]
STAFF_GROUPS: dict[str, list[str]] = {
    # Answers buyers: sees everything of an order, adds notes, re-sends e-mails, fixes the CPF, cancels a
    # subscription the buyer asked to stop. No money out, no NF-e issued by hand.
    "Atendimento": [*_VIEW_ORDERS, "orders.change_order", "shop.view_subscription", "shop.change_subscription"],
    # Packs and ships: registers shipments, deliveries and pickups, buys and cancels labels.
    "Expedição": [*_VIEW_ORDERS, "orders.ship_order", "shop.view_shippinglabel"],
    # Money and NF-e: refunds, cancellations and returns, refunds paid outside the shop, boleto transfers, MED
    # disputes; issues and re-issues an NF-e; sees the revenue.
    "Financeiro": [
        *_VIEW_ORDERS,
        "orders.refund_order",
        "orders.view_revenue",
        "orders.change_order",
        "fiscal.issue_fiscaldocument",
        "fiscal.view_fiscalreturnnote",  # the NF-e de devolução list, the accountant's month beside the sales'
        "payments.view_pixcharge",
        "payments.view_pixpayment",
        "payments.view_pixrefund",
        "payments.view_cardpayment",
        "payments.view_cardrefund",
        "payments.view_boletopayment",
        "payments.view_boletorefund",
        "payments.change_boletorefund",
        "payments.view_pixinfraction",
        "payments.change_pixinfraction",
    ],
}


class Command(BaseCommand):
    help = "Create the staff groups Atendimento, Expedição and Financeiro with their permissions (idempotent)."

    @transaction.atomic
    def handle(self, *args: object, **options: object) -> None:
        for name, dotted in STAFF_GROUPS.items():
            wanted = []
            for item in dotted:
                app_label, codename = item.split(".", 1)
                permission = Permission.objects.filter(content_type__app_label=app_label, codename=codename).first()
                if permission is None:
                    raise CommandError(f"Permission {item} not found: run `manage.py migrate` first.")
                wanted.append(permission)
            group, created = Group.objects.get_or_create(name=name)
            group.permissions.add(*wanted)
            self.stdout.write(f"{name}: {'created' if created else 'updated'} ({len(wanted)} permissions)")
