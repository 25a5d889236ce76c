"""Tables of the sandbox PSP: its own view of charges, received Pix and devoluções (Bacen shapes)."""

from __future__ import annotations

from django.db import models


class SandboxCob(models.Model):
    class Status(models.TextChoices):
        ATIVA = "ATIVA"
        CONCLUIDA = "CONCLUIDA"
        REMOVIDA_PELO_USUARIO_RECEBEDOR = "REMOVIDA_PELO_USUARIO_RECEBEDOR"
        REMOVIDA_PELO_PSP = "REMOVIDA_PELO_PSP"

    txid = models.CharField(max_length=35, unique=True)
    revisao = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=40, choices=Status.choices, default=Status.ATIVA)
    amount = models.BigIntegerField()
    criacao = models.DateTimeField()
    expiracao = models.PositiveIntegerField()
    chave = models.CharField(max_length=77)
    location = models.CharField(max_length=77)
    br_code = models.TextField()
    solicitacao_pagador = models.CharField(max_length=140, blank=True, default="")
    devedor = models.JSONField(default=dict, blank=True)
    info_adicionais = models.JSONField(default=list, blank=True)
    # Pix com vencimento (`cobv`): due date, days payable after it, and valor.multa/juros/desconto as sent.
    kind = models.CharField(max_length=4, default="cob")
    vencimento = models.DateField(null=True, blank=True)
    validade_apos_vencimento = models.PositiveIntegerField(default=0)
    regras = models.JSONField(default=dict, blank=True)

    class Meta:
        app_label = "payments"

    def __str__(self) -> str:
        return f"sandbox {self.kind} {self.txid} {self.status}"


class SandboxPix(models.Model):
    end_to_end_id = models.CharField(max_length=32, unique=True)
    cob = models.ForeignKey(SandboxCob, null=True, blank=True, on_delete=models.CASCADE, related_name="pix")
    txid = models.CharField(max_length=35, blank=True, default="")
    amount = models.BigIntegerField()
    horario = models.DateTimeField()
    info_pagador = models.CharField(max_length=140, blank=True, default="")
    # refund_first fault: the plain payment notice is held back until a refund notice went out.
    hold_notice = models.BooleanField(default=False)

    class Meta:
        app_label = "payments"

    def __str__(self) -> str:
        return f"sandbox pix {self.end_to_end_id}"


class SandboxRefund(models.Model):
    class Status(models.TextChoices):
        EM_PROCESSAMENTO = "EM_PROCESSAMENTO"
        DEVOLVIDO = "DEVOLVIDO"
        NAO_REALIZADO = "NAO_REALIZADO"

    pix = models.ForeignKey(SandboxPix, on_delete=models.CASCADE, related_name="refunds")
    refund_id = models.CharField(max_length=35)
    rtr_id = models.CharField(max_length=32, unique=True)
    amount = models.BigIntegerField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.EM_PROCESSAMENTO)
    natureza = models.CharField(max_length=20, default="ORIGINAL")
    descricao = models.CharField(max_length=140, blank=True, default="")
    solicitacao = models.DateTimeField()
    liquidacao = models.DateTimeField(null=True, blank=True)
    motivo = models.CharField(max_length=140, blank=True, default="")

    class Meta:
        app_label = "payments"
        constraints = [models.UniqueConstraint(fields=["pix", "refund_id"], name="payments_sandboxrefund_unique")]

    def __str__(self) -> str:
        return f"sandbox devolucao {self.refund_id} {self.status}"


class SandboxRecord(models.Model):
    """A Pix Automático resource at the sandbox PSP, kept as the Bacen JSON it answers with.

    `kind` rec (`RecCompleta`, key idRec), solicrec (`SolicRecCompleta`, key idSolicRec) or cobr (`CobRCompleta`,
    key txid): the sandbox only stores, edits and returns these bodies, like the fake Bacen of the tests."""

    kind = models.CharField(max_length=8)
    key = models.CharField(max_length=35)
    body = models.JSONField()

    class Meta:
        app_label = "payments"
        constraints = [models.UniqueConstraint(fields=["kind", "key"], name="payments_sandboxrecord_unique")]

    def __str__(self) -> str:
        return f"sandbox {self.kind} {self.key}"
