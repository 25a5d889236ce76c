"""Sandbox PSP (PIX.md §4.3): a fake PSP recebedor inside the app, enabled only by BCP_PIX_SANDBOX."""
