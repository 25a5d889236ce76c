"""A read's `SendMessage` params parsed once per shape (issue 34).

The SDK's dispatcher turns the params of every `SendMessage` into a protobuf `SendMessageRequest` by
`ParseDict` (about 100 µs of pure Python for a Get Order), and `_message_send` turns the message back into a
dict (`message_to_dict`, about 30 µs): together they cost more than the read's SQL. An agent reading its orders
sends the same params again and again but for two members, the message's `messageId` (fresh every call) and its
`contextId`. So the params are parsed with those two replaced by placeholders, once per distinct rest of them,
and each call gets a copy with its own two values set, which is the message `ParseDict` builds from the params
as sent: both are plain string fields, and an ASCII string that is not empty is a value `ParseDict` sets as it
is (it refuses only non-strings and unpaired surrogates) and `MessageToDict` writes back as it is, at the member's
place (an empty one it leaves out). Params with either member missing, empty, not an ASCII string, or that the
SDK refuses, are not remembered: the SDK parses them itself (and answers any refusal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from a2a.types import SendMessageRequest
from google.protobuf.json_format import MessageToDict, ParseDict

from bcp_app.transports.a2a.messages import intify

MEMO_SIZE = 512  # distinct params shapes remembered per process (a few hundred bytes each)
_MESSAGE_ID, _CONTEXT_ID = "messageId", "contextId"
_PLACEHOLDER = "x"  # not empty: MessageToDict writes the member at its place, where the real value goes


@dataclass(frozen=True)
class _Parsed:
    request: SendMessageRequest  # ParseDict of the params with the placeholders
    incoming: dict[str, Any]  # message_to_dict of its message


_parsed: dict[bytes, _Parsed] = {}


@dataclass(frozen=True)
class ParsedSend:
    """What the SDK's `ParseDict` and our `message_to_dict` make of one call's params."""

    request: SendMessageRequest
    incoming: dict[str, Any]


def _own_id(value: Any) -> bool:
    return isinstance(value, str) and value != "" and value.isascii()


def parsed_send(params: Any) -> ParsedSend | None:
    """The `SendMessageRequest` (`ParseDict(params, SendMessageRequest(), ignore_unknown_fields=True)`, as the SDK's
    dispatcher calls it) and the incoming message dict of `params`, or None when they are not remembered (see the
    module's docstring): the caller then lets the SDK parse them."""
    if not isinstance(params, dict):
        return None
    message = params.get("message")
    if not isinstance(message, dict):
        return None
    message_id, context_id = message.get(_MESSAGE_ID), message.get(_CONTEXT_ID)
    if not _own_id(message_id) or not _own_id(context_id):
        return None
    shape = {**params, "message": {**message, _MESSAGE_ID: _PLACEHOLDER, _CONTEXT_ID: _PLACEHOLDER}}
    try:
        key = orjson.dumps(shape)
    except orjson.JSONEncodeError:  # e.g. an integer beyond 64 bits: not remembered
        return None
    parsed = _parsed.get(key)
    if parsed is None:
        try:
            request = ParseDict(shape, SendMessageRequest(), ignore_unknown_fields=True)
        except Exception:  # whatever the SDK's parse refuses, the SDK refuses again and answers
            return None
        parsed = _Parsed(request, intify(MessageToDict(request.message)))
        if len(_parsed) >= MEMO_SIZE:
            _parsed.clear()  # bounded; forgetting only costs a parse
        _parsed[key] = parsed
    request = SendMessageRequest()
    request.CopyFrom(parsed.request)
    request.message.message_id = message_id
    request.message.context_id = context_id
    incoming = intify(parsed.incoming)  # a copy of every dict and list in it (the template is never handed out)
    incoming[_MESSAGE_ID], incoming[_CONTEXT_ID] = message_id, context_id
    return ParsedSend(request, incoming)
