"""Operating the shop in production: health probes, request logs, error reporting, rate limits."""
