"""Buyer e-mails go out over one SMTP connection per worker thread, kept open between e-mails (issue 34: connect,
EHLO and QUIT were a quarter of an e-mail's CPU), against a mail server on 127.0.0.1 speaking SMTP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from orders import emails
from orders.emails import OrderEmail, send_email
from tests.orders.fake_smtp import FakeSMTP, fake_smtp


@pytest.fixture
def smtp(settings: Any) -> Iterator[FakeSMTP]:
    with fake_smtp() as server:
        settings.MAILERS = server.mailers()
        yield server


def _message(number: int) -> OrderEmail:
    message = OrderEmail(
        subject=f"Loja Exemplo: Recebemos seu pedido #{number}",
        body="Olá, Ana!",
        from_email='"Loja Exemplo" <pedidos@loja.example.com.br>',
        to=["ana@example.com.br"],
    )
    message.attach_alternative("<p>Olá, Ana!</p>", "text/html")
    return message


def test_consecutive_emails_share_one_connection(smtp: FakeSMTP) -> None:
    send_email(_message(1))
    send_email(_message(2))
    assert (smtp.connections, len(smtp.messages)) == (1, 2)
    assert b"Subject: Loja Exemplo: Recebemos seu pedido #2" in smtp.messages[1]
    head = smtp.messages[1].split(b"\r\n\r\n", 1)[0]
    for header in (
        b"\r\nFrom: ",
        b"<pedidos@loja.example.com.br>",
        b"\r\nTo: ana@example.com.br",
        b"\r\nDate: ",
        b"\r\nMessage-ID: <",
        b"MIME-Version: 1.0",
        b"Content-Type: multipart/alternative",
    ):
        assert header in head  # every header real mail needs is still there


def test_a_connection_the_server_dropped_is_replaced_and_the_email_goes_out_once(smtp: FakeSMTP) -> None:
    send_email(_message(1))
    smtp.drop_all()  # the server's idle timeout
    send_email(_message(2))
    assert (smtp.connections, len(smtp.messages)) == (2, 2)


def test_a_connection_idle_too_long_is_not_reused(smtp: FakeSMTP, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(emails, "SMTP_IDLE_SECONDS", 0.0)
    send_email(_message(1))
    send_email(_message(2))
    assert (smtp.connections, len(smtp.messages)) == (2, 2)


def test_other_mail_settings_get_their_own_connection(smtp: FakeSMTP, settings: Any) -> None:
    send_email(_message(1))
    with fake_smtp() as other:
        settings.MAILERS = other.mailers()
        send_email(_message(2))
        assert (other.connections, len(other.messages)) == (1, 1)
    assert (smtp.connections, len(smtp.messages)) == (1, 1)


def test_a_server_that_refuses_connections_fails_the_send(settings: Any) -> None:
    with fake_smtp() as server:
        port = server.port
    settings.MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {"host": "127.0.0.1", "port": port, "timeout": 2},
        }
    }
    with pytest.raises(OSError):  # the task's autoretry (SMTPException, OSError) and the sweep take it from here
        send_email(_message(1))


def test_an_invalid_recipient_is_refused_every_time_and_valid_ones_still_go_out(smtp: FakeSMTP) -> None:
    send_email(_message(1))
    for _ in range(2):  # the backend remembers the addresses it prepared, never a refusal
        bad = _message(2)
        bad.to = ["ana@@example.com.br"]
        with pytest.raises(ValueError):
            send_email(bad)
    send_email(_message(3))
    assert len(smtp.messages) == 2
