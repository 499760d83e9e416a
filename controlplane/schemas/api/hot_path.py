"""A lean WSGI path in front of Django for the registry's two hot reads.

Serializers call `GET …/schemas/ids/{id}` and `POST …/subjects/{subject}` (lookup) for every new schema
they meet, and those answers are cached (see `cache.py`): what is left of a request is mostly Django's
URL resolver, its middleware chain and its request signals. Requests for those two routes that carry an
`Authorization` header are answered here instead, by the same routing and `views.serve` as the Django view,
with the same response headers: the middleware that sets headers (security, common, X-Frame-Options) run
their own `process_request`/`process_response` on the request. Everything else goes to Django unchanged:
other routes, session (cookie) callers, and any request one of those middleware would redirect or refuse.

The hot path switches itself off when the project's middleware list has one it does not know, or when
the registry's URL no longer resolves to `views.registry`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.handlers.exception import response_for_exception
from django.core.handlers.wsgi import WSGIHandler, WSGIRequest
from django.db import close_old_connections
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from django.utils.deprecation import MiddlewareMixin
from django.utils.log import log_response
from django.utils.module_loading import import_string

from controlplane.schemas.api import views
from controlplane.schemas.services import RegistryError

logger = logging.getLogger(__name__)

HOT_HANDLERS = frozenset({views.schema_by_id, views.lookup})
REGISTRY_PATH = re.compile(r"/clusters/(?P<cluster_id>\d+)/schema-registry(?:/(?P<rest>.*))?", re.DOTALL)
# Middleware that set response headers: the hot path runs them.
HEADER_MIDDLEWARE = frozenset(
    {
        "controlplane.core.request_ids.RequestIdMiddleware",
        "django.middleware.security.SecurityMiddleware",
        "django.middleware.common.CommonMiddleware",
        "django.middleware.clickjacking.XFrameOptionsMiddleware",
    }
)
# Middleware with nothing to do for an API-key request to the registry: static files live elsewhere, the
# session and messages are never touched (so no cookie or Vary header), the view is CSRF-exempt, and a
# single sign-on session is only renewed for requests that are authenticated by that session.
IDLE_MIDDLEWARE = frozenset(
    {
        "whitenoise.middleware.WhiteNoiseMiddleware",
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.middleware.csrf.CsrfViewMiddleware",
        "django.contrib.auth.middleware.AuthenticationMiddleware",
        "django.contrib.messages.middleware.MessageMiddleware",
        "console.sso_views.OidcSessionMiddleware",
    }
)

StartResponse = Callable[..., Any]


def _unused_get_response(request: HttpRequest) -> HttpResponse:
    raise AssertionError("the hot path calls process_request and process_response only")


def header_middleware(names: Iterable[str]) -> list[MiddlewareMixin] | None:
    """Instances of the header-setting middleware in settings order, or None if an unknown one is listed."""
    instances: list[MiddlewareMixin] = []
    for name in names:
        if name in HEADER_MIDDLEWARE:
            instances.append(import_string(name)(_unused_get_response))
        elif name not in IDLE_MIDDLEWARE:
            logger.warning("schema registry hot path is off: it does not know the middleware %s", name)
            return None
    return instances


def _resolves_to_registry() -> bool:
    try:
        return resolve("/clusters/1/schema-registry/schemas/ids/1").func is views.registry
    except Resolver404:
        return False


class RegistryHotPath:
    """WSGI application: the hot registry reads answered directly, everything else by `django_app`."""

    def __init__(self, django_app: WSGIHandler) -> None:
        self.django_app = django_app
        middleware = header_middleware(settings.MIDDLEWARE)
        self.request_hooks = [m.process_request for m in middleware or [] if hasattr(m, "process_request")]
        self.response_hooks = [
            m.process_response for m in reversed(middleware or []) if hasattr(m, "process_response")
        ]
        self.enabled = middleware is not None and _resolves_to_registry()

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if self.enabled and "/schema-registry/" in environ.get("PATH_INFO", ""):
            response = self.answer(environ)
            if response is not None:
                return self.send(response, start_response)
        return self.django_app(environ, start_response)

    def answer(self, environ: dict[str, Any]) -> HttpResponse | None:
        """The response, or None when Django should take the request (nothing has been read from it)."""
        if not environ.get("HTTP_AUTHORIZATION"):
            return None  # a console session, perhaps: Django's middleware loads it
        request = WSGIRequest(environ)
        match = REGISTRY_PATH.fullmatch(request.path_info)
        if match is None:
            return None
        path, raw = views.registry_path(request.META, match["rest"] or "")
        try:
            routed = views.route(request.method or "GET", path, raw)
        except RegistryError:
            return None
        if routed[0] not in HOT_HANDLERS:
            return None
        try:
            for process_request in self.request_hooks:
                if process_request(request) is not None:
                    return None  # a redirect (HTTPS, www.): Django sends it
        except Exception:  # a refusal (bad Host, banned agent): Django turns it into its error page
            return None
        try:
            response = views.serve(request, int(match["cluster_id"]), routed)
        except Exception as failure:  # what Django's handler would answer, logged the same way
            response = response_for_exception(request, failure)
        for process_response in self.response_hooks:
            response = process_response(request, response)
        if response.status_code >= 400:
            log_response("%s: %s", response.reason_phrase, request.path, response=response, request=request)
        # Django does this when the response is closed (request_finished): drop broken or expired connections.
        close_old_connections()
        return response

    @staticmethod
    def send(response: HttpResponse, start_response: StartResponse) -> list[bytes]:
        headers = [
            *response.items(),
            *(("Set-Cookie", cookie.output(header="")) for cookie in response.cookies.values()),
        ]
        start_response(f"{response.status_code} {response.reason_phrase}", headers)
        return [response.content]
