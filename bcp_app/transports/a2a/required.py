"""The a2a-sdk's REQUIRED-field check of a request (`a2a.utils.proto_utils.validate_proto_required_fields`), with what
it asks of each field's descriptor read once per message type.

The SDK walks every field of the request and of each message in it, and for each one reads the descriptor's options
and their `field_behavior` extension (protobuf's Python descriptors build these on every read): about a tenth of an A2A
Get Order's CPU (issue 34). Here the same walk, in the same order, with the same `getattr`/`HasField` on the values,
reads each type's fields from a plan made once (name, REQUIRED, repeated, presence, default, how to recurse), so the
errors and their order are the SDK's (tests/bcp_app/test_a2a_direct_read.py compares them).
"""

from __future__ import annotations

import functools
from typing import Any

from a2a.utils.errors import InvalidParamsError
from google.api.field_behavior_pb2 import FieldBehavior, field_behavior
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message as ProtobufMessage

_SCALAR, _SINGLE, _MAP, _LIST = range(4)  # how a field is recursed into, as the SDK's `_recurse_validation`
MISSING_ELEMENT = "Field must contain at least one element."  # the SDK's words, which A2A clients may match
MISSING = "Field is required."


def validate_required_fields(message: ProtobufMessage) -> None:
    """`validate_proto_required_fields`: InvalidParamsError('Validation failed', {'errors': …}) when a REQUIRED field
    is missing or empty, anywhere in `message`."""
    errors = required_field_errors(message)
    if errors:
        raise InvalidParamsError(message="Validation failed", data={"errors": errors})


def required_field_errors(message: ProtobufMessage) -> list[dict[str, str]]:
    """`_validate_proto_required_fields_internal` of the SDK: the errors, in its order and words."""
    errors: list[dict[str, str]] = []
    for name, required, repeated, presence, default, kind in _plan(message.DESCRIPTOR):
        if not required and kind == _SCALAR:
            continue
        value = getattr(message, name)
        if required:
            if repeated:
                if not value:
                    errors.append({"field": name, "message": MISSING_ELEMENT})
            elif presence:
                if not message.HasField(name):
                    errors.append({"field": name, "message": MISSING})
            elif value == default:
                errors.append({"field": name, "message": MISSING})
        if kind == _SCALAR:
            continue
        if kind == _SINGLE:
            if message.HasField(name):
                _nested(errors, name, required_field_errors(value))
        elif kind == _MAP:
            for key, item in value.items():
                if isinstance(item, ProtobufMessage):
                    _nested(errors, f"{name}[{key}]", required_field_errors(item))
        else:
            for index, item in enumerate(value):
                _nested(errors, f"{name}[{index}]", required_field_errors(item))
    return errors


def _nested(errors: list[dict[str, str]], prefix: str, found: list[dict[str, str]]) -> None:
    for error in found:
        field = error["field"]
        errors.append({"field": f"{prefix}.{field}" if field else prefix, "message": error["message"]})


@functools.cache
def _plan(descriptor: Descriptor) -> tuple[tuple[str, bool, bool, bool, Any, int], ...]:
    """Per field of a message type, what the SDK's walk reads of its descriptor."""
    plan = []
    for field in descriptor.fields:
        required = FieldBehavior.REQUIRED in field.GetOptions().Extensions[field_behavior]
        repeated = _repeated(field)
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            kind = _SCALAR
        elif not repeated:
            kind = _SINGLE
        elif field.message_type is not None and field.message_type.GetOptions().map_entry:
            kind = _MAP
        else:
            kind = _LIST
        default = field.default_value if required and not repeated and not field.has_presence else None
        plan.append((field.name, required, repeated, field.has_presence, default, kind))
    return tuple(plan)


def _repeated(field: FieldDescriptor) -> bool:
    """The SDK's `_field_is_repeated`: `is_repeated` (protobuf >= 6.31), else the label."""
    is_repeated = getattr(field, "is_repeated", None)
    if is_repeated is not None:
        return bool(is_repeated)
    return getattr(field, "label", None) == FieldDescriptor.LABEL_REPEATED
