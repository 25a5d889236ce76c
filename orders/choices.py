"""Choices of the order domain (statuses and kinds), with their pt-BR labels."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class OrderStatus(models.TextChoices):
    PLACED = "placed", _("Pedido recebido")
    PARTIALLY_SHIPPED = "partially_shipped", _("Enviado em parte")
    SHIPPED = "shipped", _("Enviado")
    DELIVERED = "delivered", _("Entregue")
    CANCELED = "canceled", _("Cancelado")
    RETURNED = "returned", _("Devolvido")


# An order with nothing left in the store: a disputed Pix (MED) holds no shipment of it.
ALL_SENT_STATUSES = (OrderStatus.SHIPPED, OrderStatus.DELIVERED, OrderStatus.RETURNED)


class PaymentStatus(models.TextChoices):
    PENDING = "pending", _("Aguardando pagamento")
    PAID = "paid", _("Pago")
    PARTIALLY_REFUNDED = "partially_refunded", _("Reembolsado em parte")
    REFUNDED = "refunded", _("Reembolsado")


class PaymentDispute(models.TextChoices):
    """A MED dispute of the order's Pix (payments/med): shipment is held while it is `open`."""

    NONE = "", _("Sem disputa")
    OPEN = "open", _("Pix contestado (MED): envio retido")
    CONTESTED = "contested", _("Contestação respondida: envio liberado")
    RETURNED = "returned", _("Valor devolvido ao pagador (MED)")
    KEPT = "kept", _("Disputa encerrada: pagamento mantido")


class FulfillmentMethod(models.TextChoices):
    SHIPPING = "shipping", _("Entrega")
    PICKUP = "pickup", _("Retirada")
    DIGITAL = "digital", _("Digital")


class DeliveryDaysFrom(models.TextChoices):
    """What an expectation's business days count from: the carriers' days count from posting."""

    SHIPPING = "shipping", _("A partir do envio")
    PAYMENT = "payment", _("A partir do pagamento")


class PaymentType(models.TextChoices):
    PIX = "pix", _("Pix")
    CARD = "card", _("Cartão")
    MANUAL = "manual", _("Pago fora da loja")
    BOLETO = "boleto", _("Boleto")


class LineStatus(models.TextChoices):
    # Buyer words (BCP §7 line statuses); for pickup orders see orders.labels.line_status_label.
    PROCESSING = "processing", _("Em preparação")
    PARTIAL = "partial", _("Parcialmente enviado")
    FULFILLED = "fulfilled", _("Enviado")
    REMOVED = "removed", _("Removido")


class FulfillmentEventType(models.TextChoices):
    PROCESSING = "processing", _("Em preparação")
    SHIPPED = "shipped", _("Enviado")
    IN_TRANSIT = "in_transit", _("Em trânsito")
    OUT_FOR_DELIVERY = "out_for_delivery", _("Saiu para entrega")
    DELIVERED = "delivered", _("Entregue")
    FAILED_ATTEMPT = "failed_attempt", _("Tentativa de entrega sem sucesso")
    CANCELED = "canceled", _("Envio cancelado")
    UNDELIVERABLE = "undeliverable", _("Não foi possível entregar")
    RETURNED_TO_SENDER = "returned_to_sender", _("Devolvido ao remetente")
    READY_FOR_PICKUP = "ready_for_pickup", _("Pronto para retirada")
    TRACKING_CORRECTED = "tracking_corrected", _("Rastreio corrigido")


class AdjustmentType(models.TextChoices):
    REFUND = "refund", _("Reembolso")
    RETURN = "return", _("Devolução")
    CREDIT = "credit", _("Crédito")
    PRICE_ADJUSTMENT = "price_adjustment", _("Ajuste de preço")
    DISPUTE = "dispute", _("Contestação")
    CANCELLATION = "cancellation", _("Cancelamento")


class AdjustmentStatus(models.TextChoices):
    PENDING = "pending", _("Pendente")
    COMPLETED = "completed", _("Concluído")
    FAILED = "failed", _("Falhou")


class ReturnCondition(models.TextChoices):
    """The state returned items came back in (a return adjustment's `condition`)."""

    NEW = "novo", _("Novo, na embalagem")
    USED = "usado", _("Usado, em bom estado")
    DAMAGED = "avariado", _("Avariado")


class EmailKind(models.TextChoices):
    PLACED = "placed", _("Pedido recebido")
    PAYMENT_CONFIRMED = "payment_confirmed", _("Pagamento confirmado")
    SHIPPED = "shipped", _("Pedido enviado")
    READY_FOR_PICKUP = "ready_for_pickup", _("Pronto para retirada")
    DELIVERED = "delivered", _("Pedido entregue")
    REFUNDED = "refunded", _("Reembolso feito")
    CANCELED = "canceled", _("Pedido cancelado")
    INVOICE = "invoice", _("Nota fiscal emitida")
    ORDER_LINK = "order_link", _("Link do pedido")  # asked on /pedido: only the link, not the whole order again
    RETURN_UPDATE = "return_update", _("Resposta sobre a devolução")  # approved or rejected (issue 35)
    # The carrier's steps of a shipment the buyer is told of (once per shipment each): orders/services/fulfillment.py
    OUT_FOR_DELIVERY = "out_for_delivery", _("Saiu para entrega")
    DELIVERY_FAILED = "delivery_failed", _("Entrega não realizada")
    # The buyer corrected the delivery address on the order page: the confirmation, once per correction.
    ADDRESS_UPDATED = "address_updated", _("Endereço de entrega alterado")


class ReturnStatus(models.TextChoices):
    """A buyer's or agent's return request (orders.services.returns): staff approve, receive, refund. The refund
    step says what the money did: `refund_pending` until the refund adjustment completes (`refunded`) or fails
    (`refund_failed`: staff refund again)."""

    REQUESTED = "requested", _("Solicitada")
    APPROVED = "approved", _("Aprovada")
    REJECTED = "rejected", _("Recusada")
    RECEIVED = "received", _("Recebida")
    REFUND_PENDING = "refund_pending", _("Reembolso pendente")
    REFUNDED = "refunded", _("Reembolsada")
    REFUND_FAILED = "refund_failed", _("Reembolso falhou")


class ReturnReason(models.TextChoices):
    """Why the buyer returns (the wire values of the order_actions extension)."""

    CHANGED_MIND = "changed_mind", _("Desistência (arrependimento, CDC art. 49)")
    DEFECTIVE = "defective", _("Produto com defeito")
    DAMAGED = "damaged", _("Chegou avariado")
    WRONG_ITEM = "wrong_item", _("Produto diferente do pedido")
    OTHER = "other", _("Outro motivo")


class ReturnRequester(models.TextChoices):
    """Who asked for a return (orders.services.returns.BUYER / PLATFORM): the order page or an agent's platform."""

    BUYER = "buyer", _("Comprador")
    PLATFORM = "platform", _("Plataforma")
