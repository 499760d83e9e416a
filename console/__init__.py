"""The Django project: settings, URLs, the Celery app, console auth and the SPA shell."""

from console.celery import app as celery_app

__all__ = ("celery_app",)
