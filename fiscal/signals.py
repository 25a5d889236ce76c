"""The only way `fiscal` talks outward.

document_changed  send(sender=FiscalDocument, order_ref=str, event=str, message=str, data=dict)
    Sent synchronously INSIDE the transaction that changed the document, so the shop's receiver writes
    the order timeline event in that same transaction (a failing receiver rolls the change back and the
    job is retried). events: requested, blocked, processing, authorized, rejected, cancel_requested,
    cancelled, cancel_refused, cancel_window_closed, retry, correction_requested, corrected,
    correction_refused.
    `rows` (a list), only with `blocked` from `services.document_block_once`: the document is not written yet; a
    receiver appends the row it would write (an unsaved model instance) instead of writing it, and the row is
    written in the document's own statement, or not at all (the caller then goes the usual way).
"""

from django.dispatch import Signal

document_changed = Signal()
