"""Fixtures of the BCP core tests live in bcp_fixtures.py (opt-in, so other bcp_app tests are unaffected)."""

from tests.bcp_app.bcp_fixtures import bcp_settings, fake_platform, rest_shop  # noqa: F401
