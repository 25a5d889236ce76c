"""Fixtures of the payments tests: sandbox PSP on, a recording `charge_settled` receiver."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from payments.signals import card_payment_settled, charge_settled, refund_finished


@pytest.fixture(autouse=True)
def _sandbox(settings: Any) -> None:
    settings.BCP_PIX_SANDBOX = True
    settings.PIX_SANDBOX_WEBHOOK_SECRET = "sandbox-secret"
    settings.PIX_SANDBOX_REFUND_AUTOSETTLE = True
    settings.BCP_PUBLIC_URL = "http://testserver"
    settings.PIX_SANDBOX_WEBHOOK_URL = ""
    settings.PIX_EXPIRY_GRACE_SECONDS = 120


@pytest.fixture(autouse=True)
def _isolated_signals() -> Iterator[None]:
    """Payments is a leaf: its tests listen with their own receivers only (the shop's are set aside)."""
    saved = {signal: signal.receivers[:] for signal in (charge_settled, refund_finished, card_payment_settled)}
    for signal in saved:
        signal.receivers = []
        signal.sender_receivers_cache.clear()
    yield
    for signal, receivers in saved.items():
        signal.receivers = receivers
        signal.sender_receivers_cache.clear()


@dataclass
class Receiver:
    answer: str = "accepted"
    calls: list[dict[str, Any]] = field(default_factory=list)
    # Seconds to hold the settling transaction (concurrency tests widen the race window with it).
    hold_seconds: float = 0.0

    def __call__(self, sender: Any, **kwargs: Any) -> str:
        kwargs.pop("signal", None)
        if self.hold_seconds:
            time.sleep(self.hold_seconds)
        self.calls.append(kwargs)
        return self.answer


@pytest.fixture
def settled() -> Iterator[Receiver]:
    """A test receiver of `charge_settled` (the shop's receiver is not what these tests are about)."""
    receiver = Receiver()
    charge_settled.connect(receiver, weak=False, dispatch_uid="test-settled")
    yield receiver
    charge_settled.disconnect(dispatch_uid="test-settled")


@pytest.fixture
def refunds_finished() -> Iterator[list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []

    def receiver(sender: Any, **kwargs: Any) -> None:
        kwargs.pop("signal", None)
        calls.append(kwargs)

    refund_finished.connect(receiver, weak=False, dispatch_uid="test-refund-finished")
    yield calls
    refund_finished.disconnect(dispatch_uid="test-refund-finished")


@pytest.fixture
def card_settled() -> Iterator[Receiver]:
    """A test receiver of `card_payment_settled` (late card outcomes: webhook, reconcile)."""
    receiver = Receiver()
    card_payment_settled.connect(receiver, weak=False, dispatch_uid="test-card-settled")
    yield receiver
    card_payment_settled.disconnect(dispatch_uid="test-card-settled")
