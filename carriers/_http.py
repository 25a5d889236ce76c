"""The carriers' one way out: JSON over the kernel's outbound client, with their errors in our two kinds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from carriers.base import CarrierRejected, CarrierUnavailable
from kernel.http import Deadline, OutboundError, Response, request

CONNECT_TIMEOUT = 2.0
MAX_BYTES = 512 * 1024
MAX_PDF_BYTES = 5 * 1024 * 1024


def call(
    method: str,
    url: str,
    *,
    deadline: Deadline,
    headers: Mapping[str, str],
    json: Any = None,
    params: Mapping[str, Any] | None = None,
    auth: tuple[str, str] | None = None,
    max_bytes: int = MAX_BYTES,
    rejected: Any = None,
) -> Response:
    """One exchange. Network trouble, 401/403/408/429 and 5xx are CarrierUnavailable; other 4xx are
    CarrierRejected with the message `rejected(response)` finds in the body (Portuguese, from the carrier)."""
    try:
        response = request(
            method, url, json=json, params=params, headers=headers, auth=auth, deadline=deadline,
            connect_timeout=CONNECT_TIMEOUT, max_bytes=max_bytes, guard=False,
        )  # fmt: skip
    except OutboundError as exc:
        raise CarrierUnavailable(f"{exc.kind}: {exc.message}") from exc
    status = response.status_code
    if status in (401, 403, 408, 429) or status >= 500:
        raise CarrierUnavailable(f"HTTP {status}")
    if status >= 400:
        message = rejected(response) if rejected is not None else ""
        raise CarrierRejected(message or f"A transportadora recusou o pedido (HTTP {status}).")
    return response


def body_json(response: Response) -> Any:
    try:
        return response.json()
    except ValueError as exc:
        raise CarrierUnavailable("the carrier answered something that is not JSON") from exc


def decimal_to_centavos(value: object) -> int:
    """ "23.45", 23.45, "25,40", "1.234,56" → centavos (the carriers send reais as text or numbers)."""
    text = str(value).strip()
    if "," in text:
        text = text.replace(".", "").replace(",", ".")
    whole, _, frac = text.partition(".")
    frac = (frac + "00")[:2]
    if not whole.lstrip("-").isdigit() or not frac.isdigit():
        raise CarrierUnavailable(f"unreadable price {value!r}")
    sign = -1 if whole.startswith("-") else 1
    return sign * (abs(int(whole)) * 100 + int(frac))


def reais(centavos: int) -> str:
    return f"{centavos // 100}.{centavos % 100:02d}"
