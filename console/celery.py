"""The Celery application. Beat schedules live in console/schedules.py, nowhere else."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("streamhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
