"""Wire helpers of the A2A transport: ProtoJSON dicts ↔ SDK protobuf messages, integers kept integers.

The SDK carries `Part.data` as a protobuf `Value`, which stores every number as a double: 599900 comes
out as 599900.0. BCP money is integer centavos (BCP.md §1), so integral floats are turned back into
ints on the way in (`intify`) and replies are rendered from our own dicts on the way out.
"""

from __future__ import annotations

import uuid
from typing import Any

from a2a.types import Message, Part, Role
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, ParseDict

from bcp_app.protocol.names import A2A_EXTENSION_URI

CHECKOUT_KEY = "a2a.bcp.checkout"
PAYMENT_KEY = "a2a.bcp.checkout.payment"
SIGNALS_KEY = "a2a.bcp.checkout.signals"
CANDIDATES_KEY = "a2a.bcp.candidates"
ORDER_KEY = "a2a.bcp.order"  # the order (BCP §7) read with the get_order intent, extensions included
JSON_MEDIA_TYPE = "application/json"
MAX_SAFE_INTEGER = 2**53 - 1


def intify(value: Any) -> Any:
    """Integral floats → int, recursively (1.0 → 1); other values unchanged."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    if isinstance(value, dict):
        return {key: intify(item) for key, item in value.items()}
    if isinstance(value, list):
        return [intify(item) for item in value]
    return value


def message_to_dict(message: Message) -> dict[str, Any]:
    """ProtoJSON of an incoming message with integers restored (the idempotency fingerprint uses it)."""
    return intify(MessageToDict(message))


def data_part(data: dict[str, Any]) -> dict[str, Any]:
    return {"data": data, "mediaType": JSON_MEDIA_TYPE}


def text_part(text: str) -> dict[str, Any]:
    return {"text": text}


def agent_message(*, context_id: str, parts: list[dict[str, Any]], message_id: str | None = None) -> dict[str, Any]:
    """A direct reply in the seed's member order (BCP-A2A-05: ROLE_AGENT, the extension declared)."""
    return {
        "contextId": context_id,
        "messageId": message_id or str(uuid.uuid4()),
        "parts": parts,
        "role": "ROLE_AGENT",
        "extensions": [A2A_EXTENSION_URI],
    }


def to_proto(message: dict[str, Any]) -> Message:
    proto = Message(
        message_id=message["messageId"],
        context_id=message.get("contextId", ""),
        role=Role.ROLE_AGENT,
        extensions=list(message.get("extensions", [])),
    )
    for part in message["parts"]:
        if "data" in part:
            proto.parts.append(
                Part(data=ParseDict(part["data"], struct_pb2.Value()), media_type=part.get("mediaType", ""))
            )
        else:
            proto.parts.append(Part(text=part.get("text", "")))
    return proto
