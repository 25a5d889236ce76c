"""The shop's side of NF-e: fiscal data of the store and the catalog, the invoice handed to `fiscal`,
and the hooks that request issue/cancel in the transactions of the order (the shop may import
`orders` and `fiscal`; they import nothing of ours)."""
