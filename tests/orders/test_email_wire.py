"""The bytes an order e-mail puts on the wire (SMTP backend) are those of Django's `email.policy.SMTP` message:
the wire policy only skips parsing headers that need none (issue 34), it writes nothing differently; only the
multipart boundary is its own (shorter: the Content-Type header is not folded)."""

from __future__ import annotations

import email.policy
import re
from datetime import UTC, datetime
from email.generator import BytesGenerator
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


# Bodies for every encoding the standard policy picks (7bit, 8bit, quoted-printable within and past its ten-line
# sniff, base64) and the line ends it normalizes: the wire builds a text body with an HTML alternative itself.
BODIES = (
    "oi",
    "Olá, Ana!\n",
    "a\r\nb\rc\n\n",
    "x" * 78 + "\n",
    "x" * 79,
    "ção " * 40,
    "linha\n" * 12,
    "é" * 300 + "\n" + "a\n" * 20,
    "中文字符" * 50,
    "trailing   \nspaces \t\n",
    "From me\n.dot\n=3D=\n",
    "\n\n\n",
    "x" * 77 + "é\n",
    "\x0bvt\x0cff\u2028sep\u2029\n",
    "a\r\n" * 11 + "é" * 90,
)


@pytest.mark.parametrize("body", BODIES)
def test_a_text_with_an_html_alternative_is_built_as_the_standard_policy_builds_it(body: str) -> None:
    for html in BODIES:
        message = OrderEmail(
            subject="Café: Recebemos seu pedido #12",
            body=body,
            from_email='"Caju, Café" <pedidos@loja.example.com.br>',
            to=["ana@example.com.br", "Ana <ana@example.com>"],
            headers={"Message-ID": "<1@loja.example.com.br>", "Date": datetime(2026, 12, 6, 3, 0, tzinfo=UTC)},
        )
        message.attach_alternative(html, "text/html")
        assert _wire(message, standard=False) == _wire(message, standard=True), (body, html)


def test_other_shapes_go_the_standard_way() -> None:
    for alternatives in ([], [("<p>a</p>", "text/html"), ("b", "text/plain")], [("{}", "application/json")]):
        message = OrderEmail(
            subject="Pedido #1",
            body="Olá, Ana!\n",
            from_email="a@b.com.br",
            to=["c@d.com.br"],
            alternatives=alternatives,
            headers={"Message-ID": "<1@b.com.br>", "Date": datetime(2026, 12, 6, 3, 0, tzinfo=UTC)},
        )
        assert _wire(message, standard=False) == _wire(message, standard=True), alternatives
    attached = OrderEmail(subject="Pedido #1", body="oi", from_email="a@b.com.br", to=["c@d.com.br"])
    attached.attach_alternative("<p>oi</p>", "text/html")
    attached.attach("nota.txt", "conteúdo", "text/plain")
    attached.extra_headers = {"Message-ID": "<1@b.com.br>", "Date": datetime(2026, 12, 6, 3, 0, tzinfo=UTC)}
    assert _wire(attached, standard=False) == _wire(attached, standard=True)


def test_an_order_e_mail_is_written_for_the_wire_without_the_email_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34: the generator parsed the Content-Type back (type, boundary) per part; the message the wire policy
    puts together is written directly, to the same bytes (the tests above compare them)."""
    message = OrderEmail(subject="Pedido #1", body="Olá, Ana!\n", from_email="a@b.com.br", to=["c@d.com.br"])
    message.attach_alternative("<p>Olá, Ana!</p>\n", "text/html")
    message.extra_headers = {"Message-ID": "<1@b.com.br>", "Date": datetime(2026, 12, 6, 3, 0, tzinfo=UTC)}
    expected = _wire(message, standard=True)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the e-mail went through email.generator")

    monkeypatch.setattr(BytesGenerator, "flatten", refuse)
    wire = _wire(message, standard=False)
    assert wire == expected
    assert b"Content-Transfer-Encoding: 8bit\r\n\r\nOl\xc3\xa1, Ana!\r\n" in wire
