"""Protocol transports over the transport-neutral BCP operations."""
