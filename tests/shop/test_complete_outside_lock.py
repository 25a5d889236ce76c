"""No network I/O under a lock (issue 11, BCP-PAY / PIX.md §3): complete calls the PSP with no transaction open.

The PSP is the fake Bacen API server on loopback (tests/payments/fake_bacen.py): a charge creation that
stays in flight for as long as the test holds its gate, one that dies mid-call, and a worker killed
during the call (a real subprocess, SIGKILL).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, connections
from django.utils import timezone

from shop.checkout.services import checkout_complete, checkout_create, checkout_expire_due
from shop.checkout.settle import PAYMENT_PENDING_GRACE
from shop.checkout.types import CheckoutResult, CompleteInput, InstrumentInput, LineInput, PaymentInput
from shop.models import Checkout, CheckoutEvent, Variant
from tests.payments.fake_bacen import CLIENT_ID, CLIENT_SECRET, FakeBacenServer
from tests.shop.checkout_factories import full_input, make_shipping, make_variant

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
PIX = InstrumentInput(id="instr_pix", handler_id="pix_recebedor_001", type="pix")
CARD = InstrumentInput(
    id="instr_card", handler_id="gpay", type="card", credential={"type": "PAYMENT_GATEWAY", "token": "success_token"}
)


@pytest.fixture
def bacen(settings: Any) -> Iterator[FakeBacenServer]:
    server = FakeBacenServer().start()
    settings.BCP_PIX_SANDBOX = False
    settings.PAYMENTS_CARD_GATEWAY = "payments.card.sandbox.SandboxCardGateway"
    settings.PIX_PSP_BASE_URL = server.base_url
    settings.PIX_PSP_TOKEN_URL = server.base_url + "/oauth/token"
    settings.PIX_PSP_CLIENT_ID = CLIENT_ID
    settings.PIX_PSP_CLIENT_SECRET = CLIENT_SECRET
    settings.PIX_PSP_BACKOFF_SECONDS = 0.0
    yield server
    if server.state.cob_gate is not None:
        server.state.cob_gate.set()
    server.stop()


def _ready(sku: str = "SKU-CAFE-500G") -> str:
    """A `ready_for_complete` checkout of one unit without a Pix charge yet (no instrument chosen on update)."""
    result = checkout_create(data=full_input(LineInput(sku, 1), option="pac"))
    assert result.checkout.status == "ready_for_complete", result.messages
    return result.checkout.public_id


def _complete(checkout_id: str, instrument: InstrumentInput) -> CheckoutResult:
    data = CompleteInput(payment=PaymentInput(instruments=(instrument,)))
    return checkout_complete(checkout_id=checkout_id, data=data)


def test_slow_psp_call_does_not_block_a_second_buyer_of_the_same_sku(bacen: FakeBacenServer) -> None:
    # given 2 units of one SKU, two ready checkouts, and a PSP that holds charge creation until we let it go
    make_variant(stock=2)
    make_shipping()
    first, second = _ready(), _ready()
    bacen.state.cob_gate = threading.Event()
    outcome: dict[str, Any] = {}

    def buyer_one() -> None:
        try:
            outcome["first"] = _complete(first, PIX)
        except Exception as exc:  # a crash must fail the test, not vanish in the thread
            outcome["first"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=buyer_one)
    thread.start()
    # when the first buyer's complete is inside its PSP call (stock already reserved)
    assert bacen.state.cob_entered.wait(timeout=60)
    held = Checkout.objects.get(public_id=first)
    assert (held.status, held.stock_reserved, held.payment_txid) == ("complete_in_progress", True, "")
    # and the second buyer of the same SKU completes with a card meanwhile
    done = _complete(second, CARD)
    # then the second finished while the first's PSP call is still in flight (it did not wait for the lock)
    assert "first" not in outcome and thread.is_alive()
    assert done.checkout.status == "completed"
    assert Variant.objects.get().stock == 0
    # and once the PSP answers, the first waits for its Pix with its unit still held
    bacen.state.cob_gate.set()
    thread.join(timeout=120)
    first_result = outcome["first"]
    assert isinstance(first_result, CheckoutResult), first_result
    assert first_result.checkout.status == "complete_in_progress"
    assert [m.code for m in first_result.messages] == ["pix_awaiting_payment"]
    assert first_result.checkout.payment_txid in bacen.state.cobs
    assert Variant.objects.get().stock == 0
    events = CheckoutEvent.objects.filter(checkout__public_id=first).order_by("id")
    kinds = list(events.values_list("kind", "from_status", "to_status"))
    assert kinds == [
        ("created", "", "ready_for_complete"),
        ("payment_pending", "ready_for_complete", "complete_in_progress"),
        ("complete_accepted", "complete_in_progress", "complete_in_progress"),
    ]


def test_psp_dying_mid_call_gives_the_stock_back_at_once(bacen: FakeBacenServer) -> None:
    # given one unit and a PSP that drops every charge creation without answering
    make_variant(stock=1)
    make_shipping()
    checkout_id = _ready()
    bacen.state.cob_die = True
    # when the buyer completes with Pix
    result = _complete(checkout_id, PIX)
    # then the checkout is ready again, told why, and holds nothing
    assert result.checkout.status == "ready_for_complete"
    assert result.messages[-1].code == "pix_psp_unavailable"
    assert (result.checkout.stock_reserved, Variant.objects.get().stock) == (False, 1)
    # and it tried three times (counted where the PSP takes the charge: a 401 for a token cached from an
    # earlier fake on the same port, answered before that, is not an attempt to create it)
    assert bacen.state.cob_calls == 3


def _subprocess_env(server: FakeBacenServer) -> dict[str, str]:
    db = connection.settings_dict
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
        "BCP_PIX_SANDBOX": "false",
        "PIX_PSP_BASE_URL": server.base_url,
        "PIX_PSP_TOKEN_URL": server.base_url + "/oauth/token",
        "PIX_PSP_CLIENT_ID": CLIENT_ID,
        "PIX_PSP_CLIENT_SECRET": CLIENT_SECRET,
    }


def test_worker_killed_during_the_psp_call_holds_no_stock_past_the_pending_grace(bacen: FakeBacenServer) -> None:
    # given one unit and a ready checkout, completed with Pix by another process whose PSP call hangs
    make_variant(stock=1)
    make_shipping()
    checkout_id = _ready()
    bacen.state.cob_gate = threading.Event()
    code = (
        "from shop.checkout.types import CompleteInput, InstrumentInput, PaymentInput\n"
        "from shop.checkout.services import checkout_complete\n"
        f"pix = InstrumentInput(id='instr_pix', handler_id='{PIX.handler_id}', type='pix')\n"
        "data = CompleteInput(payment=PaymentInput(instruments=(pix,)))\n"
        f"checkout_complete(checkout_id='{checkout_id}', data=data)\n"
    )
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=_subprocess_env(bacen),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert bacen.state.cob_entered.wait(timeout=120)
        # when that worker dies in the middle of the call
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
    held = Checkout.objects.get(public_id=checkout_id)
    assert (held.status, held.stock_reserved, Variant.objects.get().stock) == ("complete_in_progress", True, 0)
    # then the sweep leaves it alone within the grace, and gives the unit back once the grace has passed
    assert checkout_expire_due(now=held.updated_at + PAYMENT_PENDING_GRACE / 2) == 0
    assert Variant.objects.get().stock == 0
    assert checkout_expire_due(now=held.updated_at + PAYMENT_PENDING_GRACE) == 1
    released = Checkout.objects.get(public_id=checkout_id)
    assert (released.status, released.stock_reserved, Variant.objects.get().stock) == ("incomplete", False, 1)
    assert released.messages[-1]["code"] == "pix_psp_unavailable"
    assert released.expires_at > timezone.now()  # released long before the checkout itself would expire
