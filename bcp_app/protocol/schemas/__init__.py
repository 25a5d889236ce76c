"""Pydantic models for every BCP object the shop sends or accepts; one set for REST, MCP and A2A.

Request models (`…In`, `…Request`) are strict about types and ignore unknown members (BCP §1);
response models document what presenters produce and are checked against the JSON Schemas in tests.
"""

from bcp_app.protocol.schemas.catalog import (
    GetProductRequest,
    LookupRequest,
    LookupResponse,
    ProductResponse,
    SearchRequest,
    SearchResponse,
)
from bcp_app.protocol.schemas.checkout import (
    CheckoutCancelRequest,
    CheckoutCompleteRequest,
    CheckoutCreateRequest,
    CheckoutResponse,
    CheckoutUpdateRequest,
)
from bcp_app.protocol.schemas.common import ErrorResponse, Message, ProtocolErrorBody, Total
from bcp_app.protocol.schemas.order import OrderResponse
from bcp_app.protocol.schemas.payment import PixCharge
from bcp_app.protocol.schemas.profile import Profile

__all__ = [
    "CheckoutCancelRequest",
    "CheckoutCompleteRequest",
    "CheckoutCreateRequest",
    "CheckoutResponse",
    "CheckoutUpdateRequest",
    "ErrorResponse",
    "GetProductRequest",
    "LookupRequest",
    "LookupResponse",
    "Message",
    "OrderResponse",
    "PixCharge",
    "ProductResponse",
    "Profile",
    "ProtocolErrorBody",
    "SearchRequest",
    "SearchResponse",
    "Total",
]
