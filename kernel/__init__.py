"""What every app needs and no app owns; imports nothing of ours (django, httpx and the standard library only)."""
