"""Django settings for the shop. Configuration comes only from environment variables (README).

One module per concern; this package is `DJANGO_SETTINGS_MODULE = "config.settings"`.
"""

from __future__ import annotations

import os

from config.settings.base import *  # noqa: F403
from config.settings.commerce import *  # noqa: F403
from config.settings.observability import *  # noqa: F403
from config.settings.protocol import *  # noqa: F403
from config.settings.worker import *  # noqa: F403

os.makedirs(VAR_DIR, exist_ok=True)  # noqa: F405
