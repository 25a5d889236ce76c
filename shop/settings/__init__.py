"""Django settings for the shop. Configuration comes only from environment variables (README).

One module per concern; this package is `DJANGO_SETTINGS_MODULE = "shop.settings"`.
"""

from __future__ import annotations

import os

from shop.settings.base import *  # noqa: F403
from shop.settings.commerce import *  # noqa: F403
from shop.settings.observability import *  # noqa: F403
from shop.settings.protocol import *  # noqa: F403
from shop.settings.worker import *  # noqa: F403

os.makedirs(VAR_DIR, exist_ok=True)  # noqa: F405
