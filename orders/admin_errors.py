"""Service refusals in the staff's words: orders services speak English to programs (API, agents);
the admin shows the same refusal in Portuguese, on the field it names."""

from __future__ import annotations

import re

from django.utils.translation import gettext as _

from orders.errors import OrderError

_VERBS = {"ship": "enviar", "deliver": "marcar como entregue"}

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"order #(?P<n>\d+) is canceled"), "O pedido #%(n)s está cancelado."),
    (
        re.compile(r"cannot refund (?P<a>R\$ [\d.,]+): only (?P<b>R\$ [\d.,]+) of the paid amount is refundable"),
        "Não é possível reembolsar %(a)s: só %(b)s do valor pago pode ser reembolsado.",
    ),
    (re.compile(r"must be an integer number of centavos > 0"), "Informe um valor maior que zero."),
    (
        re.compile(r"cannot (?P<verb>ship|deliver|mark as \w+) (?P<q>\d+) of \S+ \((?P<sku>[^)]+)\): only (?P<m>\d+)"),
        "Não é possível %(verb)s %(q)s unidade(s) de %(sku)s: no máximo %(m)s.",
    ),
    (re.compile(r"nothing left to mark as \w+ on order #(?P<n>\d+)"), "Não há itens para isso no pedido #%(n)s."),
    (re.compile(r"a shipment needs a tracking code"), "Informe o código de rastreio."),
    (re.compile(r"use letters, digits and dashes only"), "Use só letras, números e hífens (ex.: BR123456785BR)."),
    (re.compile(r"not a valid Correios code"), "Código dos Correios inválido: confira as letras e os 9 números."),
    (re.compile(r"this is already the shipment's code"), "Este já é o código do envio."),
    (re.compile(r"order #(?P<n>\d+) has no payment to refund"), "O pedido #%(n)s não tem pagamento a reembolsar."),
    (re.compile(r"refund is already (?P<s>\w+)"), "Este reembolso já foi finalizado."),
    (re.compile(r"order #(?P<n>\d+) has no buyer e-mail"), "O pedido #%(n)s não tem e-mail do comprador."),
    (
        re.compile(r"everything on order #(?P<n>\d+) has shipped"),
        "Tudo do pedido #%(n)s já foi enviado: registre uma devolução.",
    ),
    (re.compile(r"order #(?P<n>\d+) is not a pickup order"), "O pedido #%(n)s não é de retirada."),
    (re.compile(r"order #(?P<n>\d+) is not paid yet"), "O pedido #%(n)s ainda não foi pago."),
    (re.compile(r"order #(?P<n>\d+) is already ready for pickup"), "O pedido #%(n)s já está pronto para retirada."),
    (re.compile(r"order #(?P<n>\d+) was already picked up"), "O pedido #%(n)s já foi retirado."),
    (re.compile(r"order #(?P<n>\d+) is not ready for pickup yet"), "O pedido #%(n)s ainda não está pronto."),
    (re.compile(r"order #(?P<n>\d+) is already (?P<s>\w+)"), "O pedido #%(n)s já tem o pagamento registrado."),
    (
        re.compile(r"cannot return (?P<q>\d+) of \S+: only (?P<m>\d+) shipped"),
        "Não é possível devolver %(q)s: só %(m)s foram entregues ao comprador.",
    ),
    (re.compile(r"must be between 1 and (?P<m>\d+)"), "Informe de 1 a %(m)s."),
    (re.compile(r"is not in exp_\w+"), "Este item não está na previsão escolhida."),
    (re.compile(r"a split must leave something"), "A divisão precisa deixar algo na previsão original."),
    (
        re.compile(r"only expectations with the same method and destination"),
        "Só é possível juntar previsões com a mesma forma de entrega e o mesmo destino.",
    ),
    (re.compile(r"name at least two different expectations"), "Marque pelo menos duas previsões."),
    (re.compile(r"must have at most (?P<m>\d+) characters"), "Use no máximo %(m)s caracteres."),
    (re.compile(r"is required"), "Campo obrigatório."),
    (re.compile(r"unknown"), "Item não encontrado neste pedido."),
]


def staff_message(error: OrderError) -> str:
    for pattern, text in _PATTERNS:
        match = pattern.search(error.message)
        if match:
            values = dict(match.groupdict())
            if "verb" in values:
                values["verb"] = _VERBS.get(values["verb"], values["verb"])
            return _(text) % values
    return _("Não foi possível concluir: %(reason)s") % {"reason": error.message}
