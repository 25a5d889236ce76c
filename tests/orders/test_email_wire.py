"""The bytes an order e-mail puts on the wire (SMTP backend) are those of Django's `email.policy.SMTP` message:
the wire policy only skips parsing headers that need none (issue 34), it writes nothing differently."""

from __future__ import annotations

import email.policy
import re
from datetime import UTC, datetime
from email.headerregistry import Address

import pytest
from django.core.mail import EmailMultiAlternatives

from orders.emails import OrderEmail

SENDERS = ("Loja Exemplo", "Café & Cia", "Caju, Café", 'Loja "Aspas" Ltda', "Loja, Exemplo", "L" * 90)
SUBJECTS = (
    "Loja Exemplo: Recebemos seu pedido #12",
    "Café: Seu pedido #3 está pronto para retirada",
    "Loja: " + "pedido " * 20,
    "  espaços  no assunto ",
    "=?utf-8?q?x?= literal",
)
RECIPIENTS = ("ana@example.com.br", "Ana Maria <ana@example.com>", "joão@exemplo.com.br", "ana@exémplo.com.br")


def _wire(message: OrderEmail, standard: bool) -> bytes:
    built = (
        EmailMultiAlternatives.message(message, policy=email.policy.SMTP)
        if standard
        else message.message(policy=email.policy.SMTP)
    )
    return re.sub(rb"===============\d+==", b"BOUNDARY", built.as_bytes())  # a random boundary per message


@pytest.mark.parametrize("sender", SENDERS)
def test_the_wire_bytes_are_the_standard_policy_bytes(sender: str) -> None:
    for subject in SUBJECTS:
        for to in RECIPIENTS:
            message = OrderEmail(
                subject=subject,
                body="Olá, Ana!\n" + "linha longa " * 20,
                from_email=str(Address(display_name=sender, addr_spec="pedidos@loja.example.com.br")),
                to=[to],
                headers={"Message-ID": "<1@loja.example.com.br>", "Date": datetime(2026, 12, 6, 3, 0, tzinfo=UTC)},
            )
            message.attach_alternative("<p>Olá, Ana!</p>" + "<p>x</p>" * 40, "text/html")
            assert _wire(message, standard=False) == _wire(message, standard=True), (sender, subject, to)


def test_a_header_with_a_line_break_is_still_refused() -> None:
    message = OrderEmail(subject="Pedido\r\nBcc: x@y.com", body="oi", from_email="a@b.com", to=["c@d.com"])
    with pytest.raises(ValueError):
        message.message(policy=email.policy.SMTP)
