"""WSGI entry point (granian serves `console.wsgi:application`; see console/webserver.py)."""

import gc
import os
import sys

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

# The server's worker threads hand the GIL to each other every switch interval; Python's default (5 ms) lets
# one busy thread hold up quick requests (the registry's cached reads) for that long. Each worker imports this.
sys.setswitchinterval(float(os.environ.get("WEB_SWITCH_INTERVAL_MS", "1")) / 1000)

django_application = get_wsgi_application()

# Imported once Django is set up. The registry's hot reads skip the middleware stack; all else is Django's.
from django.conf import settings  # noqa: E402

from console.request_bodies import ChunkedBodyLimit  # noqa: E402
from controlplane.schemas.api.hot_path import RegistryHotPath  # noqa: E402
from controlplane.schemas.api.views import MAX_BODY_BYTES  # noqa: E402

# The largest body any endpoint takes: the registry's schemas, or Django's own limit if set higher.
application = ChunkedBodyLimit(
    RegistryHotPath(django_application),
    limit_bytes=max(MAX_BODY_BYTES, settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0),
)

# Everything loaded so far lives as long as the worker. Moving it out of the collector's view keeps full
# collections, which requests that allocate a lot (a 24-hour lag chart) trigger, from walking it each time.
gc.freeze()
