"""The bytes an order e-mail puts on the wire (SMTP backend) are those of Django's `email.policy.SMTP` message:
the wire policy only skips parsing headers that need none (issue 34), it writes nothing differently; only the
multipart boundary is its own (shorter: the Content-Type header is not folded)."""

from __future__ import annotations

import email.policy
import re
from datetime import UTC, datetime
from email.headerregistry import Address
from email.message import EmailMessage

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
    wire = re.sub(rb";\r\n boundary=", b"; boundary=", built.as_bytes())  # Python's longer boundary is folded
    return re.sub(rb"===============\d+==|=_[0-9a-f]{24}", b"BOUNDARY", wire)  # a random boundary per message


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


def test_the_message_reads_back_with_both_bodies() -> None:
    message = OrderEmail(subject="Pedido #1", body="Olá, Ana!\n", from_email="a@b.com.br", to=["c@d.com.br"])
    message.attach_alternative("<p>Olá, Ana!</p>", "text/html")
    wire = message.message(policy=email.policy.SMTP).as_bytes()
    parsed = email.message_from_bytes(wire, policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    assert [part.get_content() for part in parsed.iter_parts()] == ["Olá, Ana!\r\n", "<p>Olá, Ana!</p>\r\n"]
    assert wire.count(f"--{parsed.get_boundary()}".encode()) == 3  # two parts, then the closing line
