"""Profile cache and validation limits (issue 13 §15): failure rows are pruned like successes; a profile
with thousands of invalid members is refused naming one of them (validation stops at the first error).
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from bcp_app.models import ProfileCacheEntry
from bcp_app.protocol.errors import ProtocolError
from bcp_app.service.negotiation import validate_platform_profile
from tests.bcp_app.bcp_fixtures import FakePlatform, agent

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("bcp_settings")]


def search(client: Client, profile_url: str) -> Any:
    return client.post(
        "/bcp/v1/catalog/search",
        data=json.dumps({"query": "café"}),
        content_type="application/json",
        headers=agent(profile_url),
    )


def test_failure_rows_are_pruned_to_the_cache_cap(client: Client, fake_platform: FakePlatform, settings: Any) -> None:
    # given a cache already at its cap of old failure rows (no fetch ever succeeded)
    settings.BCP_PROFILE_CACHE_MAX = 10
    old = timezone.now() - timedelta(hours=1)
    for n in range(10):
        ProfileCacheEntry.objects.create(
            url_hash=f"{n:064x}",
            url=f"https://gone.example/{n}",
            fetched_at=old,
            expires_at=old,
            failure_count=1,
            last_error_code="profile_unreachable",
        )
    # when more unreachable profiles are asked for
    for n in range(5):
        assert search(client, fake_platform.url(f"/missing-{n}.json")).status_code == 424
    # then the table stays within the cap, the newest failures kept
    assert ProfileCacheEntry.objects.count() == 10
    assert ProfileCacheEntry.objects.filter(url__startswith=fake_platform.url("/missing-")).count() == 5


def test_a_profile_with_thousands_of_bad_capabilities_is_refused_with_one_message(
    fake_platform: FakePlatform,
) -> None:
    document = fake_platform.profile()
    document["ucp"]["capabilities"] = {f"br.dev.bcp.x{n}": [{"version": 1}] for n in range(5_000)}
    with pytest.raises(ProtocolError) as caught:
        validate_platform_profile(document)
    assert caught.value.code == "profile_malformed"
    assert caught.value.content.startswith("Perfil da plataforma inválido em $.ucp.capabilities.br.dev.bcp.x")
