"""Output bodies are sent as the presenters build them, without pydantic validating them again (issue 34), in the
output models' member order; the one schema set stays the contract: with `BCP_CHECK_OUTPUT` (on in the whole
suite) a body that is not exactly what its model produces fails (BCP-CHK-02, BCP-ORD-04, BCP-ERR-02)."""

from __future__ import annotations

from typing import Any

import pytest

from bcp_app.protocol.results import body_bytes
from bcp_app.protocol.schemas import CheckoutResponse, ErrorResponse
from bcp_app.protocol.schemas.common import OutputDrift, _layouts


def _error_built_out_of_order() -> dict[str, Any]:
    # every object's members in another order than its model declares them; an extra member on the envelope
    return {
        "messages": [
            {"content": "Pedido não encontrado.", "severity": "recoverable", "code": "not_found", "type": "error"}
        ],
        "ucp": {
            "capabilities": {"br.dev.bcp.shopping.order": [{"version": "2026-07-28"}]},
            "extra": 1,
            "status": "error",
            "version": "2026-07-28",
        },
    }


def test_produce_sends_the_models_wire_bytes_without_validating_again(settings: Any) -> None:
    body = _error_built_out_of_order()
    expected = body_bytes(ErrorResponse.validated(body))
    for check in (True, False):
        settings.BCP_CHECK_OUTPUT = check
        produced = ErrorResponse.produce(body)
        assert body_bytes(produced) == expected  # member order of the models, nested ones included
        assert list(produced["ucp"]) == ["version", "status", "capabilities", "extra"]
        assert list(produced["messages"][0]) == ["type", "code", "severity", "content"]
    # in production nothing is validated: a body the models would refuse goes out as built (the suite checks it)
    settings.BCP_CHECK_OUTPUT = False
    broken = {**body, "messages": []}
    assert ErrorResponse.produce(broken)["messages"] == []


def test_a_drifting_presenter_fails_under_the_check(settings: Any) -> None:
    settings.BCP_CHECK_OUTPUT = True
    with pytest.raises(OutputDrift, match=r"ErrorResponse"):
        ErrorResponse.produce({**_error_built_out_of_order(), "messages": []})  # min_length=1 refused
    body = _error_built_out_of_order()
    with pytest.raises(OutputDrift, match=r"messages\.0\.type"):
        ErrorResponse.produce({**body, "messages": [{**body["messages"][0], "type": "erro"}]})


def test_a_checkout_body_and_a_wrong_value_in_it(settings: Any) -> None:
    settings.BCP_CHECK_OUTPUT = True
    checkout = {
        "ucp": {"version": "2026-07-28", "capabilities": {}},
        "id": "checkout_1",
        "status": "incomplete",
        "currency": "BRL",
        "line_items": [],
        "totals": [{"type": "total", "amount": 0}],
        "links": [],
        "policies": [],
    }
    assert body_bytes(CheckoutResponse.produce(checkout)) == body_bytes(CheckoutResponse.validated(checkout))
    with pytest.raises(OutputDrift):
        CheckoutResponse.produce({**checkout, "id": 7})


def test_objects_with_the_same_members_are_put_in_order_by_one_remembered_layout(settings: Any) -> None:
    """issue 34: how an object with these members, as built, goes in wire order is worked out once per model and
    member set, not by walking every declared field of every object of every answer; the body is still a new
    dict each time (a caller's change to it never reaches the next answer) and in the models' order."""
    settings.BCP_CHECK_OUTPUT = False
    first = _error_built_out_of_order()
    ErrorResponse.produce(first)
    remembered = dict(_layouts)
    assert (ErrorResponse, tuple(first)) in remembered
    second = _error_built_out_of_order()
    second["messages"][0]["content"] = "Outro texto."
    produced = ErrorResponse.produce(second)
    assert _layouts == remembered  # nothing worked out again
    assert produced is not second and produced["ucp"] is not second["ucp"]
    assert produced["messages"][0] is not second["messages"][0]
    assert list(produced) == ["ucp", "messages"]
    assert list(produced["ucp"]) == ["version", "status", "capabilities", "extra"]
    assert produced["messages"][0]["content"] == "Outro texto."
    # the same members in the models' order already: copied as they are; another order: the models' order
    in_order = {"ucp": {"version": "2026-07-28", "status": "error"}, "messages": [{"type": "error", "content": "x"}]}
    assert body_bytes(ErrorResponse.produce(in_order)) == body_bytes(ErrorResponse.validated(in_order))
    assert ErrorResponse.produce(in_order)["ucp"] is not in_order["ucp"]
