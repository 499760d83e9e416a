"""WSGI entry point (gunicorn console.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

django_application = get_wsgi_application()

# Imported once Django is set up. The registry's hot reads skip the middleware stack; all else is Django's.
from controlplane.schemas.api.hot_path import RegistryHotPath  # noqa: E402

application = RegistryHotPath(django_application)
