"""The Django project: settings, root urls, the ASGI app and its guard, the Celery app, the DB pool glue."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
