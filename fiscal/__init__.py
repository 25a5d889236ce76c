"""NF-e for paid orders through a provider boundary. A leaf app: it imports nothing of ours (like `payments`)."""
