"""Serves the built React console for every non-API path, so client-side routes deep-link."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET

MISSING_BUILD = """<!doctype html><title>Console not built</title>
<p>The console has not been built. Run <code>make run</code> (or <code>npm --prefix frontend run build</code>).</p>"""


@require_GET
@ensure_csrf_cookie
def spa_shell(request: HttpRequest, path: str = "") -> HttpResponse:
    index = settings.FRONTEND_DIST / "index.html"
    if not index.exists():
        return HttpResponse(MISSING_BUILD, status=503)
    response = HttpResponse(index.read_bytes(), content_type="text/html; charset=utf-8")
    response["Cache-Control"] = "no-cache"  # the shell must change with each build; assets are fingerprinted
    return response
